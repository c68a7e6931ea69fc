/**
 * Microsoft Graph beyond the directory (reference §5.3, §5.5), served under `/graph` beside graph.ts:
 * - `GET /{v}/external/connections` — Microsoft Search external connections (Copilot connectors), paged;
 * - `GET /{v}/users/{id|upn}/teamwork/installedApps` — Teams apps installed for a user, `$expand=teamsApp,
 *   teamsAppDefinition`, paged by `@odata.nextLink`;
 * - `POST /{v}/$batch` — JSON batching: at most 20 requests, unique ids, inner requests routed to the same handlers,
 *   responses in any order, each inner request throttled on its own (inner 429 with `Retry-After`, driven by the
 *   fault injector: `FaultConfig.match` is tested against the inner path).
 * The model (`Tenant.graphEstate`), its generator (own PRNG stream `{seed}:graphestate`) and its ground truth live here.
 *
 * Sources: learn.microsoft.com/graph/api/externalconnectors-external-list-connections,
 * /graph/api/userteamwork-list-installedapps, /graph/api/resources/teamsapp (distributionMethod `store`,
 * `organization`, `sideloaded`; externalId empty for store apps), /graph/api/resources/teamsappdefinition
 * (`azureADAppId` = manifest `webApplicationInfo.id`, `publishingState`), /graph/json-batching, /graph/throttling.
 * UNCONFIRMED: the wording of the `$batch` 400 messages; the installedApps page size (10 here); 404 code `NotFound`.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { buildQuery, decodeCursor, encodeCursor, newId, parseSelect, project, queryParam, resumeIndex } from './common.ts';
import { faultBody } from './faults.ts';
import { authenticate, denied, GRAPH_CONTENT_TYPE, hasRole, sendError, type GraphContext } from './graph.ts';
import { createRng } from './prng.ts';
import { isRefusal, refusalResponse } from './throttling.ts';
import { indexes, type Tenant } from './tenant.ts';

/** A Microsoft Search external connection (Graph `externalConnectors.externalConnection`). */
export interface ExternalConnection {
  /** Developer-chosen id, 3–32 alphanumeric characters. */
  id: string;
  name: string;
  description: string | null;
  /** `draft`, `ready`, `obsolete`, `limitExceeded`. */
  state: 'draft' | 'ready' | 'obsolete' | 'limitExceeded';
  /** Apps allowed to push items into the connection (`configuration.authorizedAppIds`). */
  authorizedAppIds: string[];
  /** Id of the Microsoft-built connector it came from, or null for custom connections. */
  connectorId: string | null;
}

/** An app of the tenant's Teams app catalogue with its single published definition. */
export interface TeamsCatalogApp {
  /** Catalogue id (`teamsApp.id`); for store apps the manifest id. */
  id: string;
  /** Manifest id (`teamsApp.externalId`); null for store apps. */
  externalId: string | null;
  displayName: string;
  distributionMethod: 'store' | 'organization' | 'sideloaded';
  version: string;
  /** `teamsAppDefinition.azureADAppId` (manifest `webApplicationInfo.id`), or null. */
  azureADAppId: string | null;
  publishingState: 'published' | 'submitted' | 'rejected';
  shortDescription: string;
  lastModifiedDateTime: string;
}

/**
 * Graph data beyond the directory: external connections, the Teams app catalogue, and per user the catalogue ids of
 * the apps installed in the user's personal scope (`installedApps[userId]`). Installation ids are derived
 * (`base64("{userId}##{appId}")`, the shape Graph returns). Tests may mutate the arrays in place.
 */
export interface GraphEstate {
  externalConnections: ExternalConnection[];
  teamsApps: TeamsCatalogApp[];
  installedApps: Record<string, string[]>;
}

/** Sizes of the generated Graph estate (see `TenantSizes`). */
export interface GraphEstateSizes {
  /** External connections. */
  externalConnections: number;
  /** Average Teams apps installed per user (0..2× this per user). */
  teamsAppsPerUser: number;
  /** Apps in the Teams catalogue (store, organization and sideloaded custom agents). */
  teamsAppCatalog: number;
}

