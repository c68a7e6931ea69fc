import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPortalUser } from '../../src/access/index.ts';
import { raiseAlert } from '../../src/store/repositories/audit.ts';
import { storeRecords } from '../../src/sync/audit.ts';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import { seedConversation } from '../support/protection-steps.ts';
import { apiWorld, connector, signInAs, type ApiWorld, type Session } from './harness.ts';

/**
 * The authorisation matrix: every route of /api/v1, called by anonymous, a viewer, an admin (session and API key) and
 * another organization's admin, in-process (`inject`) and over real HTTP. Another organization's object must answer
 * exactly what a non-existent one answers (404, same code), and lists must not carry anything of the other
 * organization.
 *
 * The routes come from the OpenAPI document the server publishes (`/api/docs/openapi.json`): every operation of it
 * must have its cases in {@link CASES} (the request data per route is kept here), and every entry of CASES must be an
 * operation of the document, so a new route cannot skip the matrix and a removed one cannot linger in it.
 */

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface Answer {
  status: number;
  body: string;
}
interface Caller {
  name: string;
  headers: Record<string, string>;
}
type Send = (caller: Caller, method: Method, url: string, body?: unknown) => Promise<Answer>;

/** One call of the matrix on an operation of the OpenAPI document. */
interface Case {
  /** Path with `{integration}`, `{run}`, `{finding}`, `{agent}`, `{environment}`, `{alert}`, `{event}`, `{key}`, `{user}`, `{conversation}` placeholders, and a query if any. */
  path: string;
  /** `public`: anyone may call it, and every caller gets the same answer ({@link Case.adminStatus}). */
  access: 'public' | 'viewer' | 'admin';
  body?: unknown;
  /** What the owner's admin gets (absent: not called by the admin here, e.g. removal, which has its own test). */
  adminStatus?: number;
  /** The path names an object of the organization (another organization gets 404); else a list or a create. */
  scoped: boolean;
  /** Ends the caller's session: called with API keys only (signing out is tested in auth.test.ts and api.test.ts). */
  endsSession?: true;
}

/** A {@link Case} with the method it is sent with. */
interface RouteCase extends Case {
  method: Method;
}

