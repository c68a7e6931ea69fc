import { setTimeout as sleep } from 'node:timers/promises';
import { VigilError } from '../../../core/errors.ts';
import type { EstateObject, ParentRow } from '../../../core/inventory.ts';
import { parseRetryAfter, UpstreamHttpError } from '../../../platform/http/client.ts';
import { foreignLinkError } from '../../../platform/http/links.ts';
import { REFRESH_SECONDS, type Slice, type Stream, type StreamContext } from '../../stream.ts';
import { str, type Json } from '../../../core/json.ts';

/**
 * `teamsApps`: Teams apps installed per user, `GET /v1.0/users/{id}/teamwork/installedApps?$expand=teamsApp,
 * teamsAppDefinition`, sent 20 at a time through `POST /v1.0/$batch` (one slice per 20 users, `covers` = their ids);
 * full read every round. Needs TeamsAppInstallation.ReadForUser.All.
 *
 * Batching (Graph `concepts/json-batching.md`, `throttling.md`): at most 20 requests per batch; responses come in any
 * order and are matched by id; the outer request succeeds even when inner ones fail, and each inner request is
 * throttled on its own. Inner 429/503/504 are retried alone, after the longest inner `Retry-After` (seconds, may be
 * fractional) or a capped backoff, at most {@link INNER_ATTEMPTS} times; inner `@odata.nextLink`s are followed in later
 * batches; an inner 404 (the user was deleted since it was listed) reads as no apps; any other inner error (403: not
 * allowed) fails the slice, which is recorded as errored.
 */

/**
 * A Teams app installed in one user's personal scope (Graph `userScopeTeamsAppInstallation` with `teamsApp` and
 * `teamsAppDefinition` expanded). `id` = `{userId}/{installation id}`; slice = the user id. Collected for every
 * directory user, members and guests, enabled or disabled (a disabled user's installations stay in place).
 * Whether the app is a Copilot agent or a bot is not returned under TeamsAppInstallation.ReadForUser.All (the
 * definition's `bot` needs AppCatalog.Read.All): a sideloaded app with `azureADAppId` is the closest signal.
 *
 * Sources: learn.microsoft.com/graph/api/userteamwork-list-installedapps, /graph/api/resources/teamsapp
 * (`distributionMethod`: store, organization, sideloaded; `externalId` empty for store apps),
 * /graph/api/resources/teamsappdefinition (`azureADAppId` = the manifest's `webApplicationInfo.id`, `publishingState`:
 * submitted, published, rejected).
 */
export interface TeamsAppAttrs {
  /** The directory user the app is installed for. */
  userId: string;
  /** Installation id as Graph returns it (base64). */
  installationId: string;
  /** Catalogue id of the app (`teamsApp.id`, else `teamsAppDefinition.teamsAppId`). */
  teamsAppId: string | null;
  /** Manifest id (`teamsApp.externalId`); null for store apps. */
  externalId: string | null;
  displayName: string | null;
  /** Installed version (`teamsAppDefinition.version`). */
  version: string | null;
  /** `store` (Teams store), `organization` (the tenant's catalogue), `sideloaded` (custom upload), or null. */
  distributionMethod: string | null;
  /** Entra application id behind the app's SSO/bot (`teamsAppDefinition.azureADAppId`), or null. */
  azureADAppId: string | null;
  /** `published`, `submitted`, `rejected`, or null. */
  publishingState: string | null;
}

/** Requests per `$batch` (Graph's limit). */
const BATCH_SIZE = 20;
/** Attempts per inner request before the slice fails. */
const INNER_ATTEMPTS = 8;
/** Longest wait for one inner `Retry-After`, seconds. */
const MAX_INNER_WAIT_SECONDS = 120;

/** Maps one installation of a user's personal scope to an estate object (slice = the user id). */
function toTeamsApp(userId: string, j: Json): EstateObject<TeamsAppAttrs> {
  const app = (j.teamsApp ?? {}) as Json;
  const def = (j.teamsAppDefinition ?? {}) as Json;
  const displayName = str(def.displayName) ?? str(app.displayName);
  return {
    sliceKey: userId,
    id: `${userId}/${String(j.id)}`,
    name: displayName,
    attrs: {
      userId,
      installationId: String(j.id),
      teamsAppId: str(app.id) ?? str(def.teamsAppId),
      externalId: str(app.externalId),
      displayName,
      version: str(def.version),
      distributionMethod: str(app.distributionMethod),
      azureADAppId: str(def.azureADAppId),
      publishingState: str(def.publishingState),
    },
    raw: j,
  };
}

/** One slice per 20 users (ordered by id), covering them: one `$batch` reads them all. */
function teamsAppsSlices(rows: ParentRow[]): Slice[] {
  const out: Slice[] = [];
  for (let i = 0; i < rows.length; i += BATCH_SIZE) {
    const ids = rows.slice(i, i + BATCH_SIZE).map((r) => r.id);
    out.push({ key: `users:${ids[0]!}`, params: { userIds: ids.join(',') }, covers: ids });
  }
  return out;
}

interface InnerRequest {
  userId: string;
  /** URL relative to `{graph}/v1.0`, as `$batch` wants it. */
  url: string;
  attempts: number;
}

