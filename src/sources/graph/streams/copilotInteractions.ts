import type { EstateObject, ParentRow } from '../../../core/inventory.ts';
import { inspectText, summarize, type InspectionResult } from '../../../inspection/index.ts';
import { odataPages } from '../../../platform/http/odata.ts';
import { REFRESH_SECONDS, type Slice, type Stream, type StreamContext, type StreamPage } from '../../stream.ts';
import { str, type Json } from '../../../core/json.ts';
import type { MatchType } from '../../../core/types.ts';

/**
 * Microsoft 365 Copilot interaction history, per licensed user:
 * `GET /v1.0/copilot/users/{userId}/interactionHistory/getAllEnterpriseInteractions?$top=100`, paged by
 * `@odata.nextLink` (`$skiptoken`). Incremental by `createdDateTime`: the last page of a round carries a delta link
 * (the first-page URL with `$filter=createdDateTime gt {latest createdDateTime seen}`), which the engine stores per user
 * and starts the next round from. History is retained (never marked deleted). Needs the application permission
 * AiEnterpriseInteraction.Read.All (delegated is not supported); only users holding a Copilot licence are read.
 *
 * Every body (and attachment content) is inspected for secrets and personal data; the stored `raw` carries the masked
 * text only, and the content is never logged.
 *
 * Sources: Graph `api-reference/v1.0/api/aiinteractionhistory-getallenterpriseinteractions.md` (permission, `$top`
 * recommended 100, `$filter` on createdDateTime gt/lt and appClass eq, `@odata.count`, nextLink), `resources/aiinteraction.md`.
 * Limits (UNCONFIRMED upstream): an interaction stored later with a createdDateTime at or before the latest one seen is
 * not read by the next round.
 */

/**
 * Normalised attributes of one Microsoft 365 Copilot interaction (Graph `aiInteraction`, from
 * `GET /copilot/users/{id}/interactionHistory/getAllEnterpriseInteractions`; resource page `resources/aiinteraction.md`).
 * The body text itself is not kept here; the stored `raw` holds it with every secret and personal-data finding masked.
 */
export interface CopilotInteractionAttrs {
  /** Entra object id of the licensed user whose history this is (the slice). */
  userId: string;
  /** Conversation thread id (`19:…@thread.v2`). */
  sessionId: string | null;
  /** Pairs a prompt with its response. */
  requestId: string | null;
  /** Copilot surface, e.g. `IPM.SkypeTeams.Message.Copilot.Teams` (Word, Excel, Teams, BizChat, WebChat). */
  appClass: string | null;
  /** `userPrompt`, `aiResponse` (or `unknownFutureValue`). */
  interactionType: string | null;
  /** `appchat`, `bizchat`, … */
  conversationType: string | null;
  /** ISO 8601 UTC. */
  createdDateTime: string | null;
  /** Who wrote it: the user (`type: 'user'`, Entra object id) or Copilot (`type: 'application'`, its app id). */
  from: { type: 'user' | 'application' | null; id: string | null };
  /** Number of `contexts` (files, meetings, pages Copilot was grounded on). */
  contexts: number;
  /** Number of `attachments`. */
  attachments: number;
  /** Number of `links`. */
  links: number;
  /** Length of `body.content` in characters (UTF-16 code units), before masking. */
  bodyLength: number;
  /** Content inspection of the body and attachment contents (`src/inspection`). */
  inspection: {
    /** Secret findings (keys, tokens, private keys, passwords). */
    secrets: number;
    /** Personal-data findings (card numbers, national identifiers, IBANs, e-mail addresses in bulk). */
    personal: number;
    /** Distinct finding types, sorted. */
    types: MatchType[];
    /** Up to 5 redacted excerpts (never a whole finding). */
    excerpts: string[];
  };
}

/**
 * SKU ids that carry Microsoft 365 Copilot. `639dec6b-bb19-468b-871c-c5c441c4b0cb` is `Microsoft_365_Copilot` (Graph
 * `cloudlicensing-userusageright-get.md` example). Other Copilot SKUs (government clouds, education) are not
 * confirmed here: add their ids when verified.
 */
const COPILOT_SKU_IDS: readonly string[] = ['639dec6b-bb19-468b-871c-c5c441c4b0cb'];

/** Page size asked (`$top`): the value the API page recommends. */
const PAGE_SIZE = 100;

const count = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

/**
 * Any Copilot SKU id, in any letter case. The stored JSON of a user holding one contains the id as written: the store
 * writes it with `JSON.stringify`, which escapes none of a GUID's characters.
 */
