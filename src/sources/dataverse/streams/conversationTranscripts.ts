import type { Collected } from '../../../core/inventory.ts';
import { num, objOrNull, str, type Json } from '../../../core/json.ts';
import type { MatchType } from '../../../core/types.ts';
import { inspectText, type InspectionResult } from '../../../inspection/index.ts';
import { listPages } from '../../odata.ts';
import type { Slice, Stream, StreamContext, StreamPage } from '../../stream.ts';
import { dataverseResource, entityRequest, environmentSlice } from '../entity.ts';

/**
 * Copilot Studio conversation transcripts per environment with Dataverse (the Graph interaction history does not hold
 * Copilot Studio agents' conversations: CoE starter kit issue #10977):
 * `GET {org}/api/data/v9.2/conversationtranscripts?$select=…`, paged with `Prefer: odata.maxpagesize` (at most 100
 * here: each row carries a whole conversation) and `@odata.nextLink`. Incremental by modification time: the last page
 * of a round carries a "delta link" (the first page's URL with `$filter=modifiedon gt {latest modifiedon seen}`), which
 * the engine stores per environment and starts the next round from; transcripts are history (`retain`), never marked
 * deleted. An environment without the table (Dataverse answers 404 `0x8006088a` "Resource not found for the segment
 * 'conversationtranscripts'", when the Copilot Studio solutions are not installed) or without access is recorded as an
 * errored slice (a coverage gap, "not evaluated"), as for the other Dataverse streams; an environment without Dataverse
 * has no slice.
 *
 * Each transcript's `content` (a JSON string `{"activities":[…]}` of Bot Framework activities) becomes one record per
 * turn: a user message (`type: message`, `from.role` 1 or `user`), a bot reply (`from.role` 0 or `bot`) and a tool
 * call of the orchestrator's plan (events `DynamicPlanStepTriggered` / `DynamicPlanStepBindUpdate` /
 * `DynamicPlanStepFinished` of one `stepId`: the tool `taskDialogId`, the planner's `thought`, the `arguments` and
 * the `observation`). Every turn's text is inspected (`src/inspection`: secrets, personal data) here, before anything is
 * stored: the record holds the masked text and the counts only, and `raw` the activity's shape without any text.
 *
 * Sources: learn.microsoft.com `/power-apps/developer/data-platform/webapi/reference/conversationtranscript` (entity set,
 * `content` "Content of the conversation", `conversationstarttime`, `metadata`, `modifiedon`, `createdon`,
 * `schematype`, `schemaversion`, lookup `bot_conversationtranscriptid` read as `_bot_conversationtranscriptid_value`);
 * the activity shapes (timestamps in Unix seconds, `from.role` 0 = bot / 1 = user, `metadata`
 * `{BotId, BotName, AADTenantId, BatchId}`, `name` `{conversationId}_{botId}`, plan-step events) from a public
 * catalogue of 1,549 real Copilot Studio transcripts ("Transcript Content Patterns Reference", found through the code
 * index; its repository was not identified); Bot Framework Activity schema (`from.role` `user` / `bot`, ISO timestamps).
 * UNCONFIRMED: that `modifiedon` moves when Copilot Studio rewrites a transcript (a transcript written again under a
 * new id is read as new); that the conversation id (first activity's `conversation.id`, else the `name` prefix) equals
 * the `conversationId` the threat-detection webhook receives; a transcript stored later with a `modifiedon` at or
 * before the latest one seen is not read by the next round.
 */

/** Who spoke: the user, the agent, or a tool the agent's plan called. */
type TurnRole = 'user' | 'bot' | 'tool';

/** One turn of a Copilot Studio conversation transcript (stored in `transcript_turns`, migration 0017). */
export interface TranscriptTurn extends Collected {
  /** The environment (the slice). */
  environmentId: string;
  /** `{conversationtranscriptid}:{index}`: the index of the turn's (first) activity in `content.activities`. */
  id: string;
  transcriptId: string;
  /** The first activity's `conversation.id`, else the prefix of `name` before `_`, else the transcript id. */
  conversationId: string;
  /** `_bot_conversationtranscriptid_value`: the agent (bot) the transcript belongs to. */
  agentId: string | null;
  /** `metadata.BotName`: the agent's schema name. */
  agentName: string | null;
  /** The user: `from.aadObjectId` (else `from.id`) of the first user activity. */
  userId: string | null;
  /** `channelId` of the first activity that has one (`msteams`, `webchat`, `pva-studio`, `pva-autonomous`, …). */
  channelId: string | null;
  /** ISO 8601 UTC, from the activity's `timestamp` (Unix seconds or ISO), else the conversation's start. */
  at: string | null;
  role: TurnRole;
  /** Tool turns: the plan step's `taskDialogId` (`MCP:…`, `P:UniversalSearchTool`, `{agent}.action.{Connector}-{Action}`). */
  toolName: string | null;
  /** The turn's text with every secret and personal-data finding masked (`[REDACTED:{type}]`), at most 8,000 characters. */
  text: string;
  /** Length of the text before masking, characters (UTF-16 code units). */
  textLength: number;
  /** Secret findings of the inspection. */
  secrets: number;
  /** Personal-data findings of the inspection. */
  personal: number;
  /** Distinct finding types, sorted. */
  findingTypes: MatchType[];
  /** The transcript's `modifiedon` (ISO 8601 UTC). */
  transcriptModifiedOn: string | null;
}