interface InnerResponse {
  id: string;
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * The part of an inner `@odata.nextLink` after `{graph}/v1.0` (a `$batch` request URL is relative to the version).
 * @throws VigilError `upstream` / `FOREIGN_LINK` when the link is off the Graph hosts (link policy) or outside
 *   `{graph}/v1.0` (it could not be sent inside this batch).
 */
function relativeLink(ctx: StreamContext, link: string): string {
  ctx.http.links.check('graph', link, 'the $batch inner @odata.nextLink');
  const base = `${ctx.cloud.graph.baseUrl}/v1.0`;
  // The link is kept as sent (its skip token is opaque), so it must start with the base as written.
  if (!link.startsWith(`${base}/`)) {
    throw foreignLinkError(
      'graph',
      link,
      'the $batch inner @odata.nextLink',
      ctx.http.links.profileName,
      `outside ${new URL(base).pathname}, the root that $batch request URLs are relative to`,
    );
  }
  return link.slice(base.length);
}

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return String(v);
  return undefined;
}

/**
 * Reads the installed apps of the slice's users through `$batch`, following inner next links and retrying throttled
 * inner requests. Yields one page (nothing is resumable inside a batch).
 *
 * @throws UpstreamHttpError for an inner error other than 404/429/503/504 (the slice is recorded as errored);
 *   VigilError `upstream` / `BATCH_THROTTLED` when an inner request is still throttled after {@link INNER_ATTEMPTS}.
 */
async function* readTeamsApps(ctx: StreamContext, slice: Slice) {
  const userIds = (slice.params.userIds ?? '').split(',').filter(Boolean);
  const queue: InnerRequest[] = userIds.map((userId) => ({
    userId,
    url: `/users/${encodeURIComponent(userId)}/teamwork/installedApps?$expand=teamsApp,teamsAppDefinition`,
    attempts: 0,
  }));
  const records: EstateObject<TeamsAppAttrs>[] = [];
  const batchUrl = `${ctx.cloud.graph.baseUrl}/v1.0/$batch`;
  while (queue.length > 0) {
    const batch = queue.splice(0, BATCH_SIZE);
    const res = await ctx.http.send<{ responses?: InnerResponse[] }>({
      api: 'graph',
      method: 'POST',
      url: batchUrl,
      body: { requests: batch.map((r, i) => ({ id: String(i + 1), method: 'GET', url: r.url })) },
      token: ctx.tokens.bearer(ctx.cloud.graph.resource),
      tenantId: ctx.tenantId,
      cost: batch.length,
    });
    const byId = new Map((res.body?.responses ?? []).map((r) => [String(r.id), r]));
    const retry: InnerRequest[] = [];
    let waitSeconds = 0;
    for (const [i, req] of batch.entries()) {
      const r = byId.get(String(i + 1));
      if (!r) throw new VigilError('BATCH_RESPONSE_MISSING', `graph $batch answered without a response for request ${i + 1} (${req.url.split('?')[0]}).`);
      if (r.status >= 200 && r.status < 300) {
        const body = (r.body ?? {}) as Json;
        for (const item of (Array.isArray(body.value) ? body.value : []) as Json[]) records.push(toTeamsApp(req.userId, item));
        const next = str(body['@odata.nextLink']);
        if (next) queue.push({ userId: req.userId, url: relativeLink(ctx, next), attempts: 0 });
      } else if (r.status === 404) {
        // The user was deleted since the users stream listed it: no apps.
      } else if ([429, 503, 504].includes(r.status)) {
        req.attempts++;
        if (req.attempts >= INNER_ATTEMPTS) {
          throw new VigilError('BATCH_THROTTLED', `graph kept throttling ${req.url.split('?')[0]} inside $batch after ${req.attempts} attempts.`);
        }
        const after = parseRetryAfter(header(r.headers, 'retry-after'));
        waitSeconds = Math.max(waitSeconds, after ?? Math.random() * Math.min(8, 0.5 * 2 ** (req.attempts - 1)));
        retry.push(req);
      } else {
        const err = ((r.body ?? {}) as { error?: { code?: unknown; message?: unknown } }).error;
        throw new UpstreamHttpError(
          'graph',
          'GET',
          `${ctx.cloud.graph.baseUrl}/v1.0${req.url}`,
          r.status,
          str(err?.code) ?? undefined,
          str(err?.message) ?? undefined,
          r.body,
        );
      }
    }
    if (retry.length > 0) {
      const stats = ctx.http.statsFor('graph');
      stats.throttled += retry.length;
      stats.retries += retry.length;
      stats.waitedSeconds += Math.min(waitSeconds, MAX_INNER_WAIT_SECONDS);
      ctx.logger.debug({ slice: slice.key, throttled: retry.length, waitSeconds }, 'retrying throttled $batch requests');
      await sleep(Math.min(waitSeconds, MAX_INNER_WAIT_SECONDS) * 1000);
      queue.unshift(...retry);
    }
  }
  yield { records, nextCursor: null };
}

/**
 * Teams apps installed for every directory user (members and guests, enabled or not: a disabled account keeps its
 * installations and regains them when re-enabled), 20 users per `$batch`.
 */
export const teamsAppsStream: Stream<'teamsApps', EstateObject<TeamsAppAttrs>> = {
  name: 'teamsApps',
  capability: 'teams.installedApps',
  primaryKey: ['id'],
  parent: 'users',
  slices: teamsAppsSlices,
  refreshSeconds: REFRESH_SECONDS.perUserInventory,
  resource: (ctx) => ctx.cloud.graph.resource,
  read: (ctx, slice) => readTeamsApps(ctx, slice),
};
