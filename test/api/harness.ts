import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { generateManagedApp, generateTenant, startEmulator, type ManagedApp, type RunningEmulator, type Tenant } from '../../emulator/index.ts';
import { addPortalUser, createApiKey, ensureOrganization } from '../../src/access/index.ts';
import { buildServer } from '../../src/api/server.ts';
import { loadCustomProfile } from '../../src/config/cloud.ts';
import { InProcessQueue } from '../../src/jobs/memory.ts';
import { collectionJobHandler } from '../../src/sync/worker.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { apiContext } from '../../src/main/service.ts';
import { TEST_ENV } from '../e2e/harness.ts';

/**
 * API test world: two customer organizations (Contoso and Fabrikam), each with its own emulated tenant, an admin
 * and a viewer, and API keys; the server built exactly as `vigil serve` builds it (real queue and workers, the
 * emulator over HTTPS), for `inject()` and for real HTTP once listening.
 */
export interface ApiWorld {
  rt: Runtime;
  emulator: RunningEmulator;
  tenants: { contoso: Tenant; fabrikam: Tenant };
  /** The operator-managed application (Mode B), configured in the runtime. */
  managed: ManagedApp;
  app: FastifyInstance;
  queue: InProcessQueue;
  orgs: { contoso: string; fabrikam: string };
  /** Passwords of the users `admin@contoso.test`, `viewer@contoso.test`, `admin@fabrikam.test`, `viewer@fabrikam.test`. */
  password: string;
  keys: { contosoViewer: string; contosoAdmin: string; fabrikamAdmin: string };
  close(): Promise<void>;
}

/** The connector app (Mode A credentials) of a generated tenant. */
export function connector(t: Tenant) {
  const app = t.apps.find((a) => a.appId === t.connectorAppId)!;
  return { tenantId: t.id, clientId: app.appId, clientSecret: app.secrets[0]!.value };
}

/** Small tenants: every kind of object, few of each. */
const SIZES = {
  users: 12,
  guests: 2,
  groups: 3,
  environments: 3,
  agents: 4,
  apps: 3,
  flows: 3,
  connectors: 2,
  connections: 3,
  powerBiWorkspaces: 2,
  foundryAccounts: 1,
  foundryProjects: 1,
  teamsAppsPerUser: 1,
};

export async function apiWorld(env: Record<string, string> = {}): Promise<ApiWorld> {
  const contoso = generateTenant({ seed: 'api-contoso', permissions: 'documented', sizes: SIZES });
  const fabrikam = generateTenant({ seed: 'api-fabrikam', permissions: 'documented', sizes: SIZES });
  const managed = generateManagedApp({ seed: 'api-operator', redirectUris: ['http://127.0.0.1:8080/consent/callback'] });
  const emulator = await startEmulator({ tenants: [contoso, fabrikam], managedApps: [managed] });
  const endpointsFile = emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'vigil-emu-')));
  const rt = await createRuntime({
    dataDir: mkdtempSync(join(tmpdir(), 'vigil-data-')),
    cloud: loadCustomProfile(endpointsFile),
    env: {
      ...TEST_ENV,
      VIGIL_AUDIT_IN_JOBS: 'false',
      VIGIL_MANAGED_APP_CLIENT_ID: managed.appId,
      VIGIL_MANAGED_APP_CLIENT_SECRET: managed.clientSecret,
      VIGIL_CONSENT_REDIRECT_URI: 'http://127.0.0.1:8080/consent/callback',
      ...env,
    },
  });
  const queue = new InProcessQueue(rt.logger, { retryLimit: 0, retryDelaySeconds: 1, expireInSeconds: 600 });
  await queue.start();
  await queue.work(collectionJobHandler({ ...rt, audit: { enabled: false } }), { concurrency: 2 });
  const app = await buildServer({
    ready: async () => ({ ok: true, detail: {} }),
    api: { ...(await apiContext(rt, queue)), liveIdleSeconds: 5 },
    metrics: rt.metrics,
    trustProxy: rt.config.server.trustProxy,
    portalDir: join(import.meta.dirname, 'no-portal'),
  });
  const password = 'correct horse battery staple';
  const orgs = { contoso: (await ensureOrganization(rt.db, 'Contoso')).id, fabrikam: (await ensureOrganization(rt.db, 'Fabrikam')).id };
  for (const [org, id] of Object.entries(orgs)) {
    await addPortalUser(rt.db, { organizationId: id, email: `admin@${org}.test`, password, role: 'admin' });
    await addPortalUser(rt.db, { organizationId: id, email: `viewer@${org}.test`, password, role: 'viewer' });
  }
  const keys = {
    contosoViewer: (await createApiKey(rt.db, { organizationId: orgs.contoso, name: 'siem', role: 'viewer' })).key,
    contosoAdmin: (await createApiKey(rt.db, { organizationId: orgs.contoso, name: 'automation', role: 'admin' })).key,
    fabrikamAdmin: (await createApiKey(rt.db, { organizationId: orgs.fabrikam, name: 'automation', role: 'admin' })).key,
  };
  return {
    rt,
    emulator,
    tenants: { contoso, fabrikam },
    managed,
    app,
    queue,
    orgs,
    password,
    keys,
    async close() {
      await app.close();
      await queue.stop({ timeoutSeconds: 5 });
      await rt.close();
      await emulator.close();
    },
  };
}

