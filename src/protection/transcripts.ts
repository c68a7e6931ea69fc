import type { Kysely } from 'kysely';
import type { DetectionInfo } from '../exports/ocsf.ts';
import type { Logger } from '../platform/log/index.ts';
import { deliverAfterCommit, enqueueAlerts, type Sinks } from '../sinks/index.ts';
import { nowIso } from '../store/db.ts';
import { raiseAlerts, type AlertInput } from '../store/repositories/audit.ts';
import { pendingTurns, saveTurnEvaluations, type TranscriptTurnRow, type TurnEvaluation } from '../store/repositories/transcripts.ts';
import type { Database } from '../store/schema.ts';
import { storableText } from '../store/text.ts';
import { injectionMarkers } from './detectors/prompt_injection.ts';
import { jailbreakMarkers } from './detectors/jailbreak.ts';
import type { TextMarkers } from './detectors/helpers.ts';

/**
 * The post-processing of Copilot Studio conversation transcripts (the `conversationTranscripts` stream, turns in
 * `transcript_turns`): after each collection, every turn not evaluated yet is scanned once with the runtime-protection
 * detectors' markers — a user message for jailbreak and prompt-injection patterns, a tool call's text (thought,
 * arguments, observation: where retrieved content lands) for injection patterns — and the transcript alerts are raised
 * through the alert pipeline (`alerts`, sinks' outbox), in the transaction that stamps the turns evaluated.
 *
 * Why not Detection rules (src/detections): those run over Office 365 audit events by record type, with a watermark on
 * ingestion; transcript turns are no audit events, and the secret / personal-data facts are already on each turn
 * (inspected when collected). Raising here keeps one pass per turn, crash-safe (a turn is marked evaluated in the
 * transaction that stores its alerts; a crash before it evaluates it again, and alerts are raised once by their
 * dedupe key), with the same `alerts` rows, severities and sinks as every other alert.
 *
 * The scans read the stored text, in which secrets and personal data are already masked: the patterns look for
 * instructions, not for the masked values.
 */

/** A transcript alert rule: its metadata (as sinks and the OCSF mapping read it) and its severity. */
interface TranscriptRule extends DetectionInfo {
  id: 'transcript_sensitive_data' | 'transcript_injection_marker';
}

/** A secret or personal data sent to an agent (or written back by it) in a Copilot Studio conversation. */
const SENSITIVE_DATA: TranscriptRule = {
  id: 'transcript_sensitive_data',
  title: 'Secret or personal data in a Copilot Studio conversation',
  description:
    "A user sent an agent a secret (cloud key, token, private key, password in a connection string) or personal data (payment card, national identifier, IBAN, e-mail addresses in bulk), or the agent's reply or a tool it called carried one, as the conversation transcript shows. The data now sits in the agent's transcripts and in whatever the agent passed it to.",
  response:
    'Rotate any secret the conversation exposed; ask the user not to paste credentials or personal data into agents; review who can read the environment’s conversation transcripts and the agent’s tools; consider a DLP or content-moderation setting for the agent.',
  references: [
    'https://learn.microsoft.com/power-apps/developer/data-platform/reference/entities/conversationtranscript',
    'https://genai.owasp.org/llmrisk/llm022025-sensitive-information-disclosure/',
  ],
};

/** Prompt-injection or jailbreak markers in a Copilot Studio conversation. */
const INJECTION_MARKER: TranscriptRule = {
  id: 'transcript_injection_marker',
  title: 'Prompt injection or jailbreak in a Copilot Studio conversation',
  description:
    "A user's message to an agent carried jailbreak or prompt-injection markers (instruction overrides, DAN / developer mode, system-prompt extraction, chat-template mockups), or a tool's output the agent read carried injected instructions, as the conversation transcript shows (the runtime-protection detectors' patterns, at their detection threshold).",
  response:
    "Read the conversation's turns (`vigil protection conversation`); check what the agent did after the marked turn (tool calls, replies); if the agent followed the instructions, quarantine it and review its tools and knowledge sources; enable runtime protection for the environment.",
  references: [
    'https://genai.owasp.org/llmrisk/llm01-prompt-injection/',
    'https://atlas.mitre.org/techniques/AML.T0051',
    'https://atlas.mitre.org/techniques/AML.T0054',
  ],
};

