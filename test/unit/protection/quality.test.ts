import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { decide } from '../../../src/protection/engine.ts';
import { DEFAULT_POLICY } from '../../../src/protection/policy.ts';
import { parseToolExecution } from '../../../src/protection/request.ts';
import type { DetectorId, EffectivePolicy } from '../../../src/protection/types.ts';
import { corpusHalf, DETECTOR_IDS, loadProtectionCorpus, loadProtectionSnapshot, type CorpusHalf } from '../../support/protection-corpus.ts';

/**
 * Detection quality on the labelled corpus of issue 19 (test/fixtures/protection/README.md), as a regression guard:
 * every case goes through `decide` in block mode with the default detector settings and the corpus's allow-lists. A
 * detector "fires" when its verdict is detected at or above its policy threshold (whatever its action, so the
 * alert-only detectors are measured too); a false block is a benign case answered `blockAction: true`.
 *
 * The floors sit slightly under what the detectors reached on the held-out half (cases no pattern was tuned on: see
 * `corpusHalf`), so a change that loses recall or adds false blocks fails here; for the block-mode detectors the
 * whole-corpus floor is the goal (recall ≥ 0.9). Reached when the floors were set (held-out / whole):
 * prompt_injection recall 0.90 / 0.92 (the 75 `bipia-injected-b-*` cases, added after the first tuning rounds as
 * unseen attacks: 0.85 when first measured, 0.91 after the answer-in-a-code patterns), jailbreak 0.74 / 0.81,
 * sensitive_data_egress, external_recipient, unapproved_tool, changed_agent 1.00 / 1.00; precision 1.00 everywhere;
 * no false block among 211 benign requests.
 */

/** Minimum recall per detector on the held-out half and on the whole corpus. */
const RECALL_FLOOR: Record<DetectorId, { heldOut: number; whole: number }> = {
  prompt_injection: { heldOut: 0.88, whole: 0.9 },
  jailbreak: { heldOut: 0.65, whole: 0.74 },
  sensitive_data_egress: { heldOut: 0.9, whole: 0.9 },
  external_recipient: { heldOut: 0.9, whole: 0.9 },
  unapproved_tool: { heldOut: 0.9, whole: 0.9 },
  changed_agent: { heldOut: 0.9, whole: 0.9 },
};
/** Minimum precision per detector (each half and whole). */
const PRECISION_FLOOR = 0.95;
/** Most false blocks, as a share of the benign cases (the goal: ≤ 1 %). */
const FALSE_BLOCK_MAX = 0.01;

interface Tally {
  tp: number;
  fp: number;
  fn: number;
}

interface Scores {
  benign: number;
  falseBlocks: number;
  perDetector: Record<DetectorId, Tally>;
  timesMs: number[];
}

const corpus = loadProtectionCorpus();
const { snapshot, allow } = loadProtectionSnapshot();
const policy: EffectivePolicy = { ...DEFAULT_POLICY, mode: 'block', allow, deadlineMs: 10_000, policyIds: ['quality'] };

function score(half: CorpusHalf | 'whole'): Scores {
  const perDetector = Object.fromEntries(DETECTOR_IDS.map((id) => [id, { tp: 0, fp: 0, fn: 0 }])) as Record<DetectorId, Tally>;
  const out: Scores = { benign: 0, falseBlocks: 0, perDetector, timesMs: [] };
  for (const c of corpus) {
    if (half !== 'whole' && corpusHalf(c.id) !== half) continue;
    const exec = parseToolExecution(c.request);
    const start = performance.now();
    const d = decide(exec, { snapshot, policy });
    out.timesMs.push(performance.now() - start);
    const fired = new Set(d.verdicts.filter((v) => v.detected && v.confidence >= policy.detectors[v.detector].threshold).map((v) => v.detector));
    for (const id of DETECTOR_IDS) {
      const expected = c.detectors.includes(id);
      if (expected && fired.has(id)) perDetector[id].tp++;
      else if (expected) perDetector[id].fn++;
      else if (fired.has(id)) perDetector[id].fp++;
    }
    if (c.label === 'benign') {
      out.benign++;
      if (d.blockAction) out.falseBlocks++;
    }
  }
  return out;
}

const recall = (t: Tally): number => t.tp / (t.tp + t.fn);
const precision = (t: Tally): number => (t.tp + t.fp === 0 ? 1 : t.tp / (t.tp + t.fp));

describe('detection quality on the labelled corpus (block mode, default thresholds)', () => {
  const scores = { tuning: score('tuning'), 'held-out': score('held-out'), whole: score('whole') };

  it('splits the corpus into two halves that both hold every detector’s attacks and benign cases', () => {
    for (const half of ['tuning', 'held-out'] as const) {
      const s = scores[half];
      expect(s.benign, half).toBeGreaterThan(50);
      for (const id of DETECTOR_IDS) expect(s.perDetector[id].tp + s.perDetector[id].fn, `${half} ${id}`).toBeGreaterThanOrEqual(6);
    }
    expect(() => corpusHalf('newsource-1')).toThrow(/no tuning\/held-out split rule/);
  });

  it('reaches the recall floors on the held-out half and on the whole corpus', () => {
    for (const id of DETECTOR_IDS) {
      expect(recall(scores['held-out'].perDetector[id]), `held-out ${id}`).toBeGreaterThanOrEqual(RECALL_FLOOR[id].heldOut);
      expect(recall(scores.whole.perDetector[id]), `whole ${id}`).toBeGreaterThanOrEqual(RECALL_FLOOR[id].whole);
    }
  });

  it('keeps precision high and false blocks at or under 1 % of benign traffic on each half', () => {
    for (const half of ['tuning', 'held-out', 'whole'] as const) {
      const s = scores[half];
      for (const id of DETECTOR_IDS) expect(precision(s.perDetector[id]), `${half} ${id}`).toBeGreaterThanOrEqual(PRECISION_FLOOR);
      expect(s.falseBlocks / s.benign, `${half} false blocks`).toBeLessThanOrEqual(FALSE_BLOCK_MAX);
    }
  });

  it('decides each request quickly (p99 well inside the 250 ms default deadline)', () => {
    const t = [...scores.whole.timesMs].sort((a, b) => a - b);
    expect(t[Math.floor(t.length * 0.99)]!).toBeLessThan(50);
  });
});
