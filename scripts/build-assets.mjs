// Copies the data files the compiled CLI reads beside its modules into dist/ (tsc emits only JavaScript): each
// check's metadata.json (src/checks/<area>/<id>/metadata.json, read by the check loader). Run by `npm run build:js`.
import { cpSync, statSync } from 'node:fs';

cpSync('src/checks', 'dist/src/checks', { recursive: true, filter: (path) => statSync(path).isDirectory() || path.endsWith('/metadata.json') });