/** Turns evaluated per transaction. */
const PAGE = 500;

/** Outcome of {@link evaluateTranscripts}. */
export interface TranscriptEvaluation {
  /** Turns scanned in this pass. */
  turns: number;
  alertsRaised: number;
  byRule: Record<string, number>;
}

/** The markers of one turn: jailbreak and injection for user messages, injection for tool calls, none for bot replies. */
function markersOf(t: TranscriptTurnRow): { injection: TextMarkers | null; jailbreak: TextMarkers | null } {
  if (t.role === 'user') return { injection: injectionMarkers(t.text, 'transcript.user'), jailbreak: jailbreakMarkers(t.text, 'transcript.user') };
  if (t.role === 'tool') return { injection: injectionMarkers(t.text, 'transcript.tool'), jailbreak: null };
  return { injection: null, jailbreak: null };
}

const WHO: Record<string, string> = { user: 'sent by the user', bot: "in the agent's reply", tool: 'in a tool call' };

function findingTypes(t: TranscriptTurnRow): string[] {
  try {
    return JSON.parse(t.finding_types) as string[];
  } catch {
    return [];
  }
}

/**
 * The alerts of one page of evaluated turns: one per conversation and rule (for sensitive data, per speaker and kind:
 * secret or personal data).
 */
function alertsOf(integrationId: string, page: { turn: TranscriptTurnRow; injection: TextMarkers | null; jailbreak: TextMarkers | null }[]) {
  const grouped = new Map<string, { rule: TranscriptRule; severity: string; turns: typeof page; key: string }>();
  const add = (rule: TranscriptRule, severity: string, key: string, item: (typeof page)[number]) => {
    const g = grouped.get(`${rule.id}\u0000${key}`) ?? { rule, severity, turns: [], key };
    if (severity === 'high') g.severity = 'high';
    g.turns.push(item);
    grouped.set(`${rule.id}\u0000${key}`, g);
  };
  for (const item of page) {
    const t = item.turn;
    const conversation = `${t.environment_id}|${t.conversation_id ?? t.transcript_id}`;
    // One alert per conversation, speaker and kind: personal data seen first does not hide a secret sent later.
    if (t.secrets > 0) add(SENSITIVE_DATA, 'high', `${conversation}|${t.role}|secret`, item);
    if (t.personal > 0) add(SENSITIVE_DATA, 'medium', `${conversation}|${t.role}|personal`, item);
    if (item.injection?.detected || item.jailbreak?.detected) add(INJECTION_MARKER, 'high', conversation, item);
  }
  const out: { input: AlertInput; info: DetectionInfo }[] = [];
  for (const g of grouped.values()) {
    const first = g.turns[0]!.turn;
    const agent = first.agent_name ?? first.agent_id ?? 'an agent';
    const times = g.turns
      .map((x) => x.turn.turn_at)
      .filter((x): x is string => !!x)
      .sort();
    const types = [...new Set(g.turns.flatMap((x) => findingTypes(x.turn)))].sort();
    const markers = [
      ...new Set(g.turns.flatMap((x) => [...(x.jailbreak?.detected ? x.jailbreak.names : []), ...(x.injection?.detected ? x.injection.names : [])])),
    ];
    const title =
      g.rule === SENSITIVE_DATA
        ? `${g.key.endsWith('|secret') ? 'Secret' : 'Personal data'} ${WHO[first.role] ?? ''} in a conversation with ${agent} (${types.join(', ')})`
        : `${g.turns.some((x) => x.jailbreak?.detected) ? 'Jailbreak' : 'Prompt injection'} markers in a conversation with ${agent} (${markers.join(', ')})`;
    out.push({
      input: {
        integrationId,
        ruleId: g.rule.id,
        severity: g.severity,
        title: storableText(title).slice(0, 500),
        dedupeKey: storableText(g.key),
        detail: {
          source: 'transcript',
          environmentId: first.environment_id,
          conversationId: first.conversation_id,
          transcriptIds: [...new Set(g.turns.map((x) => x.turn.transcript_id))],
          agentId: first.agent_id,
          agentName: first.agent_name,
          userId: first.user_id,
          channelId: first.channel_id,
          turnIds: g.turns.map((x) => x.turn.id),
          roles: [...new Set(g.turns.map((x) => x.turn.role))],
          ...(g.rule === SENSITIVE_DATA
            ? {
                findingTypes: types,
                secrets: g.turns.reduce((n, x) => n + x.turn.secrets, 0),
                personal: g.turns.reduce((n, x) => n + x.turn.personal, 0),
              }
            : {
                markers,
                evidence: g.turns.flatMap((x) => [...(x.jailbreak?.evidence ?? []), ...(x.injection?.evidence ?? [])]).slice(0, 5),
              }),
        },
        windowStart: times[0] ?? null,
        windowEnd: times.at(-1) ?? null,
      },
      info: g.rule,
    });
  }
  return out;
}

