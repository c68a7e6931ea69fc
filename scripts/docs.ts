// The generated reference docs: docs/checks.md (checks' metadata), docs/detections.md (detections' metadata) and
// docs/peers.md (src/reporting/catalogue.ts and both metadata), rendered from the code in-process (no store, no network).
// Run: `npx tsx scripts/docs.ts` (writes the files) or `npx tsx scripts/docs.ts --check` (exit 1 naming the stale ones).
// test/checks/library.test.ts and test/unit/compliance.test.ts fail when a committed file differs from what the
// current metadata produces, so a new check or detection needs this one command.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderChecksMarkdown } from '../src/checks/docs.ts';
import { loadChecks } from '../src/checks/loader.ts';
import { renderDetectionsMarkdown } from '../src/detections/docs.ts';
import { loadDetections } from '../src/detections/index.ts';
import { renderPeersMarkdown } from '../src/reporting/compliance.ts';

/** Each generated doc: its path from the repository root and its text as the current code renders it. */
export async function renderReferenceDocs(): Promise<{ file: string; text: string }[]> {
  const checks = await loadChecks();
  const detections = loadDetections().map((d) => d.metadata);
  return [
    { file: 'docs/checks.md', text: renderChecksMarkdown(checks) },
    { file: 'docs/detections.md', text: renderDetectionsMarkdown(detections) },
    {
      file: 'docs/peers.md',
      text: renderPeersMarkdown(
        checks.map((c) => c.metadata),
        detections,
      ),
    },
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const stale: string[] = [];
  for (const { file, text } of await renderReferenceDocs()) {
    let current = '';
    try {
      current = readFileSync(root + file, 'utf8');
    } catch {
      // absent: stale
    }
    if (current === text) continue;
    stale.push(file);
    if (!process.argv.includes('--check')) {
      writeFileSync(`${root}${file}.tmp`, text);
      renameSync(`${root}${file}.tmp`, root + file);
    }
  }
  if (process.argv.includes('--check')) {
    if (stale.length > 0) {
      process.stderr.write(`Stale: ${stale.join(', ')}. Run \`npx tsx scripts/docs.ts\`.\n`);
      process.exit(1);
    }
  } else process.stdout.write(stale.length > 0 ? `Wrote ${stale.join(', ')}.\n` : 'Up to date.\n');
}
