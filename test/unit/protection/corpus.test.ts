/**
 * The labelled runtime-protection corpus (issue 19; `test/fixtures/protection/`, README there): every line is a
 * well-formed `analyze-tool-execution` body with a valid label, the counts meet the floor (≥ 300 cases, ≥ 40 %
 * benign, attacks for all six detectors), every source is described, and the labels agree with the snapshot they
 * assume — so that `npm run bench:protect` measures the detectors, not mistakes in the labels.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type CorpusCase, DETECTOR_IDS, loadProtectionCorpus, loadProtectionSnapshot, PROTECTION_CORPUS_DIR } from '../../support/protection-corpus.ts';

const cases = loadProtectionCorpus();
const { snapshot, allow } = loadProtectionSnapshot();
const readme = readFileSync(`${PROTECTION_CORPUS_DIR}README.md`, 'utf8');

const toolOf = (c: CorpusCase) => snapshot.agents.get(c.request.conversationMetadata.agent.id)?.tools.find((t) => t.schemaName === c.request.toolDefinition.id);
const attacksOf = (d: string) => cases.filter((c) => c.detectors.includes(d as CorpusCase['detectors'][number]));

/** Addresses the tool sends to, from the recipient parameters the corpus's tools declare. */
function recipients(c: CorpusCase): string[] {
  const v = c.request.inputValues;
  return ['To', 'Cc', 'to', 'recipient', 'requiredAttendees']
    .map((k) => v[k])
    .filter((x): x is string => typeof x === 'string')
    .flatMap((x) => x.split(/[;,]/))
    .map((x) => x.trim().toLowerCase())
    .filter((x) => x.includes('@'));
}
const internal = new Set([...snapshot.tenantDomains, ...allow.internalDomains]);

describe('protection corpus: shape', () => {
  it('parses every line into a case with a documented request body (the loader throws on the first bad line)', () => {
    expect(cases.length).toBeGreaterThan(0);
    expect(() => loadProtectionCorpus(fileURLToPath(new URL('../../../package.json', import.meta.url)))).toThrow(/package\.json:1: not/);
  });

  it('has unique ids and consistent labels (benign: no detector; attack: at least one, none twice)', () => {
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
    for (const c of cases) {
      if (c.label === 'benign') expect(c.detectors, c.id).toEqual([]);
      else expect(c.detectors.length, c.id).toBeGreaterThan(0);
      expect(new Set(c.detectors).size, c.id).toBe(c.detectors.length);
    }
  });

  it('meets the floor: ≥ 300 cases, ≥ 40 % benign, ≥ 10 attacks for each of the six detectors', () => {
    expect(cases.length).toBeGreaterThanOrEqual(300);
    expect(cases.filter((c) => c.label === 'benign').length / cases.length).toBeGreaterThanOrEqual(0.4);
    for (const d of DETECTOR_IDS) expect(attacksOf(d).length, d).toBeGreaterThanOrEqual(10);
  });

  it('takes injection and jailbreak attacks from the public datasets, not from text written for Vigil', () => {
    for (const c of [...attacksOf('prompt_injection'), ...attacksOf('jailbreak')]) expect(c.source, c.id).not.toBe('vigil-synthetic');
  });

  it('describes every source key in the README, and the README lists no key the corpus lacks', () => {
    const described = new Set([...readme.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]));
    expect(new Set(cases.map((c) => c.source))).toEqual(described);
  });

  it('is what the generator produces from the committed sources, and stays under 2 MB', () => {
    const script = fileURLToPath(new URL('../../../scripts/build-protection-corpus.ts', import.meta.url));
    expect(() => execFileSync(process.execPath, ['--import', 'tsx', script, '--check'], { stdio: 'pipe' })).not.toThrow();
    expect(statSync(`${PROTECTION_CORPUS_DIR}tool-executions.jsonl`).size).toBeLessThan(2 * 1024 * 1024);
  });
});

describe('protection corpus: labels agree with the snapshot', () => {
  it('names one tenant, and only agents the snapshot knows', () => {
    const tenants = new Set(cases.flatMap((c) => [c.request.conversationMetadata.agent.tenantId, c.request.conversationMetadata.user.tenantId]));
    expect(tenants.size).toBe(1);
    for (const c of cases) expect(snapshot.agents.has(c.request.conversationMetadata.agent.id), c.id).toBe(true);
  });

  it('labels changed_agent exactly the tools missing from the agent’s last collected inventory', () => {
    for (const c of cases) expect(c.detectors.includes('changed_agent'), c.id).toBe(toolOf(c) === undefined);
  });

  it('labels unapproved_tool exactly the MCP tools whose server is not on the allow-list', () => {
    for (const c of cases) {
      const tool = toolOf(c);
      const unapproved = tool?.kind === 'mcp' && !allow.mcpServers.includes(tool.serverHost ?? '');
      expect(c.detectors.includes('unapproved_tool'), c.id).toBe(unapproved);
    }
  });

  it('labels external_recipient exactly the sends to an outside domain the user did not name', () => {
    for (const c of cases) {
      const chosen = recipients(c).filter((r) => !internal.has(r.split('@')[1]!) && !c.request.plannerContext.userMessage.toLowerCase().includes(r));
      expect(c.detectors.includes('external_recipient'), c.id).toBe(chosen.length > 0);
    }
  });
});