const STORE_APPS = [
  'Planner',
  'Approvals',
  'Polly',
  'Trello',
  'Jira Cloud',
  'Zoom',
  'Asana',
  'Adobe Acrobat',
  'Forms',
  'Viva Insights',
  'Miro',
  'ServiceNow',
  'Salesforce',
  'GitHub',
  'Power BI',
  'Lists',
];
const ORG_APPS = ['HR Portal', 'Expense Tracker', 'Leave Requests', 'Intranet News', 'IT Service Desk', 'Travel Booking', 'Sales Dashboard', 'Onboarding Hub'];
const AGENTS = ['Helpdesk Agent', 'Sales Copilot Agent', 'Benefits Agent', 'Contract Review Agent', 'Finance Q&A Agent', 'Policy Agent', 'Recruiting Agent'];
const CONNECTIONS = [
  ['contosohr', 'HR knowledge base', 'Employee handbook and HR policies'],
  ['servicenowkb', 'ServiceNow Knowledge', 'IT knowledge articles'],
  ['confluence', 'Confluence', 'Engineering wiki'],
  ['jiraissues', 'Jira issues', null],
  ['salesforcecrm', 'Salesforce CRM', 'Accounts and opportunities'],
  ['fileshare', 'File share', 'On-premises file shares'],
] as const;

/** The installation id Graph would return for an app installed for a user. */
export function installationId(userId: string, appId: string): string {
  return Buffer.from(`${userId}##${appId}`, 'utf8').toString('base64');
}

/**
 * Generates a tenant's Graph estate from its own PRNG stream (`{seed}:graphestate`), so every other generated value
 * stays as it was. Catalogue: about half store apps, a third organization apps, the rest sideloaded custom agents;
 * each user (members and guests, enabled or not) gets 0..2×`teamsAppsPerUser` distinct apps, the agents weighted so
 * each is installed by many users; the first user has every app (more than one page). Linear in users.
 */
export function generateGraphEstate(tenant: Pick<Tenant, 'users' | 'apps' | 'referenceTime'>, sizes: GraphEstateSizes, seed: number | string): GraphEstate {
  const rng = createRng(`${String(seed)}:graphestate`);
  const now = Date.parse(tenant.referenceTime ?? '2025-01-01T00:00:00Z');
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const externalConnections: ExternalConnection[] = [];
  for (let i = 0; i < sizes.externalConnections; i++) {
    const [id, name, description] = CONNECTIONS[i % CONNECTIONS.length]!;
    const n = Math.floor(i / CONNECTIONS.length);
    externalConnections.push({
      id: n === 0 ? id : `${id}${n + 1}`,
      name: n === 0 ? name : `${name} ${n + 1}`,
      description,
      state: rng.chance(0.85) ? 'ready' : rng.pick(['draft', 'limitExceeded'] as const),
      authorizedAppIds: [rng.guid()],
      connectorId: rng.chance(0.5) ? null : rng.guid(),
    });
  }
  const teamsApps: TeamsCatalogApp[] = [];
  const weights: number[] = [];
  for (let i = 0; i < sizes.teamsAppCatalog; i++) {
    const r = i % 6;
    const method: TeamsCatalogApp['distributionMethod'] = r < 3 ? 'store' : r < 5 ? 'organization' : 'sideloaded';
    const names = method === 'store' ? STORE_APPS : method === 'organization' ? ORG_APPS : AGENTS;
    const base = names[Math.floor(i / 6) % names.length]!;
    const round = Math.floor(i / (6 * names.length));
    const id = rng.guid();
    teamsApps.push({
      id,
      externalId: method === 'store' ? null : rng.guid(),
      displayName: round === 0 ? base : `${base} ${round + 1}`,
      distributionMethod: method,
      version: `${rng.int(1, 4)}.${rng.int(0, 9)}.${rng.int(0, 20)}`,
      azureADAppId: method === 'sideloaded' || rng.chance(0.3) ? rng.guid() : null,
      publishingState: 'published',
      shortDescription: `${base} for Microsoft Teams`,
      lastModifiedDateTime: iso(now - rng.int(1, 700) * 86_400_000),
    });
    weights.push(method === 'sideloaded' ? 6 : method === 'organization' ? 2 : 1);
  }
  const total = weights.reduce((a, b) => a + b, 0);
  const pickApp = (): number => {
    let x = rng.next() * total;
    for (let i = 0; i < weights.length; i++) {
      x -= weights[i]!;
      if (x < 0) return i;
    }
    return weights.length - 1;
  };
  const installedApps: Record<string, string[]> = {};
  tenant.users.forEach((u, ui) => {
    if (teamsApps.length === 0) return;
    if (ui === 0) {
      installedApps[u.id] = teamsApps.map((a) => a.id);
      return;
    }
    const k = Math.min(teamsApps.length, rng.int(0, 2 * sizes.teamsAppsPerUser));
    if (k === 0) return;
    const chosen = new Set<number>();
    for (let tries = 0; chosen.size < k && tries < 4 * k; tries++) chosen.add(pickApp());
    installedApps[u.id] = [...chosen].map((i) => teamsApps[i]!.id);
  });
  return { externalConnections, teamsApps, installedApps };
}

