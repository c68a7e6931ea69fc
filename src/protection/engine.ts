import { performance } from 'node:perf_hooks';
import { PROTECTION_DETECTORS } from './detectors/index.ts';
import type {
  Decision,
  DetectorContext,
  DetectorId,
  DetectorSetting,
  EffectivePolicy,
  ProtectionDetector,
  ProtectionSnapshot,
  ToolExecution,
  Verdict,
} from './types.ts';

/**
 * The `reasonCode` Copilot Studio receives (`analyze-tool-execution` answers `{blockAction, reasonCode, reason}`,
 * https://learn.microsoft.com/microsoft-copilot-studio/external-security-webhooks-interface-developers): 0 allowed,
 * 101–106 the detector that decided a block, 900 the internal deadline ran out, 901 a detector failed.
 */
export const REASON_CODES = {
  allowed: 0,
  prompt_injection: 101,
  jailbreak: 102,
  sensitive_data_egress: 103,
  external_recipient: 104,
  unapproved_tool: 105,
  changed_agent: 106,
  timeout: 900,
  error: 901,
} as const satisfies Record<DetectorId | 'allowed' | 'timeout' | 'error', number>;

/** What {@link decide} needs besides the request. */
export interface DecideContext {
  snapshot: ProtectionSnapshot;
  policy: EffectivePolicy;
  /** Milliseconds, monotonic; `performance.now` by default (tests pass a fake). */
  clock?: () => number;
}

const now = (): number => performance.now();
const RECORD_ONLY: DetectorSetting = { action: 'record', threshold: 1 };

/**
 * Decides one `analyze-tool-execution` call: runs the detectors in order (skipping those whose action is `off`),
 * reading the clock after each.
 * - A detector whose action is `block` and whose verdict is detected at or above its threshold blocks; of several,
 *   the highest confidence decides (the earlier detector on a tie). Reason code 101–106 ({@link REASON_CODES}).
 * - The deadline (`policy.deadlineMs` since the start) passed with detectors left → they are skipped, `timedOut`,
 *   and the answer is `policy.onTimeout` (reason code 900) — unless a detector that ran already decided a block.
 * - A detector that throws → its verdict is not counted, and the answer is `onTimeout` with reason code 901 unless
 *   another detector decided a block. The error itself is not recorded (it may quote request content).
 * - `monitor` mode answers `blockAction: false` always; `wouldBlock` (and the reason code) say what block mode
 *   would have answered.
 * `reason` names the detector's title, its confidence and the policy id (never request content). Synchronous; never
 * throws.
 */
export function decide(exec: ToolExecution, ctx: DecideContext, detectors: readonly ProtectionDetector[] = PROTECTION_DETECTORS): Decision {
  const clock = ctx.clock ?? now;
  const { policy } = ctx;
  const start = clock();
  const dctx: DetectorContext = { snapshot: ctx.snapshot, allow: policy.allow };
  const verdicts: Verdict[] = [];
  const skipped: DetectorId[] = [];
  let failed: DetectorId | null = null;
  let timedOut = false;
  let blocker: { detector: ProtectionDetector; verdict: Verdict } | null = null;

  // A detector the policy does not list (none today: `detectors` is a record over DetectorId) is recorded only.
  const settingOf = (id: DetectorId): DetectorSetting => policy.detectors[id] ?? RECORD_ONLY;
  const active = detectors.filter((d) => settingOf(d.id).action !== 'off');
  for (let i = 0; i < active.length; i++) {
    const d = active[i]!;
    let verdict: Verdict | null = null;
    try {
      verdict = d.run(exec, dctx);
    } catch {
      failed ??= d.id;
    }
    if (verdict) {
      verdicts.push(verdict);
      const setting = settingOf(d.id);
      if (
        setting.action === 'block' &&
        verdict.detected &&
        verdict.confidence >= setting.threshold &&
        (!blocker || verdict.confidence > blocker.verdict.confidence)
      ) {
        blocker = { detector: d, verdict };
      }
    }
    if (i < active.length - 1 && clock() - start > policy.deadlineMs) {
      timedOut = true;
      for (const rest of active.slice(i + 1)) skipped.push(rest.id);
      break;
    }
  }

  const policyName = policy.policyIds[0] ?? 'default';
  const monitor = policy.mode === 'monitor';
  let block: boolean;
  let reasonCode: number;
  let reason: string;
  if (blocker) {
    block = true;
    reasonCode = REASON_CODES[blocker.detector.id] ?? REASON_CODES.error;
    reason = `${blocker.detector.title} (confidence ${blocker.verdict.confidence.toFixed(2)}) under policy ${policyName}`;
  } else if (timedOut || failed) {
    block = policy.onTimeout === 'block';
    reasonCode = timedOut ? REASON_CODES.timeout : REASON_CODES.error;
    const what = timedOut ? `Decision budget of ${policy.deadlineMs} ms ran out` : `Detector ${failed} failed`;
    reason = `${what}: ${policy.onTimeout} by policy ${policyName}`;
  } else {
    block = false;
    reasonCode = REASON_CODES.allowed;
    reason = `Allowed under policy ${policyName}`;
  }
  if (block) reason = monitor ? `Monitor mode, would block: ${reason}` : `Blocked: ${reason}`;
  return {
    blockAction: block && !monitor,
    wouldBlock: block && monitor,
    reasonCode,
    reason,
    decidedBy: blocker ? blocker.detector.id : null,
    verdicts,
    policyIds: policy.policyIds,
    mode: policy.mode,
    timedOut,
    skipped,
    elapsedMs: Math.max(0, clock() - start),
  };
}