/** The cases of every operation of /api/v1, keyed `METHOD /path/{param}` as the OpenAPI document names it. */
const CASES: Record<string, Case[]> = {
  'POST /api/v1/auth/login': [
    { path: '/api/v1/auth/login', access: 'public', body: { email: 'nobody@contoso.test', password: 'not the password' }, adminStatus: 401, scoped: false },
  ],
  'POST /api/v1/auth/logout': [{ path: '/api/v1/auth/logout', access: 'viewer', adminStatus: 204, scoped: false, endsSession: true }],
  'GET /api/v1/auth/session': [{ path: '/api/v1/auth/session', access: 'viewer', adminStatus: 200, scoped: false }],
  'GET /api/v1/organization': [{ path: '/api/v1/organization', access: 'viewer', adminStatus: 200, scoped: false }],
  'GET /api/v1/organization/users': [{ path: '/api/v1/organization/users', access: 'admin', adminStatus: 200, scoped: false }],
  'POST /api/v1/organization/users': [
    {
      path: '/api/v1/organization/users',
      access: 'admin',
      body: { email: 'new@contoso.test', password: 'short', role: 'viewer' },
      adminStatus: 400,
      scoped: false,
    },
  ],
  // A spare viewer of Contoso, disabled by its admin (again: the answer is the same each time).
  'PATCH /api/v1/organization/users/{userId}': [
    { path: '/api/v1/organization/users/{user}', access: 'admin', body: { disabled: true }, adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/organization/api-keys': [{ path: '/api/v1/organization/api-keys', access: 'admin', adminStatus: 200, scoped: false }],
  'POST /api/v1/organization/api-keys': [
    { path: '/api/v1/organization/api-keys', access: 'admin', body: { name: 'matrix', role: 'viewer' }, adminStatus: 201, scoped: false },
  ],
  'DELETE /api/v1/organization/api-keys/{keyId}': [{ path: '/api/v1/organization/api-keys/{key}', access: 'admin', scoped: true }],
  'GET /api/v1/organization/sinks': [{ path: '/api/v1/organization/sinks', access: 'admin', adminStatus: 200, scoped: false }],
  'POST /api/v1/organization/sinks/test': [{ path: '/api/v1/organization/sinks/test', access: 'admin', adminStatus: 200, scoped: false }],
  'GET /api/v1/region': [{ path: '/api/v1/region', access: 'viewer', adminStatus: 200, scoped: false }],
  'GET /api/v1/integrations': [{ path: '/api/v1/integrations', access: 'viewer', adminStatus: 200, scoped: false }],
  'POST /api/v1/integrations': [
    {
      path: '/api/v1/integrations',
      access: 'admin',
      body: { mode: 'customer-app', name: 'dup', tenantId: 'x', clientId: 'y', clientSecret: 'z' },
      adminStatus: 400,
      scoped: false,
    },
  ],
  'POST /api/v1/integrations/consent-link': [
    { path: '/api/v1/integrations/consent-link', access: 'admin', body: { tenant: '{tenant}' }, adminStatus: 200, scoped: false },
  ],
  'GET /api/v1/integrations/{id}': [{ path: '/api/v1/integrations/{integration}', access: 'viewer', adminStatus: 200, scoped: true }],
  'POST /api/v1/integrations/{id}/verify': [{ path: '/api/v1/integrations/{integration}/verify', access: 'admin', adminStatus: 200, scoped: true }],
  'PUT /api/v1/integrations/{id}/secret': [
    { path: '/api/v1/integrations/{integration}/secret', access: 'admin', body: { clientSecret: '{secret}' }, adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/integrations/{id}/registration': [{ path: '/api/v1/integrations/{integration}/registration', access: 'viewer', adminStatus: 200, scoped: true }],
  'GET /api/v1/integrations/{id}/environments': [{ path: '/api/v1/integrations/{integration}/environments', access: 'viewer', adminStatus: 200, scoped: true }],
  'POST /api/v1/integrations/{id}/environments/grant': [
    { path: '/api/v1/integrations/{integration}/environments/grant', access: 'admin', adminStatus: 200, scoped: true },
  ],
  'DELETE /api/v1/integrations/{id}': [{ path: '/api/v1/integrations/{integration}', access: 'admin', scoped: true }],
  'POST /api/v1/integrations/{id}/runs': [{ path: '/api/v1/integrations/{integration}/runs', access: 'admin', adminStatus: 202, scoped: true }],
  'GET /api/v1/integrations/{id}/runs': [{ path: '/api/v1/integrations/{integration}/runs', access: 'viewer', adminStatus: 200, scoped: true }],
  'GET /api/v1/integrations/{id}/runs/live': [{ path: '/api/v1/integrations/{integration}/runs/live', access: 'viewer', adminStatus: 200, scoped: true }],
  'GET /api/v1/runs/{id}': [{ path: '/api/v1/runs/{run}', access: 'viewer', adminStatus: 200, scoped: true }],
  'GET /api/v1/inventory/{kind}': [
    ...['agents', 'apps', 'flows', 'connectors', 'connections', 'environments', 'users', 'groups', 'powerbi-workspaces', 'foundry-projects'].map((kind) => ({
      path: `/api/v1/inventory/${kind}`,
      access: 'viewer' as const,
      adminStatus: 200,
      scoped: false,
    })),
    { path: '/api/v1/inventory/agents?integrationId={integration}', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/agents': [
    { path: '/api/v1/agents', access: 'viewer', adminStatus: 200, scoped: false },
    { path: '/api/v1/agents?integrationId={integration}&limit=5', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/estate/agents': [
    { path: '/api/v1/estate/agents', access: 'viewer', adminStatus: 200, scoped: false },
    { path: '/api/v1/estate/agents?integrationId={integration}&sort=name&order=asc&q=a&limit=2', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/integrations/{id}/agents/{agentId}/reach': [
    { path: '/api/v1/integrations/{integration}/agents/{agent}/reach', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/integrations/{id}/environments/{environmentId}/estate': [
    { path: '/api/v1/integrations/{integration}/environments/{environment}/estate', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/integrations/{id}/agents/{agentId}': [
    { path: '/api/v1/integrations/{integration}/agents/{agent}', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/findings': [
    { path: '/api/v1/findings?status=all', access: 'viewer', adminStatus: 200, scoped: false },
    { path: '/api/v1/findings?integrationId={integration}', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/findings/{id}': [{ path: '/api/v1/findings/{finding}', access: 'viewer', adminStatus: 200, scoped: true }],
  'POST /api/v1/findings/{id}/suppression': [
    { path: '/api/v1/findings/{finding}/suppression', access: 'admin', body: { reason: 'matrix' }, adminStatus: 200, scoped: true },
  ],
  'DELETE /api/v1/findings/{id}/suppression': [{ path: '/api/v1/findings/{finding}/suppression', access: 'admin', adminStatus: 200, scoped: true }],
  'POST /api/v1/findings/suppression': [
    { path: '/api/v1/findings/suppression', access: 'admin', body: { ids: ['{finding}'], reason: 'matrix' }, adminStatus: 200, scoped: true },
  ],
  'POST /api/v1/findings/suppression/lift': [
    { path: '/api/v1/findings/suppression/lift', access: 'admin', body: { ids: ['{finding}'] }, adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/dashboard': [{ path: '/api/v1/dashboard', access: 'viewer', adminStatus: 200, scoped: false }],
  'GET /api/v1/checks': [{ path: '/api/v1/checks', access: 'viewer', adminStatus: 200, scoped: false }],
  'GET /api/v1/alerts': [{ path: '/api/v1/alerts', access: 'viewer', adminStatus: 200, scoped: false }],
  'GET /api/v1/compliance': [
    { path: '/api/v1/compliance', access: 'viewer', adminStatus: 200, scoped: false },
    { path: '/api/v1/compliance?integrationId={integration}&framework=scubagear', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/alerts/{id}': [{ path: '/api/v1/alerts/{alert}', access: 'viewer', adminStatus: 200, scoped: true }],
  'POST /api/v1/alerts/status': [
    { path: '/api/v1/alerts/status', access: 'admin', body: { ids: ['{alert}'], status: 'acknowledged' }, adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/events/{id}': [{ path: '/api/v1/events/{event}', access: 'viewer', adminStatus: 200, scoped: true }],
  'PUT /api/v1/alerts/{id}/status': [
    { path: '/api/v1/alerts/{alert}/status', access: 'admin', body: { status: 'acknowledged' }, adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/events': [
    { path: '/api/v1/events', access: 'viewer', adminStatus: 200, scoped: false },
    { path: '/api/v1/events?integrationId={integration}', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/exports/findings': [
    { path: '/api/v1/exports/findings?format=json', access: 'viewer', adminStatus: 200, scoped: false },
    { path: '/api/v1/exports/findings?format=ocsf&integrationId={integration}', access: 'viewer', adminStatus: 200, scoped: true },
    { path: '/api/v1/exports/findings?format=csv&severity=high&checkId=x&resourceId=y', access: 'viewer', adminStatus: 200, scoped: false },
  ],
  'GET /api/v1/protection': [{ path: '/api/v1/protection', access: 'viewer', adminStatus: 200, scoped: false }],
  'GET /api/v1/protection/summary': [{ path: '/api/v1/protection/summary?bucket=hour', access: 'viewer', adminStatus: 200, scoped: false }],
  'GET /api/v1/protection/{integrationId}/steps/facets': [
    { path: '/api/v1/protection/{integration}/steps/facets', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/protection/{integrationId}': [{ path: '/api/v1/protection/{integration}', access: 'viewer', adminStatus: 200, scoped: true }],
  'PUT /api/v1/protection/{integrationId}': [{ path: '/api/v1/protection/{integration}', access: 'admin', body: {}, adminStatus: 200, scoped: true }],
  'GET /api/v1/protection/{integrationId}/steps': [
    { path: '/api/v1/protection/{integration}/steps', access: 'viewer', adminStatus: 200, scoped: true },
    { path: '/api/v1/protection/{integration}/steps?outcome=decision&limit=1', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/protection/{integrationId}/conversations/{conversationId}': [
    { path: '/api/v1/protection/{integration}/conversations/{conversation}', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/protection/{integrationId}/transcripts': [
    { path: '/api/v1/protection/{integration}/transcripts?limit=5', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'GET /api/v1/protection/{integrationId}/policies': [
    { path: '/api/v1/protection/{integration}/policies?environmentId=env-1', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'POST /api/v1/protection/{integrationId}/containment': [
    // An agent id that is not a bot id: refused naming agentId before any sign-in starts (the flow: containment.test.ts).
    {
      path: '/api/v1/protection/{integration}/containment',
      access: 'admin',
      body: { action: 'contain', agentId: 'HR bot', environmentId: 'env-1' },
      adminStatus: 400,
      scoped: true,
    },
  ],
  'GET /api/v1/protection/{integrationId}/containment': [
    { path: '/api/v1/protection/{integration}/containment', access: 'viewer', adminStatus: 200, scoped: true },
  ],
  'PUT /api/v1/protection/{integrationId}/policy': [
    { path: '/api/v1/protection/{integration}/policy', access: 'admin', body: { mode: 'monitor' }, adminStatus: 200, scoped: true },
  ],
};

/** The operations of an OpenAPI document, as `METHOD /path/{param}`. */
function operationsOf(document: { paths: Record<string, Record<string, unknown>> }): string[] {
  const methods = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => methods.has(m))
      .map((m) => `${m.toUpperCase()} ${path}`),
  );
}

/** The matrix's routes, in the document's order; the keys of CASES missing from the document; its operations missing from CASES. */
function routesOf(document: { paths: Record<string, Record<string, unknown>> }) {
  const operations = operationsOf(document);
  const routes = operations.flatMap((op) => (CASES[op] ?? []).map((c) => ({ ...c, method: op.split(' ')[0] as Method })));
  return { routes, untested: operations.filter((op) => !CASES[op]?.length), unknown: Object.keys(CASES).filter((k) => !operations.includes(k)) };
}

/** The routes the tests below call, from the OpenAPI document the server publishes (set before the tests run). */
const ROUTES: RouteCase[] = [];

describe('authorisation matrix of /api/v1', () => {
  let w: ApiWorld;
  const ids: Record<string, string> = {};
  /** Everything of Contoso's that must never show in Fabrikam's answers. */
  const contosoMarks: string[] = [];
  const callers: Record<string, Caller> = {};
  let baseUrl: string;

  beforeAll(async () => {
    w = await apiWorld({ VIGIL_LOGIN_ATTEMPTS_PER_MINUTE: '1000' });
    const key = (k: string): Caller => ({ name: k, headers: { authorization: `Bearer ${k}` } });
    for (const [org, keyName] of [
      ['contoso', 'contosoAdmin'],
      ['fabrikam', 'fabrikamAdmin'],
    ] as const) {
      const c = connector(w.tenants[org]);
      const res = await w.app.inject({
        method: 'POST',
        url: '/api/v1/integrations',
        headers: key(w.keys[keyName]).headers,
        payload: { mode: 'customer-app', name: org, ...c },
      });
      expect(res.statusCode, res.body).toBe(201);
      const integrationId = res.json().integration.id as string;
      ids[`${org}Integration`] = integrationId;
      await collectAndEvaluate(w.rt, integrationId);
      ids[`${org}Alert`] = (
        await raiseAlert(
          w.rt.db,
          { integrationId, ruleId: 'matrix', severity: 'high', title: `${org} alert`, dedupeKey: org, detail: {} },
          new Date().toISOString(),
        )
      ).id;
    }
    const cid = ids.contosoIntegration!;
    ids.integration = cid;
    ids.run = (await w.rt.db.selectFrom('collection_runs').select('id').where('integration_id', '=', cid).executeTakeFirstOrThrow()).id;
    ids.finding = (
      await w.rt.db.selectFrom('findings').select('id').where('integration_id', '=', cid).where('status', '=', 'open').executeTakeFirstOrThrow()
    ).id;
    const agentRow = await w.rt.db.selectFrom('agents').select(['id', 'environment_id']).where('integration_id', '=', cid).executeTakeFirstOrThrow();
    ids.agent = agentRow.id;
    ids.environment = agentRow.environment_id;
    ids.alert = ids.contosoAlert!;
    // One audit record of Contoso (the API world does not collect audit content).
    ids.event = '6a0c2f7e-1d3b-4c55-9e0a-3b7f8d2c4e19';
    await storeRecords(
      w.rt.db,
      cid,
      'Audit.General',
      [
        {
          Id: ids.event,
          CreationTime: '2026-02-01T09:00:00',
          Operation: 'BotCreate',
          Workload: 'PowerPlatform',
          UserId: 'matrix@contoso.test',
          RecordType: 174,
        },
      ],
      new Date().toISOString(),
    );
    ids.conversation = (await seedConversation(w.rt.db, cid, { appId: '11111111-2222-4333-8444-555555555555', apiUrl: null })).conversationId;
    ids.key = (
      await w.rt.db.selectFrom('api_keys').select('id').where('organization_id', '=', w.orgs.contoso).where('name', '=', 'siem').executeTakeFirstOrThrow()
    ).id;
    ids.user = (await addPortalUser(w.rt.db, { organizationId: w.orgs.contoso, email: 'spare@contoso.test', password: w.password, role: 'viewer' })).id;
    ids.tenant = w.tenants.contoso.id;
    ids.secret = connector(w.tenants.contoso).clientSecret;
    contosoMarks.push(
      cid,
      ids.conversation,
      ids.run,
      ids.finding,
      ids.agent,
      ids.environment,
      ids.alert,
      ids.event,
      ids.user,
      w.tenants.contoso.id,
      'contoso alert',
    );
    const session = async (email: string): Promise<Caller> => {
      const s: Session = await signInAs(w.app, email, w.password);
      return { name: email, headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } };
    };
    Object.assign(callers, {
      anonymous: { name: 'anonymous', headers: {} },
      contosoViewer: await session('viewer@contoso.test'),
      contosoViewerKey: key(w.keys.contosoViewer),
      contosoAdmin: await session('admin@contoso.test'),
      contosoAdminKey: key(w.keys.contosoAdmin),
      fabrikamAdmin: await session('admin@fabrikam.test'),
      fabrikamAdminKey: key(w.keys.fabrikamAdmin),
      fabrikamViewer: await session('viewer@fabrikam.test'),
    });
    const { routes } = routesOf((await w.app.inject({ url: '/api/docs/openapi.json' })).json());
    ROUTES.push(...routes);
    baseUrl = await w.app.listen({ host: '127.0.0.1', port: 0 });
  }, 120_000);
  afterAll(async () => w?.close());

  const fill = (s: string, values: Record<string, string>) => s.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? `missing-${k}`);
  const bodyOf = (b: unknown, values: Record<string, string>) => (b === undefined ? undefined : (JSON.parse(fill(JSON.stringify(b), values)) as unknown));

  const injectSend: Send = async (caller, method, url, body) => {
    const res = await w.app.inject({
      method,
      url,
      headers: { ...caller.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: res.body };
  };
  const httpSend: Send = async (caller, method, url, body) => {
    const res = await fetch(`${baseUrl}${url}`, {
      method,
      headers: { ...caller.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.text() };
  };

  it('every operation of the OpenAPI document has its cases here, and every case is an operation of the document', async () => {
    const document = (await w.app.inject({ url: '/api/docs/openapi.json' })).json();
    const { untested, unknown } = routesOf(document);
    expect(untested, 'operations of /api/docs/openapi.json without a case in CASES (add one)').toEqual([]);
    expect(unknown, 'CASES keys that are not operations of the document (renamed or removed route?)').toEqual([]);
  });

  /** Whether the matrix sends this case as this caller (a case that ends the session is not sent with a session). */
  const sends = (r: RouteCase, caller: Caller) => !(r.endsSession && 'cookie' in caller.headers);

  for (const [transport, pick] of [
    ['in-process', () => injectSend],
    ['real HTTP', () => httpSend],
  ] as const) {
    describe(transport, () => {
      it('anonymous callers get 401 on every route but the public ones, before validation', async () => {
        for (const r of ROUTES) {
          const a = await pick()(callers.anonymous!, r.method, fill(r.path, ids), bodyOf(r.body, ids));
          if (r.access === 'public') {
            expect(a.status, `${r.method} ${r.path}: ${a.body.slice(0, 200)}`).toBe(r.adminStatus);
            expect(JSON.parse(a.body).error?.code).not.toBe('AUTHENTICATION_REQUIRED');
            continue;
          }
          expect(a.status, `${r.method} ${r.path}`).toBe(401);
          expect(JSON.parse(a.body).error.code).toBe('AUTHENTICATION_REQUIRED');
        }
      });

      it('a wrong or revoked API key is the same 401', async () => {
        const a = await pick()({ name: 'bad', headers: { authorization: 'Bearer vgl_not-a-key' } }, 'GET', '/api/v1/integrations');
        expect(a.status).toBe(401);
      });

      it('viewers read every viewer route and get 403 FORBIDDEN_ROLE on every admin route', async () => {
        for (const viewer of [callers.contosoViewer!, callers.contosoViewerKey!]) {
          for (const r of ROUTES.filter((route) => sends(route, viewer))) {
            const a = await pick()(viewer, r.method, fill(r.path, ids), bodyOf(r.body, ids));
            if (r.access === 'admin') {
              expect(a.status, `${viewer.name} ${r.method} ${r.path}`).toBe(403);
              expect(JSON.parse(a.body).error.code).toBe('FORBIDDEN_ROLE');
            } else {
              expect(a.status, `${viewer.name} ${r.method} ${r.path}: ${a.body.slice(0, 200)}`).toBe(r.adminStatus);
            }
          }
        }
      });

      it("admins get each route's answer (session and API key)", async () => {
        for (const admin of [callers.contosoAdmin!, callers.contosoAdminKey!]) {
          for (const r of ROUTES.filter((route) => sends(route, admin))) {
            if (r.adminStatus === undefined) continue;
            const a = await pick()(admin, r.method, fill(r.path, ids), bodyOf(r.body, ids));
            expect(a.status, `${admin.name} ${r.method} ${r.path}: ${a.body.slice(0, 300)}`).toBe(r.adminStatus);
          }
        }
      }, 60_000);

      it("another organization's admin and viewer: Contoso's objects are 404 like ids that never existed, and no list shows them", async () => {
        const absent = Object.fromEntries(
          Object.entries(ids).map(([k, v]) => [
            k,
            k === 'tenant' || k === 'secret' ? v : k === 'event' ? '00000000-0000-4000-8000-00000000dead' : `${v.split('_')[0]}_doesnotexist000000`,
          ]),
        );
        for (const other of [callers.fabrikamAdmin!, callers.fabrikamAdminKey!, callers.fabrikamViewer!]) {
          for (const r of ROUTES.filter((route) => sends(route, other))) {
            const a = await pick()(other, r.method, fill(r.path, ids), bodyOf(r.body, ids));
            const label = `${other.name} ${r.method} ${r.path}: ${a.body.slice(0, 200)}`;
            if (r.access === 'admin' && other === callers.fabrikamViewer) {
              expect(a.status, label).toBe(403);
              continue;
            }
            if (r.scoped) {
              expect(a.status, label).toBe(404);
              const never = await pick()(callers.contosoAdminKey!, r.method, fill(r.path, absent), bodyOf(r.body, absent));
              expect(never.status, `absent ${label}`).toBe(404);
              expect(JSON.parse(a.body).error.code).toBe(JSON.parse(never.body).error.code);
              // Ids (Vigil's `kind_…`, audit record GUIDs) differ; the rest of the answer is the same.
              const idless = (b: string) => b.replaceAll(/[a-z]+_\w+/g, '').replaceAll(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '');
              expect(idless(a.body)).toBe(idless(never.body));
            } else {
              expect(a.status, label).toBeLessThan(500);
            }
            if (r.scoped) continue; // the 404 repeats the id asked for, and equals the never-existed answer above
            // The consent link names the tenant the caller typed in: that is its input, not Contoso's data.
            for (const mark of contosoMarks.filter((m) => !(r.path.endsWith('/consent-link') && m === ids.tenant)))
              expect(a.body, `${label} leaks ${mark}`).not.toContain(mark);
          }
        }
        // Nothing they tried changed Contoso's objects.
        const still = await pick()(callers.contosoAdminKey!, 'GET', `/api/v1/integrations/${ids.integration}`);
        expect(still.status).toBe(200);
        const alert = await w.rt.db.selectFrom('alerts').select('status').where('id', '=', ids.alert!).executeTakeFirstOrThrow();
        expect(['new', 'acknowledged']).toContain(alert.status);
        const key = await w.rt.db.selectFrom('api_keys').select('revoked_at').where('id', '=', ids.key!).executeTakeFirstOrThrow();
        expect(key.revoked_at).toBeNull();
      }, 60_000);
    });
  }

  it('the owner revokes an API key and removes an integration; both are gone for everyone after', async () => {
    const admin = callers.contosoAdminKey!;
    expect((await injectSend(admin, 'DELETE', `/api/v1/organization/api-keys/${ids.key}`)).status).toBe(204);
    expect((await injectSend(callers.contosoViewerKey!, 'GET', '/api/v1/integrations')).status).toBe(401);
    expect((await injectSend(admin, 'DELETE', `/api/v1/integrations/${ids.integration}`)).status).toBe(204);
    expect((await injectSend(admin, 'GET', `/api/v1/integrations/${ids.integration}`)).status).toBe(404);
    expect((await injectSend(admin, 'GET', `/api/v1/findings/${ids.finding}`)).status).toBe(404);
  });
});