/**
 * Evaluates the integration's transcript turns not evaluated yet (pages of 500): stores their markers and raises the
 * transcript alerts ({@link SENSITIVE_DATA}, {@link INJECTION_MARKER}), each page in one transaction; with sinks, the
 * new alerts are queued in that transaction and delivered at the end.
 * @returns the turns scanned and the alerts raised per rule.
 */
export async function evaluateTranscripts(
  db: Kysely<Database>,
  integrationId: string,
  sinks?: { sinks: Sinks | undefined; tenantId?: string; logger?: Logger },
): Promise<TranscriptEvaluation> {
  const result: TranscriptEvaluation = { turns: 0, alertsRaised: 0, byRule: {} };
  for (;;) {
    const rows = await pendingTurns(db, integrationId, PAGE);
    if (rows.length === 0) break;
    result.turns += rows.length;
    const page = rows.map((turn) => ({ turn, ...markersOf(turn) }));
    const evaluations: TurnEvaluation[] = page.map(({ turn, injection, jailbreak }) => {
      const seen = [injection, jailbreak].filter((m): m is TextMarkers => m !== null && m.names.length > 0);
      return {
        environmentId: turn.environment_id,
        id: turn.id,
        injection: injection?.confidence ?? 0,
        jailbreak: jailbreak?.confidence ?? 0,
        markers: seen.length
          ? JSON.stringify({
              injection: injection?.names.length ? { confidence: injection.confidence, names: injection.names, evidence: injection.evidence } : undefined,
              jailbreak: jailbreak?.names.length ? { confidence: jailbreak.confidence, names: jailbreak.names, evidence: jailbreak.evidence } : undefined,
            })
          : null,
      };
    });
    const alerts = alertsOf(integrationId, page);
    const out = sinks?.sinks;
    const created = await db.transaction().execute(async (trx) => {
      const at = nowIso();
      await saveTurnEvaluations(trx, integrationId, evaluations, at);
      if (alerts.length === 0) return [];
      const raised = await raiseAlerts(
        trx,
        alerts.map((a) => a.input),
        () => at,
      );
      const fresh = raised.flatMap((alert, i) => (alert ? [{ alert, detection: alerts[i]!.info }] : []));
      if (out && fresh.length) await enqueueAlerts(trx, fresh, { sinks: out.names, product: out.product, tenantId: sinks?.tenantId });
      return fresh;
    });
    for (const { detection } of created) {
      result.alertsRaised++;
      result.byRule[detection.id] = (result.byRule[detection.id] ?? 0) + 1;
    }
  }
  await deliverAfterCommit(sinks?.sinks, db, sinks?.logger);
  return result;
}