/** A signed-in portal session: the cookie header to send and the CSRF token. */
export interface Session {
  cookie: string;
  csrf: string;
}

/** Signs in through the API and returns the session's cookies. */
export async function signInAs(app: FastifyInstance, email: string, password: string): Promise<Session> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`sign-in of ${email} answered ${res.statusCode}: ${res.body}`);
  const cookies = res.cookies as { name: string; value: string }[];
  return { cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; '), csrf: (res.json() as { csrfToken: string }).csrfToken };
}

/** The `Authorization` header of an API key. */
function bearer(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` };
}

/**
 * Requests of one API key through `inject()` (Contoso's admin key unless another is given): `get(url)` and
 * `post(url, payload)` with the payload as JSON. `world` is read at each call (the world is made in `beforeAll`).
 */
export function keyRequests(world: () => ApiWorld) {
  return {
    get: async (url: string, key = world().keys.contosoAdmin) => world().app.inject({ method: 'GET', url, headers: bearer(key) }),
    post: async (url: string, payload: unknown, key = world().keys.contosoAdmin) =>
      world().app.inject({ method: 'POST', url, headers: { ...bearer(key), 'content-type': 'application/json' }, payload: JSON.stringify(payload) }),
  };
}

/** The id of Contoso's default environment that {@link triageWorld} stores. */
export const TRIAGE_ENVIRONMENT = 'Default-11111111-2222-4333-8444-555555555555';

/**
 * The set-up the triage tests share: a customer-app integration per organization, created through the API by each
 * organization's admin (expects 201), and Contoso's default environment ({@link TRIAGE_ENVIRONMENT}, "Contoso
 * (default)") stored as a collection stores it. Returns the integrations' ids.
 */
export async function triageWorld(w: ApiWorld): Promise<Record<'contoso' | 'fabrikam', string>> {
  const ids: Record<'contoso' | 'fabrikam', string> = { contoso: '', fabrikam: '' };
  for (const org of ['contoso', 'fabrikam'] as const) {
    const res = await w.app.inject({
      method: 'POST',
      url: '/api/v1/integrations',
      headers: bearer(org === 'contoso' ? w.keys.contosoAdmin : w.keys.fabrikamAdmin),
      payload: { mode: 'customer-app', name: org, ...connector(w.tenants[org]) },
    });
    expect(res.statusCode, res.body).toBe(201);
    ids[org] = res.json().integration.id as string;
  }
  await w.rt.db
    .insertInto('environments')
    .values({
      integration_id: ids.contoso,
      id: TRIAGE_ENVIRONMENT,
      display_name: 'Contoso (default)',
      sku: 'Default',
      is_default: 1,
      region: 'europe',
      dataverse_url: null,
      state: 'Ready',
      first_seen_at: '2026-01-01T00:00:00.000Z',
      last_seen_at: '2026-01-01T00:00:00.000Z',
      raw: '{}',
      last_seen_run: 'run_x',
      deleted_at: null,
    })
    .execute();
  return ids;
}
