import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raiseAlert } from '../../src/store/repositories/audit.ts';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import { apiWorld, connector, signInAs, type ApiWorld, type Session } from './harness.ts';

/**
 * The authorisation matrix: every route of /api/v1, called by anonymous, a viewer, an admin (session and API key) and
 * another organization's admin, in-process (`inject`) and over real HTTP. Another organization's object must answer
 * exactly what a non-existent one answers (404, same code), and lists must not carry anything of the other
 * organization.
 */

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface Answer {
  status: number;
  body: string;
}
interface Caller {
  name: string;
  headers: Record<string, string>;
}
type Send = (caller: Caller, method: Method, url: string, body?: unknown) => Promise<Answer>;

interface RouteCase {
  method: Method;
  /** Path with `{integration}`, `{run}`, `{finding}`, `{agent}`, `{alert}`, `{key}` placeholders. */
  path: string;
  access: 'viewer' | 'admin';
  body?: unknown;
  /** What the owner's admin gets (absent: not called by the admin here, e.g. removal, which has its own test). */
  adminStatus?: number;
  /** The path names an object of the organization (another organization gets 404); else a list or a create. */
  scoped: boolean;
}

const ROUTES: RouteCase[] = [
  { method: 'GET', path: '/api/v1/auth/session', access: 'viewer', adminStatus: 200, scoped: false },
  { method: 'GET', path: '/api/v1/organization', access: 'viewer', adminStatus: 200, scoped: false },
  { method: 'GET', path: '/api/v1/organization/users', access: 'admin', adminStatus: 200, scoped: false },
  { method: 'POST', path: '/api/v1/organization/users', access: 'admin', body: { email: 'new@contoso.test', password: 'short', role: 'viewer' }, adminStatus: 400, scoped: false },
  { method: 'GET', path: '/api/v1/organization/api-keys', access: 'admin', adminStatus: 200, scoped: false },
  { method: 'POST', path: '/api/v1/organization/api-keys', access: 'admin', body: { name: 'matrix', role: 'viewer' }, adminStatus: 201, scoped: false },
  { method: 'DELETE', path: '/api/v1/organization/api-keys/{key}', access: 'admin', scoped: true },
  { method: 'GET', path: '/api/v1/region', access: 'viewer', adminStatus: 200, scoped: false },
  { method: 'GET', path: '/api/v1/integrations', access: 'viewer', adminStatus: 200, scoped: false },
  { method: 'POST', path: '/api/v1/integrations', access: 'admin', body: { mode: 'customer-app', name: 'dup', tenantId: 'x', clientId: 'y', clientSecret: 'z' }, adminStatus: 400, scoped: false },
  { method: 'POST', path: '/api/v1/integrations/consent-link', access: 'admin', body: { tenant: '{tenant}' }, adminStatus: 200, scoped: false },
  { method: 'GET', path: '/api/v1/integrations/{integration}', access: 'viewer', adminStatus: 200, scoped: true },
  { method: 'POST', path: '/api/v1/integrations/{integration}/verify', access: 'admin', adminStatus: 200, scoped: true },
  { method: 'PUT', path: '/api/v1/integrations/{integration}/secret', access: 'admin', body: { clientSecret: '{secret}' }, adminStatus: 200, scoped: true },
  { method: 'GET', path: '/api/v1/integrations/{integration}/registration', access: 'viewer', adminStatus: 200, scoped: true },
  { method: 'GET', path: '/api/v1/integrations/{integration}/environments', access: 'viewer', adminStatus: 200, scoped: true },
  { method: 'POST', path: '/api/v1/integrations/{integration}/environments/grant', access: 'admin', adminStatus: 200, scoped: true },
  { method: 'DELETE', path: '/api/v1/integrations/{integration}', access: 'admin', scoped: true },
  { method: 'POST', path: '/api/v1/integrations/{integration}/runs', access: 'admin', adminStatus: 202, scoped: true },
  { method: 'GET', path: '/api/v1/integrations/{integration}/runs', access: 'viewer', adminStatus: 200, scoped: true },
  { method: 'GET', path: '/api/v1/integrations/{integration}/runs/live', access: 'viewer', adminStatus: 200, scoped: true },
  { method: 'GET', path: '/api/v1/runs/{run}', access: 'viewer', adminStatus: 200, scoped: true },
  ...['agents', 'apps', 'flows', 'connectors', 'connections', 'environments', 'users', 'groups', 'powerbi-workspaces', 'foundry-projects'].map((kind) => ({ method: 'GET' as const, path: `/api/v1/inventory/${kind}`, access: 'viewer' as const, adminStatus: 200, scoped: false })),
  { method: 'GET', path: '/api/v1/inventory/agents?integrationId={integration}', access: 'viewer', adminStatus: 200, scoped: true },
  { method: 'GET', path: '/api/v1/integrations/{integration}/agents/{agent}', access: 'viewer', adminStatus: 200, scoped: true },
  { method: 'GET', path: '/api/v1/findings?status=all', access: 'viewer', adminStatus: 200, scoped: false },
  { method: 'GET', path: '/api/v1/findings?integrationId={integration}', access: 'viewer', adminStatus: 200, scoped: true },
  { method: 'GET', path: '/api/v1/findings/{finding}', access: 'viewer', adminStatus: 200, scoped: true },
  { method: 'POST', path: '/api/v1/findings/{finding}/suppression', access: 'admin', body: { reason: 'matrix' }, adminStatus: 200, scoped: true },
  { method: 'DELETE', path: '/api/v1/findings/{finding}/suppression', access: 'admin', adminStatus: 200, scoped: true },
  { method: 'GET', path: '/api/v1/dashboard', access: 'viewer', adminStatus: 200, scoped: false },
  { method: 'GET', path: '/api/v1/alerts', access: 'viewer', adminStatus: 200, scoped: false },
  { method: 'PUT', path: '/api/v1/alerts/{alert}/status', access: 'admin', body: { status: 'acknowledged' }, adminStatus: 200, scoped: true },
  { method: 'GET', path: '/api/v1/events', access: 'viewer', adminStatus: 200, scoped: false },
  { method: 'GET', path: '/api/v1/events?integrationId={integration}', access: 'viewer', adminStatus: 200, scoped: true },
  { method: 'GET', path: '/api/v1/exports/findings?format=json', access: 'viewer', adminStatus: 200, scoped: false },
  { method: 'GET', path: '/api/v1/exports/findings?format=ocsf&integrationId={integration}', access: 'viewer', adminStatus: 200, scoped: true },
];

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
    for (const [org, keyName] of [['contoso', 'contosoAdmin'], ['fabrikam', 'fabrikamAdmin']] as const) {
      const c = connector(w.tenants[org]);
      const res = await w.app.inject({ method: 'POST', url: '/api/v1/integrations', headers: key(w.keys[keyName]).headers, payload: { mode: 'customer-app', name: org, ...c } });
      expect(res.statusCode, res.body).toBe(201);
      const integrationId = res.json().integration.id as string;
      ids[`${org}Integration`] = integrationId;
      await collectAndEvaluate(w.rt, integrationId);
      ids[`${org}Alert`] = (await raiseAlert(w.rt.db, { integrationId, ruleId: 'matrix', severity: 'high', title: `${org} alert`, dedupeKey: org, detail: {} }, new Date().toISOString())).id;
    }
    const cid = ids.contosoIntegration!;
    ids.integration = cid;
    ids.run = (await w.rt.db.selectFrom('collection_runs').select('id').where('integration_id', '=', cid).executeTakeFirstOrThrow()).id;
    ids.finding = (await w.rt.db.selectFrom('findings').select('id').where('integration_id', '=', cid).where('status', '=', 'open').executeTakeFirstOrThrow()).id;
    ids.agent = (await w.rt.db.selectFrom('agents').select('id').where('integration_id', '=', cid).executeTakeFirstOrThrow()).id;
    ids.alert = ids.contosoAlert!;
    ids.key = (await w.rt.db.selectFrom('api_keys').select('id').where('organization_id', '=', w.orgs.contoso).where('name', '=', 'siem').executeTakeFirstOrThrow()).id;
    ids.tenant = w.tenants.contoso.id;
    ids.secret = connector(w.tenants.contoso).clientSecret;
    contosoMarks.push(cid, ids.run, ids.finding, ids.agent, ids.alert, w.tenants.contoso.id, 'contoso alert');
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
    baseUrl = await w.app.listen({ host: '127.0.0.1', port: 0 });
  }, 120_000);
  afterAll(async () => w?.close());

  const fill = (s: string, values: Record<string, string>) => s.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? `missing-${k}`);
  const bodyOf = (b: unknown, values: Record<string, string>) => (b === undefined ? undefined : (JSON.parse(fill(JSON.stringify(b), values)) as unknown));

  const injectSend: Send = async (caller, method, url, body) => {
    const res = await w.app.inject({ method, url, headers: { ...caller.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
    return { status: res.statusCode, body: res.body };
  };
  const httpSend: Send = async (caller, method, url, body) => {
    const res = await fetch(`${baseUrl}${url}`, { method, headers: { ...caller.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: await res.text() };
  };

  for (const [transport, pick] of [['in-process', () => injectSend], ['real HTTP', () => httpSend]] as const) {
    describe(transport, () => {
      it('anonymous callers get 401 on every route, before validation', async () => {
        for (const r of ROUTES) {
          const a = await pick()(callers.anonymous!, r.method, fill(r.path, ids), bodyOf(r.body, ids));
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
          for (const r of ROUTES) {
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
          for (const r of ROUTES) {
            if (r.adminStatus === undefined) continue;
            const a = await pick()(admin, r.method, fill(r.path, ids), bodyOf(r.body, ids));
            expect(a.status, `${admin.name} ${r.method} ${r.path}: ${a.body.slice(0, 300)}`).toBe(r.adminStatus);
          }
        }
      }, 60_000);

      it("another organization's admin and viewer: Contoso's objects are 404 like ids that never existed, and no list shows them", async () => {
        const absent = Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, k === 'tenant' || k === 'secret' ? v : `${v.split('_')[0]}_doesnotexist000000`]));
        for (const other of [callers.fabrikamAdmin!, callers.fabrikamAdminKey!, callers.fabrikamViewer!]) {
          for (const r of ROUTES) {
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
              expect(a.body.replaceAll(/[a-z]+_\w+/g, '')).toBe(never.body.replaceAll(/[a-z]+_\w+/g, ''));
            } else {
              expect(a.status, label).toBeLessThan(500);
            }
            if (r.scoped) continue; // the 404 repeats the id asked for, and equals the never-existed answer above
            // The consent link names the tenant the caller typed in: that is its input, not Contoso's data.
            for (const mark of contosoMarks.filter((m) => !(r.path.endsWith('/consent-link') && m === ids.tenant))) expect(a.body, `${label} leaks ${mark}`).not.toContain(mark);
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