/** What a complete collection of the Graph estate finds. */
export interface GraphEstateGroundTruth {
  externalConnections: number;
  /** Installations over existing users whose app is in the catalogue. */
  teamsAppInstallations: number;
  teamsAppInstallationsByMethod: Record<TeamsCatalogApp['distributionMethod'], number>;
  /** Users with at least one installation. */
  usersWithTeamsApps: number;
}

/** Recomputes the Graph estate counts from the tenant data alone. */
export function graphEstateGroundTruth(tenant: Tenant): GraphEstateGroundTruth {
  const estate = tenant.graphEstate;
  const out: GraphEstateGroundTruth = {
    externalConnections: estate?.externalConnections.length ?? 0,
    teamsAppInstallations: 0,
    teamsAppInstallationsByMethod: { store: 0, organization: 0, sideloaded: 0 },
    usersWithTeamsApps: 0,
  };
  if (!estate) return out;
  const catalog = new Map(estate.teamsApps.map((a) => [a.id, a]));
  for (const u of tenant.users) {
    let n = 0;
    for (const appId of estate.installedApps[u.id] ?? []) {
      const app = catalog.get(appId);
      if (!app) continue;
      n++;
      out.teamsAppInstallationsByMethod[app.distributionMethod]++;
    }
    out.teamsAppInstallations += n;
    if (n > 0) out.usersWithTeamsApps++;
  }
  return out;
}

/** Roles that allow `GET /external/connections` (the read-all role is UNCONFIRMED in the reference snapshot). */
export const EXTERNAL_CONNECTION_ROLES = ['ExternalConnection.Read.All', 'ExternalConnection.ReadWrite.All'];
/** Roles that allow `GET /users/{id}/teamwork/installedApps` (least privileged first). */
export const INSTALLED_APPS_ROLES = [
  'TeamsAppInstallation.ReadForUser.All',
  'TeamsAppInstallation.ReadWriteForUser.All',
  'TeamsAppInstallation.ReadWriteSelfForUser.All',
  'TeamsAppInstallation.ReadWriteAndConsentForUser.All',
  'TeamsAppInstallation.ReadWriteAndConsentSelfForUser.All',
];
/** Installations per page of `installedApps` (UNCONFIRMED: Graph does not document it). */
export const INSTALLED_APPS_PAGE_SIZE = 10;
/** Most requests in one `$batch` (json-batching.md). */
export const BATCH_MAX_REQUESTS = 20;

/** Header carrying a per-process secret on inner `$batch` requests: index.ts neither faults nor logs them again. */
const BATCH_INNER_HEADER = 'x-emulator-batch-inner';
const BATCH_INNER_SECRET = randomBytes(16).toString('hex');

/** True for a request injected by `$batch` (its faults were decided by the batch, its outer request is logged). */
export function isBatchInner(req: FastifyRequest): boolean {
  return req.headers[BATCH_INNER_HEADER] === BATCH_INNER_SECRET;
}

