import { describe, expect, it } from 'vitest';
import { PROTECTION_DETECTORS } from '../../../src/protection/detectors/index.ts';
import type { ToolExecution } from '../../../src/protection/types.ts';
import { agent, ctx, exec, snapshot, tool } from './fixtures.ts';

/** Texts built to make a backtracking regex explode: long runs of almost-matches. */
const ADVERSARIAL = [
  'ignore '.repeat(80_000),
  'ignore all all all all the the the your '.repeat(14_000),
  '![a](http://x.example/?'.repeat(25_000) + '=',
  '[x](https://a.example/p?q=' + 'A'.repeat(530_000),
  'send to send to '.repeat(34_000),
  'a'.repeat(530_000) + '@',
  '\u200B\u200B'.repeat(260_000),
  'do anything '.repeat(45_000),
  'pretend pretend '.repeat(33_000),
  'decode decode and '.repeat(30_000),
  'https://'.repeat(66_000),
  '<|im_start'.repeat(52_000),
  '1 '.repeat(262_000),
];

describe('the detector registry', () => {
  it('has one detector per id, each with a title, a description and OWASP and MITRE ATLAS mappings', () => {
    expect(PROTECTION_DETECTORS.map((d) => d.id).sort()).toEqual(
      ['changed_agent', 'external_recipient', 'jailbreak', 'prompt_injection', 'sensitive_data_egress', 'unapproved_tool'].sort(),
    );
    for (const d of PROTECTION_DETECTORS) {
      expect(d.title.length, d.id).toBeGreaterThan(5);
      expect(d.description.length, d.id).toBeGreaterThan(40);
      expect(
        d.mappings.some((m) => /^LLM(0[1-9]|10):2025 /.test(m)),
        d.id,
      ).toBe(true);
      expect(
        d.mappings.some((m) => /^AML\.T\d{4}(\.\d{3})? /.test(m)),
        d.id,
      ).toBe(true);
    }
  });

  it('returns on 512 KiB of adversarial text in every field (linear patterns: no catastrophic backtracking)', () => {
    const snap = snapshot([agent([tool({ kind: 'mcp', schemaName: 'x', serverHost: 'a.example' })])]);
    for (const text of ADVERSARIAL) {
      // Built by hand, past the request's caps: the detectors must stay linear even on more than the parser lets through.
      const base = exec();
      const e: ToolExecution = {
        ...base,
        userMessage: text,
        thought: `"${text}`,
        chatHistory: [{ id: '1', role: 'user', content: text, timestamp: null }],
        previousOutputs: [{ toolId: 't', toolName: 't', outputs: [{ name: 'v', value: text }], timestamp: null }],
        tool: { ...base.tool, description: text },
        inputs: { To: text, Body: text, url: text },
      };
      for (const d of PROTECTION_DETECTORS) {
        const v = d.run(e, ctx(snap));
        expect(v.detector, `${d.id} on ${text.slice(0, 20)}`).toBe(d.id);
        for (const ev of v.evidence) expect(ev.excerpt.length).toBeLessThanOrEqual(160);
      }
    }
  }, 120_000);
});
