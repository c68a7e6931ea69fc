import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderReferenceDocs } from '../../scripts/docs.ts';
import { loadCheckMetadata } from '../../src/checks/loader.ts';
import { loadDetections } from '../../src/detections/index.ts';
import type { DetectionMetadata } from '../../src/detections/types.ts';
import { FRAMEWORKS, frameworkRef, peerRefs } from '../../src/reporting/catalogue.ts';
import { coverageIndex, renderPeersMarkdown } from '../../src/reporting/compliance.ts';

/**
 * The framework catalogue (src/reporting/catalogue.ts) and the mappings of the checks' and detections' metadata: every
 * reference names an item of the catalogue (so a new check or detection citing something the catalogue lacks fails
 * here, naming it), the peers' baselines are complete, and the generated docs/detections.md and docs/peers.md are in
 * step with the metadata (regenerate with `npx tsx scripts/docs.ts`).
 */

const ROOT = join(import.meta.dirname, '..', '..');
const detection = (over: Partial<DetectionMetadata>): DetectionMetadata => ({
  id: 'test_rule',
  title: 'A test rule',
  severity: 'low',
  description: 'A rule for the compliance tests only.',
  response: 'Nothing to do: this rule exists only in a test.',
  references: ['https://example.com/'],
  frameworks: {},
  peers: [],
  recordTypes: [1],
  ...over,
});

describe('framework catalogue', () => {
  it('names every item the checks and detections cite, with the publisher’s name', async () => {
    const index = coverageIndex(
      await loadCheckMetadata(),
      loadDetections().map((d) => d.metadata),
    );
    expect(index.problems).toEqual([]);
  });

  it('reports a cited id the catalogue lacks, a wrong name, and a catalogued peer naming nothing (near-misses)', () => {
    const index = coverageIndex(
      [],
      [
        detection({
          frameworks: { 'mitre-atlas': ['AML.T9999: Invented Technique', 'AML.T0053: LLM Plugin Compromise'], 'owasp-llm-2025': ['LLM06: Excessive Agency'] },
          peers: ['Sentinel "Power Platform - DLP policy removed"', 'Prowler m365 check (any text: not a catalogued peer)'],
        }),
      ],
    );
    expect(index.problems).toEqual([
      'detection test_rule: mitre-atlas has no item AML.T9999',
      'detection test_rule: mitre-atlas AML.T0053 is "AI Agent Tool Invocation", not "LLM Plugin Compromise"',
      'detection test_rule: sentinel has no item Power Platform - DLP policy removed',
    ]);
    expect(index.covers('owasp-llm-2025', 'LLM06')).toEqual([{ kind: 'detection', id: 'test_rule', title: 'A test rule', note: null }]);
  });

  it('matches a peer by the id or quoted name at the start of the string, ScubaGear ids with or without their version', () => {
    expect(peerRefs('ScubaGear MS.POWERBI.1.1 (exceeds: names each artifact)')).toEqual([
      { framework: 'scubagear', itemId: 'MS.POWERBI.1.1v1', note: '(exceeds: names each artifact)' },
    ]);
    expect(peerRefs('ScubaGear MS.POWERPLATFORM.2.2v1')).toEqual([{ framework: 'scubagear', itemId: 'MS.POWERPLATFORM.2.2v1', note: null }]);
    // MS.POWERBI.1.10 is not MS.POWERBI.1.1: returned as written, which the index reports as missing.
    expect(peerRefs('ScubaGear MS.POWERBI.1.10')).toEqual([{ framework: 'scubagear', itemId: 'MS.POWERBI.1.10', note: null }]);
    expect(peerRefs('Maester MT.1114 + MT.1113 Copilot Studio: both').map((r) => r.itemId)).toEqual(['MT.1114', 'MT.1113']);
    expect(peerRefs('Sentinel "Power Platform - DLP policy updated or removed" (deletions alike)')).toEqual([
      { framework: 'sentinel', itemId: '1b2e6172-85c5-417a-90c3-7cc80cb787f5', note: '(deletions alike)' },
    ]);
    expect(peerRefs('Prowler #10893 asks for it')).toEqual([]);
    expect(frameworkRef('mitre-attack', 'T1098.003: Additional Cloud Roles')).toEqual({
      framework: 'mitre-attack',
      itemId: 'T1098.003',
      note: 'Additional Cloud Roles',
    });
    expect(frameworkRef('nist-ai-rmf', 'GOVERN 1.1: x')).toBeNull();
  });

  it("holds every ScubaGear Power BI and Power Platform policy, Maester's MT.1113–MT.1122 and OWASP LLM01–LLM10, ids unique", () => {
    const ids = (id: string) => FRAMEWORKS.find((f) => f.id === id)!.items.map((i) => i.id);
    expect(ids('scubagear').filter((i) => i.startsWith('MS.POWERBI.'))).toEqual(
      ['1.1', '2.1', '3.1', '4.1', '4.2', '5.1', '6.1', '7.1'].map((n) => `MS.POWERBI.${n}v1`),
    );
    expect(ids('scubagear').filter((i) => i.startsWith('MS.POWERPLATFORM.'))).toEqual(
      ['1.1', '1.2', '2.1', '2.2', '2.3', '3.1', '3.2', '4.1', '5.1', '6.1'].map((n) => `MS.POWERPLATFORM.${n}v1`),
    );
    expect(ids('maester')).toEqual(Array.from({ length: 10 }, (_, i) => `MT.${1113 + i}`));
    expect(ids('owasp-llm-2025')).toEqual(Array.from({ length: 10 }, (_, i) => `LLM${String(i + 1).padStart(2, '0')}`));
    for (const fw of FRAMEWORKS) {
      expect(new Set(fw.items.map((i) => i.id)).size, fw.id).toBe(fw.items.length);
      expect(new Set(fw.items.map((i) => i.name)).size, fw.id).toBe(fw.items.length);
    }
  });
});

describe('generated docs', () => {
  it('docs/detections.md and docs/peers.md are generated from the current metadata (run `npx tsx scripts/docs.ts`)', async () => {
    for (const { file, text } of await renderReferenceDocs()) expect(readFileSync(join(ROOT, file), 'utf8'), file).toBe(text);
  });

  it('docs/peers.md gives each peer item the Vigil equivalent, or why there is none', () => {
    const md = renderPeersMarkdown(
      [{ id: 'pp_x', title: 'X', frameworks: {}, peers: ['ScubaGear MS.POWERPLATFORM.6.1v1 (exceeds: per app)'] }],
      [detection({ peers: ['Sentinel "Copilot - Jailbreak Attempt Detected"'] })],
    );
    expect(md).toContain('| `MS.POWERPLATFORM.6.1v1` | The Share with Everyone feature SHOULD be disabled. | check `pp_x` (exceeds: per app) |');
    expect(md).toMatch(/\| `e5f6a7b8-c9d0-41e2-f3a4-b5c6d7e8f9a0` \| Copilot - Jailbreak Attempt Detected \| detection `test_rule` \|/);
    // Without a detection, the catalogue's reason shows.
    expect(renderPeersMarkdown([], [])).toMatch(/Copilot - Jailbreak Attempt Detected \| not covered yet: no rule reads/);
    expect(renderPeersMarkdown([], [])).toMatch(/\| `MS.POWERPLATFORM.6.1v1` \| The Share with Everyone feature SHOULD be disabled. \| not covered \|/);
  });
});