function unsupported(req: FastifyRequest, reply: FastifyReply, options: string[]): boolean {
  for (const opt of options) {
    if (queryParam(req, opt) !== undefined) {
      sendError(req, reply, 400, 'BadRequest', `The emulator does not implement the query option '${opt}' on this resource.`);
      return true;
    }
  }
  return false;
}

function renderConnection(c: ExternalConnection): Record<string, unknown> {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    state: c.state,
    connectorId: c.connectorId,
    configuration: { authorizedAppIds: c.authorizedAppIds },
  };
}

function renderInstallation(userId: string, app: TeamsCatalogApp, expand: Set<string>): Record<string, unknown> {
  const out: Record<string, unknown> = { id: installationId(userId, app.id) };
  if (expand.has('teamsApp'))
    out.teamsApp = { id: app.id, externalId: app.externalId, displayName: app.displayName, distributionMethod: app.distributionMethod };
  if (expand.has('teamsAppDefinition')) {
    out.teamsAppDefinition = {
      id: Buffer.from(`${app.id}##${app.version}##Published`, 'utf8').toString('base64'),
      teamsAppId: app.id,
      displayName: app.displayName,
      version: app.version,
      azureADAppId: app.azureADAppId,
      publishingState: app.publishingState,
      shortDescription: app.shortDescription,
      description: app.shortDescription,
      lastModifiedDateTime: app.lastModifiedDateTime,
      createdBy: null,
    };
  }
  return out;
}

/**
 * Registers the routes of this module on the `/graph` scope (after `registerGraph`, whose `onRequest` hook stamps
 * `request-id`). Errors: 401 `InvalidAuthenticationToken`; 403 `Authorization_RequestDenied` without a role of
 * `EXTERNAL_CONNECTION_ROLES` / `INSTALLED_APPS_ROLES`; 404 `NotFound` for an unknown user; 400 `BadRequest` for
 * unimplemented query options, a bad `$skiptoken`, and `$batch` payloads that are not `{"requests":[…]}`, hold more
 * than 20 requests, repeat an id, use an absolute URL, or carry a body without a `Content-Type` header.
 */