/** Fields of `conversationtranscript` read by Vigil. */
const TRANSCRIPT_FIELDS =
  'conversationtranscriptid,name,content,conversationstarttime,metadata,schematype,schemaversion,_bot_conversationtranscriptid_value,createdon,modifiedon';

/** Most characters of a turn's stored (masked) text. */
const TEXT_MAX = 8000;

/** Most transcripts per page: a row holds a whole conversation (often tens of kilobytes). */
const PAGE_MAX = 100;

const ENTITY_SET = 'conversationtranscripts';

/** ISO 8601 UTC of an activity timestamp: Unix seconds (Copilot Studio transcripts) or an ISO string; null otherwise. */
function isoTime(v: unknown): string | null {
  if (typeof v === 'number' && Number.isFinite(v)) return new Date(v < 1e11 ? v * 1000 : v).toISOString();
  if (typeof v === 'string' && v !== '') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? null : new Date(t).toISOString();
  }
  return null;
}

/** `from.role` as a role: 1 / `user` → user, 0 / `bot` → bot (Copilot Studio stores numbers, Bot Framework strings). */
function roleOf(from: Json | null): 'user' | 'bot' | null {
  const r = from?.role;
  if (r === 1 || r === 'user') return 'user';
  if (r === 0 || r === 'bot') return 'bot';
  return null;
}

/** A value as text for inspection: strings as they are, anything else as compact JSON; '' for null and undefined. */
function asText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v);
  } catch {
    return '';
  }
}

/** A turn before inspection. */
interface RawTurn {
  index: number;
  role: TurnRole;
  at: string | null;
  toolName: string | null;
  parts: string[];
  shape: Json;
}

/** The parsed `content.activities`, or null when `content` is not the documented JSON. */
function activitiesOf(content: string | null): Json[] | null {
  if (!content) return null;
  try {
    const parsed = JSON.parse(content) as unknown;
    const list = objOrNull(parsed)?.activities;
    return Array.isArray(list) ? (list.filter((a) => objOrNull(a) !== null) as Json[]) : null;
  } catch {
    return null;
  }
}

/**
 * The turns of one `conversationtranscript` row (Web API JSON with {@link TRANSCRIPT_FIELDS}) of an environment, each
 * inspected and masked. A transcript whose `content` is not `{"activities":[…]}` JSON, or holds no message and no plan
 * step, gives no turn.
 */