const ANY_COPILOT_SKU = new RegExp(COPILOT_SKU_IDS.map((id) => id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'i');

/** True when the stored Graph user JSON (`raw`, with `assignedLicenses`) holds a Copilot SKU. */
function holdsCopilotLicence(raw: string | undefined): boolean {
  if (!raw) return false;
  // A JSON without any Copilot SKU id is not parsed: most users hold none, and parsing every user's JSON to find out
  // was, at 50,000 users, a burst of short-lived objects that the old generation kept until its next major GC (issue 18).
  if (!ANY_COPILOT_SKU.test(raw)) return false;
  try {
    const licences = (JSON.parse(raw) as Json).assignedLicenses;
    return Array.isArray(licences) && licences.some((l) => COPILOT_SKU_IDS.includes(String((l as Json)?.skuId ?? '').toLowerCase()));
  } catch {
    return false;
  }
}

function firstUrl(ctx: StreamContext, userId: string, after: string | null): string {
  const base = `${ctx.cloud.graph.baseUrl}/v1.0/copilot/users/${encodeURIComponent(userId)}/interactionHistory/getAllEnterpriseInteractions?$top=${PAGE_SIZE}`;
  return after ? `${base}&$filter=${encodeURIComponent(`createdDateTime gt ${after}`)}` : base;
}

/** The `createdDateTime gt …` bound of a URL's `$filter`, or null. */
function filterBound(url: string): string | null {
  const filter = new URL(url).searchParams.get('$filter');
  return filter ? (/createdDateTime gt (\S+)/.exec(filter)?.[1] ?? null) : null;
}

/** Maps one `aiInteraction` to an estate object: inspects the body and attachments, masks them in `raw`. */
export function toInteraction(userId: string, j: Json): EstateObject<CopilotInteractionAttrs> {
  const body = (j.body && typeof j.body === 'object' ? j.body : {}) as Json;
  const content = str(body.content) ?? '';
  const results: InspectionResult[] = [];
  const bodyResult = inspectText(content);
  results.push(bodyResult);
  const attachments = Array.isArray(j.attachments)
    ? (j.attachments as Json[]).map((a) => {
        if (typeof a?.content !== 'string') return a;
        const r = inspectText(a.content);
        results.push(r);
        return { ...a, content: r.redacted };
      })
    : j.attachments;
  const from = (j.from ?? {}) as Json;
  const user = from.user as Json | null | undefined;
  const app = from.application as Json | null | undefined;
  const raw: Json = { ...j, body: { ...body, content: bodyResult.redacted }, attachments };
  return {
    sliceKey: userId,
    id: `${userId}/${String(j.id)}`,
    name: null,
    attrs: {
      userId,
      sessionId: str(j.sessionId),
      requestId: str(j.requestId),
      appClass: str(j.appClass),
      interactionType: str(j.interactionType),
      conversationType: str(j.conversationType),
      createdDateTime: str(j.createdDateTime),
      from: user ? { type: 'user', id: str(user.id) } : app ? { type: 'application', id: str(app.id) } : { type: null, id: null },
      contexts: count(j.contexts),
      attachments: count(j.attachments),
      links: count(j.links),
      bodyLength: content.length,
      inspection: summarize(results),
    },
    raw,
  };
}

/** Copilot interaction history of each user holding a Copilot licence (one slice per user). */
export const copilotInteractionsStream: Stream<'copilotInteractions', EstateObject<CopilotInteractionAttrs>> = {
  name: 'copilotInteractions',
  capability: 'copilot.interactions',
  primaryKey: ['id'],
  parent: 'users',
  delta: true,
  refreshSeconds: REFRESH_SECONDS.interactionHistory,
  retain: true,
  slice: (row: ParentRow): Slice | null => (holdsCopilotLicence(row.raw) ? { key: row.id, params: { userId: row.id } } : null),
  resource: (ctx) => ctx.cloud.graph.resource,
  async *read(ctx, slice, cursor): AsyncGenerator<StreamPage<EstateObject<CopilotInteractionAttrs>>> {
    const userId = slice.params.userId!;
    const url = cursor ?? firstUrl(ctx, userId, null);
    // The next round's lower bound: the latest createdDateTime seen, never below the bound this round started from.
    let latest = filterBound(url);
    const request = { api: 'graph' as const, url, token: ctx.tokens.bearer(ctx.cloud.graph.resource), tenantId: ctx.tenantId };
    for await (const page of odataPages<Json>(ctx.http, request)) {
      const records = page.items.map((j) => toInteraction(userId, j));
      for (const r of records) {
        const at = r.attrs.createdDateTime;
        if (at && (latest === null || Date.parse(at) > Date.parse(latest))) latest = at;
      }
      const last = !page.nextLink;
      yield { records, nextCursor: page.nextLink ?? null, ...(last ? { deltaLink: firstUrl(ctx, userId, latest) } : {}) };
    }
  },
};