export function registerGraphEstate(app: FastifyInstance, ctx: GraphContext): void {
  for (const version of ['v1.0', 'beta']) {
    app.get(`/${version}/external/connections`, async (req, reply) => {
      const auth = await authenticate(ctx, req, reply);
      if (!auth) return reply;
      if (!hasRole(auth.claims, EXTERNAL_CONNECTION_ROLES)) return denied(req, reply);
      if (unsupported(req, reply, ['$filter', '$orderby', '$search', '$expand', '$skip'])) return reply;
      const topRaw = queryParam(req, '$top');
      const top = topRaw === undefined ? 10 : Number(topRaw);
      if (!Number.isInteger(top) || top < 1 || top > 999) return sendError(req, reply, 400, 'BadRequest', `Invalid page size specified: '${String(topRaw)}'.`);
      const items = auth.tenant.graphEstate?.externalConnections ?? [];
      let start = 0;
      const skiptoken = queryParam(req, '$skiptoken');
      if (skiptoken !== undefined) {
        const cursor = decodeCursor(skiptoken);
        if (!cursor || cursor.c !== 'externalConnections') return sendError(req, reply, 400, 'BadRequest', 'The specified page token value has expired.');
        start = resumeIndex(
          items,
          (c) => c.id,
          cursor.index,
          cursor.last,
          (id) => items.findIndex((c) => c.id === id),
        );
      }
      const select = parseSelect(queryParam(req, '$select'));
      const slice = items.slice(start, start + top);
      const body: Record<string, unknown> = { '@odata.context': `${ctx.baseUrl()}/graph/${version}/$metadata#external/connections` };
      const last = slice[slice.length - 1];
      if (start + slice.length < items.length && last) {
        body['@odata.nextLink'] = `${ctx.baseUrl()}/graph/${version}/external/connections${buildQuery([
          ['$top', topRaw],
          ['$select', select?.join(',')],
          ['$skiptoken', encodeCursor({ c: 'externalConnections', index: start + slice.length, last: last.id })],
        ])}`;
      }
      body.value = slice.map((c) => project(renderConnection(c), select, ['id']));
      return reply.type(GRAPH_CONTENT_TYPE).send(body);
    });

    app.get<{ Params: { id: string } }>(`/${version}/users/:id/teamwork/installedApps`, async (req, reply) => {
      const auth = await authenticate(ctx, req, reply);
      if (!auth) return reply;
      if (!hasRole(auth.claims, INSTALLED_APPS_ROLES)) return denied(req, reply);
      if (unsupported(req, reply, ['$filter', '$orderby', '$search', '$top', '$skip'])) return reply;
      const key = req.params.id;
      const t = auth.tenant;
      const user = indexes.users.get(t.users, key) ?? t.users.find((u) => u.userPrincipalName.toLowerCase() === key.toLowerCase());
      if (!user) return sendError(req, reply, 404, 'NotFound', `User '${key}' was not found.`);
      const expandRaw = queryParam(req, '$expand');
      const expand = new Set(
        (expandRaw ?? '')
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean),
      );
      for (const e of expand)
        if (e !== 'teamsApp' && e !== 'teamsAppDefinition')
          return sendError(
            req,
            reply,
            400,
            'BadRequest',
            `Could not find a navigation property named '${e}' on type 'microsoft.graph.userScopeTeamsAppInstallation'.`,
          );
      const catalog = new Map((t.graphEstate?.teamsApps ?? []).map((a) => [a.id, a]));
      const ids = (t.graphEstate?.installedApps[user.id] ?? []).filter((a) => catalog.has(a));
      let start = 0;
      const skiptoken = queryParam(req, '$skiptoken');
      if (skiptoken !== undefined) {
        const cursor = decodeCursor(skiptoken);
        if (!cursor || cursor.c !== `installedApps:${user.id}`) return sendError(req, reply, 400, 'BadRequest', 'The specified page token value has expired.');
        start = resumeIndex(
          ids,
          (a) => a,
          cursor.index,
          cursor.last,
          (a) => ids.indexOf(a),
        );
      }
      const slice = ids.slice(start, start + INSTALLED_APPS_PAGE_SIZE);
      const body: Record<string, unknown> = { '@odata.context': `${ctx.baseUrl()}/graph/${version}/$metadata#users('${user.id}')/teamwork/installedApps` };
      const last = slice[slice.length - 1];
      if (start + slice.length < ids.length && last) {
        body['@odata.nextLink'] = `${ctx.baseUrl()}/graph/${version}/users/${user.id}/teamwork/installedApps${buildQuery([
          ['$expand', expandRaw],
          ['$skiptoken', encodeCursor({ c: `installedApps:${user.id}`, index: start + slice.length, last })],
        ])}`;
      }
      body.value = slice.map((a) => renderInstallation(user.id, catalog.get(a)!, expand));
      return reply.type(GRAPH_CONTENT_TYPE).send(body);
    });

    app.post(`/${version}/$batch`, async (req, reply) => {
      const auth = await authenticate(ctx, req, reply);
      if (!auth) return reply;
      const bad = (message: string) => sendError(req, reply, 400, 'BadRequest', message);
      const payload = req.body as { requests?: unknown } | null;
      if (!payload || typeof payload !== 'object' || !Array.isArray(payload.requests)) return bad('Invalid batch payload format.');
      const requests = payload.requests as Record<string, unknown>[];
      if (requests.length === 0) return bad('Invalid batch payload format.');
      if (requests.length > BATCH_MAX_REQUESTS) return bad(`Number of batch requests exceeds the limit of ${BATCH_MAX_REQUESTS}.`);
      const seen = new Set<string>();
      for (const r of requests) {
        if (!r || typeof r !== 'object' || typeof r.id !== 'string' || r.id === '' || typeof r.method !== 'string' || typeof r.url !== 'string')
          return bad('Invalid batch payload format.');
        if (seen.has(r.id)) return bad(`Batch request contains duplicate ids: '${r.id}'.`);
        seen.add(r.id);
        if (/^[a-z]+:\/\//i.test(r.url)) return bad(`Invalid request URL '${r.url}': batch request URLs must be relative.`);
        const headers = (r.headers ?? {}) as Record<string, unknown>;
        if (r.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
          return bad(`Request '${r.id}': a body requires a Content-Type header.`);
        if (r.dependsOn !== undefined && (!Array.isArray(r.dependsOn) || r.dependsOn.some((d) => typeof d !== 'string' || !seen.has(d) || d === r.id)))
          return bad(`Request '${r.id}': dependsOn must name earlier requests.`);
      }
      const identity = {
        tid: auth.claims.tid.toLowerCase(),
        appId: (auth.claims.appid || auth.claims.azp || '').toLowerCase(),
        oid: auth.claims.oid.toLowerCase(),
      };
      const statusById = new Map<string, number>();
      const responses: Record<string, unknown>[] = [];
      for (const r of requests) {
        const id = r.id as string;
        const path = (r.url as string).startsWith('/') ? (r.url as string) : `/${r.url as string}`;
        const full = `/graph/${version}${path}`;
        const deps = (r.dependsOn ?? []) as string[];
        let status: number;
        let headers: Record<string, string> = {};
        let body: unknown;
        if (deps.some((d) => (statusById.get(d) ?? 0) >= 400)) {
          status = 424;
          body = { error: { code: 'FailedDependency', message: 'A request this one depends on failed.' } };
        } else {
          // Each inner request is charged to its own service's buckets; over a limit it gets an inner 429 (outer 200).
          const verdict = ctx.throttling?.admit({ service: 'graph', method: r.method as string, url: full, claims: identity });
          const decision = verdict && isRefusal(verdict) ? null : ctx.faults?.decide('graph', full.split('?')[0] ?? full);
          if (verdict && isRefusal(verdict)) {
            const answer = refusalResponse('graph', verdict, full, newId());
            status = answer.status;
            headers = {
              'Content-Type': 'application/json',
              ...(verdict.retryAfterSeconds !== null ? { 'Retry-After': String(verdict.retryAfterSeconds) } : {}),
            };
            body = answer.body;
          } else if (decision) {
            // Each inner request is throttled on its own; transport faults (reset, truncate) read as 503 inside a batch.
            status = ['503', 'reset', 'truncate'].includes(decision.kind) ? 503 : 429;
            const requestId = newId();
            const retryAfter = decision.retryAfter ?? (status === 503 ? '1' : undefined);
            headers = { 'content-type': 'application/json', ...(retryAfter !== undefined ? { 'retry-after': retryAfter } : {}) };
            body = faultBody('graph', status as 429 | 503, requestId);
          } else {
            const innerHeaders: Record<string, string> = {};
            for (const [k, v] of Object.entries((r.headers ?? {}) as Record<string, unknown>)) if (typeof v === 'string') innerHeaders[k.toLowerCase()] = v;
            const res = await app.inject({
              method: (r.method as string).toUpperCase() as 'GET',
              url: full,
              headers: { ...innerHeaders, authorization: req.headers.authorization ?? '', [BATCH_INNER_HEADER]: BATCH_INNER_SECRET },
              ...(r.body !== undefined ? { payload: typeof r.body === 'string' ? r.body : JSON.stringify(r.body) } : {}),
            });
            status = res.statusCode;
            for (const h of ['content-type', 'retry-after', 'location']) {
              const v = res.headers[h];
              if (typeof v === 'string') headers[h] = v;
            }
            try {
              body = res.body.length > 0 ? JSON.parse(res.body) : undefined;
            } catch {
              body = res.body;
            }
          }
        }
        statusById.set(id, status);
        responses.push({ id, status, headers, ...(body !== undefined ? { body } : {}) });
      }
      // Graph answers in any order: the emulator reverses it so clients never rely on it.
      return reply.type(GRAPH_CONTENT_TYPE).send({ responses: responses.reverse() });
    });
  }
}
