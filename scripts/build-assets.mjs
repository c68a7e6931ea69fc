// Copies the data files the compiled CLI reads beside its modules into dist/ (tsc emits only JavaScript): each
// check's metadata.json (src/checks/<area>/<id>/metadata.json, read by the check loader), and the API documentation
// page's stylesheet and script (src/api/docs-theme.{css,js}, read by src/api/server.ts). Run by `npm run build:js`.
import { cpSync, statSync } from 'node:fs';

cpSync('src/checks', 'dist/src/checks', { recursive: true, filter: (path) => statSync(path).isDirectory() || path.endsWith('/metadata.json') });
for (const file of ['docs-theme.css', 'docs-theme.js']) cpSync(`src/api/${file}`, `dist/src/api/${file}`);
