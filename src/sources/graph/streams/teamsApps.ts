import type { EstateObject, ParentRow } from '../../../core/inventory.ts';
import { foreignLinkError } from '../../../platform/http/links.ts';
import { REFRESH_SECONDS, type Slice, type Stream, type StreamContext } from '../../stream.ts';
import { str, type Json } from '../../../core/json.ts';
import { BATCH_SIZE, innerError, runBatch, type BatchItem } from '../batch.ts';

/**
 * `teamsApps`: Teams apps installed per user, `GET /v1.0/users/{id}/teamwork/installedApps?$expand=teamsApp,
 * teamsAppDefinition`, sent 20 at a time through `POST /v1.0/$batch` (one slice per 20 users, `covers` = their ids);
 * full read every round. Needs TeamsAppInstallation.ReadForUser.All.
 *
 * Each inner request draws on the Teams budget (`graphTeams`: "GET … installedApps" 30 rps per app per tenant, 600 rps
 * per app across tenants, `throttling-limits.md`), charged before the batch is sent; inner 429s slow that budget for
 * every worker and are sent again without limit (see `../batch.ts`). Inner `@odata.nextLink`s are followed in later
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

/**
 * Reads the installed apps of the slice's users through `$batch`, following inner next links; throttled inner
 * requests wait for the Teams budget and are sent again. Yields one page (nothing is resumable inside a batch).
 *
 * @throws UpstreamHttpError for an inner error other than 404 and throttling (the slice is recorded as errored);
 *   VigilError `upstream` / `BATCH_RESPONSE_MISSING`.
 */
async function* readTeamsApps(ctx: StreamContext, slice: Slice) {
  const userIds = (slice.params.userIds ?? '').split(',').filter(Boolean);
  const item = (userId: string, url: string): BatchItem<string> => ({ url, tag: userId });
  const records: EstateObject<TeamsAppAttrs>[] = [];
  await runBatch(
    ctx,
    userIds.map((userId) => item(userId, `/users/${encodeURIComponent(userId)}/teamwork/installedApps?$expand=teamsApp,teamsAppDefinition`)),
    (req, answer) => {
      // The user was deleted since the users stream listed it: no apps.
      if (answer.status === 404) return;
      if (answer.status < 200 || answer.status >= 300) throw innerError(ctx, req.url, answer);
      const body = (answer.body ?? {}) as Json;
      for (const j of (Array.isArray(body.value) ? body.value : []) as Json[]) records.push(toTeamsApp(req.tag, j));
      const next = str(body['@odata.nextLink']);
      return next ? [item(req.tag, relativeLink(ctx, next))] : [];
    },
    ctx.signal,
  );
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
  parentRaw: false,
  refreshSeconds: REFRESH_SECONDS.perUserInventory,
  resource: (ctx) => ctx.cloud.graph.resource,
  read: (ctx, slice) => readTeamsApps(ctx, slice),
};