export function toTurns(j: Json, environmentId: string): TranscriptTurn[] {
  const transcriptId = String(j.conversationtranscriptid);
  const activities = activitiesOf(str(j.content)) ?? [];
  let metadata: Json | null = null;
  try {
    metadata = objOrNull(JSON.parse(str(j.metadata) ?? 'null'));
  } catch {
    metadata = null;
  }
  const name = str(j.name);
  const conversationId =
    activities.map((a) => str(objOrNull(a.conversation)?.id)).find((id) => id !== null) ?? (name?.includes('_') ? name.split('_')[0]! : null) ?? transcriptId;
  const userFrom = activities.map((a) => objOrNull(a.from)).find((f) => roleOf(f) === 'user') ?? null;
  const userId = str(userFrom?.aadObjectId) ?? str(userFrom?.id);
  const channelId = activities.map((a) => str(a.channelId)).find((c) => c !== null) ?? null;
  const start = isoTime(j.conversationstarttime);
  const turns: RawTurn[] = [];
  const steps = new Map<string, RawTurn>();
  activities.forEach((a, index) => {
    const type = str(a.type);
    const at = isoTime(a.timestamp) ?? start;
    const shape: Json = { type, id: str(a.id), name: str(a.name), role: num(objOrNull(a.from)?.role) ?? str(objOrNull(a.from)?.role), timestamp: at };
    if (type === 'message') {
      const role = roleOf(objOrNull(a.from));
      const text = str(a.text) ?? '';
      if (!role || text === '') return;
      turns.push({ index, role, at, toolName: null, parts: [text], shape: { ...shape, replyToId: str(a.replyToId) } });
      return;
    }
    if (type !== 'event') return;
    const value = objOrNull(a.value);
    const stepId = str(value?.stepId);
    if (!stepId) return;
    let step = steps.get(stepId);
    if (a.name === 'DynamicPlanStepTriggered') {
      if (!step) {
        step = { index, role: 'tool', at, toolName: str(value?.taskDialogId), parts: [], shape: { ...shape, stepId, stepType: str(value?.type) } };
        steps.set(stepId, step);
        turns.push(step);
      }
      const thought = str(value?.thought);
      if (thought) step.parts.push(`thought: ${thought}`);
    } else if (step && a.name === 'DynamicPlanStepBindUpdate') {
      if (value?.arguments !== undefined) step.parts.push(`arguments: ${asText(value.arguments)}`);
    } else if (step && a.name === 'DynamicPlanStepFinished') {
      if (value?.observation !== undefined && value.observation !== null) step.parts.push(`observation: ${asText(value.observation)}`);
      step.shape.state = str(value?.state);
    }
  });
  const modifiedOn = isoTime(j.modifiedon);
  return turns.map((t): TranscriptTurn => {
    const text = t.parts.join('\n');
    // Only the masked text, the counts and the types leave this function: the inspection's excerpts are dropped.
    const result: InspectionResult = inspectText(text);
    return {
      environmentId,
      id: `${transcriptId}:${t.index}`,
      transcriptId,
      conversationId,
      agentId: str(j._bot_conversationtranscriptid_value),
      agentName: str(metadata?.BotName),
      userId,
      channelId,
      at: t.at,
      role: t.role,
      toolName: t.toolName,
      text: result.redacted.slice(0, TEXT_MAX),
      textLength: text.length,
      secrets: result.matches.filter((m) => m.kind === 'secret').length,
      personal: result.matches.filter((m) => m.kind === 'personal').length,
      findingTypes: [...new Set(result.matches.map((m) => m.type))].sort(),
      transcriptModifiedOn: modifiedOn,
      raw: {
        transcriptId,
        transcriptName: name,
        schemaType: str(j.schematype),
        schemaVersion: str(j.schemaversion),
        conversationStartTime: start,
        activity: t.shape,
        textLength: text.length,
      },
    };
  });
}

/** The `modifiedon gt …` bound of a URL's `$filter`, or null. */
function filterBound(url: string): string | null {
  const filter = new URL(url).searchParams.get('$filter');
  return filter ? (/modifiedon gt (\S+)/.exec(filter)?.[1] ?? null) : null;
}

/** The first page's request of a round reading the transcripts modified after `after` (all of them when null). */
function roundRequest(ctx: StreamContext, slice: Slice, after: string | null) {
  return entityRequest(ctx, slice, ENTITY_SET, TRANSCRIPT_FIELDS, null, { maxPageSize: PAGE_MAX, ...(after ? { filter: `modifiedon gt ${after}` } : {}) });
}

/** Copilot Studio conversation transcripts of every environment with Dataverse, one record per turn. */
export const conversationTranscriptsStream: Stream<'conversationTranscripts', TranscriptTurn> = {
  name: 'conversationTranscripts',
  primaryKey: ['environmentId', 'id'],
  parent: 'environments',
  delta: true,
  retain: true,
  slice: environmentSlice,
  resource: (_ctx, slice) => dataverseResource(slice.params.instanceUrl!),
  async *read(ctx, slice, cursor): AsyncGenerator<StreamPage<TranscriptTurn>> {
    const request = cursor ? entityRequest(ctx, slice, ENTITY_SET, TRANSCRIPT_FIELDS, cursor, { maxPageSize: PAGE_MAX }) : roundRequest(ctx, slice, null);
    // The next round's lower bound: the latest modifiedon seen, never below the bound this round started from.
    let latest = filterBound(request.url);
    const token = ctx.tokens.bearer(dataverseResource(slice.params.instanceUrl!));
    for await (const page of listPages(ctx, token, request, (j) => j)) {
      const records: TranscriptTurn[] = [];
      for (const j of page.records) {
        records.push(...toTurns(j, slice.key));
        const at = isoTime(j.modifiedon);
        if (at && (latest === null || Date.parse(at) > Date.parse(latest))) latest = at;
      }
      const last = page.nextCursor === null;
      yield { records, nextCursor: page.nextCursor, ...(last ? { deltaLink: roundRequest(ctx, slice, latest).url } : {}) };
    }
  },
};
