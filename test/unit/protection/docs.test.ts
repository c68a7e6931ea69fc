import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROTECTION_DETECTORS } from '../../../src/protection/detectors/index.ts';
import { DEFAULT_POLICY } from '../../../src/protection/policy.ts';
import { REASON_CODES } from '../../../src/protection/engine.ts';

const doc = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'protection.md'), 'utf8');

describe('docs/protection.md follows the detectors', () => {
  it('has a row per detector with its default action and threshold and every mapping id', () => {
    for (const d of PROTECTION_DETECTORS) {
      const row = doc.split('\n').find((l) => l.startsWith(`| \`${d.id}\` |`));
      expect(row, d.id).toBeDefined();
      const setting = DEFAULT_POLICY.detectors[d.id];
      expect(row, d.id).toContain(`${setting.action} at ${setting.threshold}`);
      for (const m of d.mappings) expect(row, `${d.id} ${m}`).toContain(m.split(' ')[0]);
    }
  });

  it("lists each detector's reason code", () => {
    for (const d of PROTECTION_DETECTORS) expect(doc).toContain(`${REASON_CODES[d.id]} ${d.id}`);
  });
});
