import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateManagedApp, generateTenant, startEmulator, type ManagedApp, type RunningEmulator, type Tenant } from '../../emulator/index.ts';
import { tenantAccounts } from '../../emulator/generate.ts';
import { ensureOrganization } from '../../src/access/index.ts';
import { loadCustomProfile } from '../../src/config/cloud.ts';
import { VigilError } from '../../src/core/errors.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { consentLink } from '../../src/onboarding/consent.ts';
import { addCustomerAppIntegration, addManagedAppIntegration } from '../../src/onboarding/integrations.ts';
import { listTenantBindings } from '../../src/onboarding/tenants.ts';
import { signState } from '../../src/platform/crypto/signed-state.ts';
import { IdTokenRejected, validateIdToken } from '../../src/platform/identity/oidc.ts';
import { browse, consentCallbackIntercept, type Intercept } from '../support/browser.ts';
import { TEST_ENV } from './harness.ts';

const REDIRECT = 'http://127.0.0.1:8080/consent/callback';

/**
 * Issue 14, point 2, as the attack: organization A (the attacker) tries to take tenants that organization B's
 * administrators consented to, proved, or never touched — through the use case the API and portal call, through
 * forged and replayed callbacks, and with ID tokens that must not prove anything.
 */
describe('a tenant belongs to the organization whose administrator proved it', () => {
  let emulator: RunningEmulator;
  let rt: Runtime;
  let managed: ManagedApp;
  let dispatcher: Agent;
  let intercept: Intercept & { close(): Promise<void> };
  let never: Tenant; // never consented
  let consented: Tenant; // B's link, consent given, the sign-in never completed
  let proven: Tenant; // B's link, consent and the administrator's sign-in: bound to B
  let own: Tenant; // A's own tenant, proven by A's administrator
  let orgA: string;
  let orgB: string;
  const spOf = (t: Tenant) => t.apps.find((a) => a.appId === managed.appId)?.servicePrincipalObjectId;

  beforeAll(async () => {
    const sizes = { users: 8, guests: 0, groups: 1, environments: 1, agents: 1 };
    [never, consented, proven, own] = ['never', 'consented', 'proven', 'own'].map((s) => generateTenant({ seed: `bind-${s}`, sizes })) as [
      Tenant,
      Tenant,
      Tenant,
      Tenant,
    ];
    managed = generateManagedApp({ seed: 'bind-operator', redirectUris: [REDIRECT] });
    emulator = await startEmulator({ tenants: [never, consented, proven, own], managedApps: [managed] });
    dispatcher = new Agent({ connect: { ca: emulator.caPem } });
    rt = await createRuntime({
      dataDir: mkdtempSync(join(tmpdir(), 'vigil-bind-')),
      cloud: loadCustomProfile(emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'vigil-emu-')))),
      env: {
        ...TEST_ENV,
        VIGIL_MANAGED_APP_CLIENT_ID: managed.appId,
        VIGIL_MANAGED_APP_CLIENT_SECRET: managed.clientSecret,
        VIGIL_CONSENT_REDIRECT_URI: REDIRECT,
      },
    });
    orgA = (await ensureOrganization(rt.db, 'Attacker')).id;
    orgB = (await ensureOrganization(rt.db, 'Owner')).id;
    intercept = await consentCallbackIntercept(rt, REDIRECT);
    // B consents to `consented` but its administrator never completes the sign-in (the browser stops at the authorize step).
    const half = await browse((await consentLink(rt, consented.id, undefined, { organizationId: orgB })).url, { dispatcher, intercept, maxHops: 2 });
    expect(half.final.location).toMatch(/\/oauth2\/v2\.0\/authorize\?/);
    // B's administrator completes the whole flow for `proven`.
    const full = await browse((await consentLink(rt, proven.id, undefined, { organizationId: orgB })).url, { dispatcher, intercept });
    expect(full.final.body).toMatch(/Consent granted/);
  });
  afterAll(async () => {
    await intercept?.close();
    await rt?.close();
    await emulator?.close();
  });

  async function refusal(
    p: Promise<unknown>,
  ): Promise<{ code: string; kind: string; message: string; remediation: string | undefined; field: string | undefined }> {
    const e = await p.then(
      () => null,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(VigilError);
    const v = e as VigilError;
    return { code: v.code, kind: v.kind, message: v.message, remediation: v.remediation, field: v.field };
  }

  it("B's administrator's sign-in bound the proven tenant to B, recorded with who and how", async () => {
    const accounts = tenantAccounts(proven);
    expect((await listTenantBindings(rt.db)).map((b) => [b.tenantId, b.organization, b.method, b.provenBy])).toEqual([
      [proven.id, 'Owner', 'oidc-admin', accounts.globalAdmin!.userPrincipalName],
    ]);
  });

  it('A gets one and the same answer for a tenant never consented, consented by B, and bound to B — even with the right Object ID', async () => {
    const answers = [];
    for (const t of [never, consented, proven]) {
      const r = await refusal(addManagedAppIntegration(rt, { organizationId: orgA, tenantId: t.id, spObjectId: spOf(t) ?? spOf(proven)! }));
      answers.push({ ...r, message: r.message.replace(t.id, '<tenant>'), remediation: r.remediation?.replace(t.id, '<tenant>') });
    }
    expect(answers[0]).toMatchObject({ code: 'TENANT_NOT_PROVEN', kind: 'authorization' });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    // A wrong Object ID does not tell the consented tenant apart either (no OBJECT_ID_MISMATCH before the proof).
    const wrong = await refusal(
      addManagedAppIntegration(rt, { organizationId: orgA, tenantId: consented.id, spObjectId: '00000000-0000-4000-8000-000000000001' }),
    );
    expect(wrong.code).toBe('TENANT_NOT_PROVEN');
    // B itself creates the integration for the tenant it proved, verified.
    const { report } = await addManagedAppIntegration(rt, { organizationId: orgB, tenantId: proven.id, spObjectId: spOf(proven)!, name: 'proven' });
    expect(report.verified).toBe(true);
    // B still has to prove `consented` (its sign-in never happened).
    expect((await refusal(addManagedAppIntegration(rt, { organizationId: orgB, tenantId: consented.id, spObjectId: spOf(consented)! }))).code).toBe(
      'TENANT_NOT_PROVEN',
    );
  });

  it('forged callbacks bind nothing: tampered state, a state naming no flow, replayed consent and sign-in answers', async () => {
    const before = await listTenantBindings(rt.db);
    const link = await consentLink(rt, own.id, undefined, { organizationId: orgA });
    const cb = (q: Record<string, string>) => intercept.handle(`/consent/callback?${new URLSearchParams(q)}`);
    const state = new URL(link.url).searchParams.get('state')!;
    // Tampered state (last characters of the signature changed).
    expect(await cb({ admin_consent: 'True', tenant: own.id, state: `${state.slice(0, -3)}abc` })).toMatchObject({
      status: 400,
      body: expect.stringMatching(/not valid/),
    });
    // A correctly signed state (someone with the master key? no: a test forging with it) naming no flow.
    expect(await cb({ admin_consent: 'True', tenant: own.id, state: signState(rt.kek, { f: 'cf_nope', s: 'signin' }, 60) })).toMatchObject({ status: 400 });
    // The typed `tenant` parameter is no proof: another tenant than the link's is refused.
    expect(await cb({ admin_consent: 'True', tenant: never.id, state })).toMatchObject({ status: 400, body: expect.stringMatching(/does not match/) });
    // The consent answer moves on to the sign-in once; replayed, it is refused.
    const first = await cb({ admin_consent: 'True', tenant: own.id, state });
    expect(first.status).toBe(302);
    expect(first.location).toMatch(
      new RegExp(`/${own.id}/oauth2/v2\\.0/authorize\\?.*response_type=code.*scope=openid\\+profile.*nonce=.*code_challenge=.*code_challenge_method=S256`),
    );
    expect(await cb({ admin_consent: 'True', tenant: own.id, state })).toMatchObject({ status: 400, body: expect.stringMatching(/already used/) });
    // A sign-in answer with a made-up code proves nothing, and consumes the flow.
    const signinState = new URL(first.location!).searchParams.get('state')!;
    expect(await cb({ code: 'made-up', state: signinState })).toMatchObject({ status: 403, body: expect.stringMatching(/did not prove/) });
    expect(await cb({ code: 'made-up', state: signinState })).toMatchObject({ status: 400, body: expect.stringMatching(/already used/) });
    expect(await listTenantBindings(rt.db)).toEqual(before);
  });

  it('a replayed complete flow (consent and sign-in URLs as the browser saw them) is refused and changes nothing', async () => {
    const run = await browse((await consentLink(rt, own.id, undefined, { organizationId: orgA })).url, { dispatcher, intercept });
    expect(run.final.body).toMatch(/Consent granted/);
    const callbacks = run.hops.filter((h) => h.url.startsWith(intercept.prefix));
    expect(callbacks).toHaveLength(2);
    for (const h of callbacks) {
      const again = await intercept.handle(new URL(h.url).pathname + new URL(h.url).search);
      expect(again).toMatchObject({ status: 400, body: expect.stringMatching(/already used/) });
    }
    expect((await listTenantBindings(rt.db)).find((b) => b.tenantId === own.id)).toMatchObject({ organization: 'Attacker', method: 'oidc-admin' });
  });

  it("the sign-in of a non-administrator, or of another tenant's administrator, binds nothing", async () => {
    const target = never;
    const ordinary = tenantAccounts(target).ordinaryUser!;
    emulator.control.setConsentBehavior(target.id, 'approve');
    emulator.control.setBrowserUser(target.id, ordinary.userPrincipalName);
    const asUser = await browse((await consentLink(rt, target.id, undefined, { organizationId: orgA })).url, { dispatcher, intercept });
    expect(asUser.final).toMatchObject({ status: 403, body: expect.stringMatching(/holds no role that can grant admin consent/) });
    // An administrator of another tenant cannot sign in at this tenant's endpoint (AADSTS50020): the browser never comes back.
    emulator.control.setBrowserUser(target.id, tenantAccounts(own).globalAdmin!.userPrincipalName);
    const foreign = await browse((await consentLink(rt, target.id, undefined, { organizationId: orgA })).url, { dispatcher, intercept });
    expect(foreign.final).toMatchObject({ status: 400, body: expect.stringMatching(/AADSTS50020/) });
    emulator.control.setBrowserUser(target.id, null);
    expect((await listTenantBindings(rt.db)).some((b) => b.tenantId === target.id)).toBe(false);
    expect((await refusal(addManagedAppIntegration(rt, { organizationId: orgA, tenantId: target.id, spObjectId: spOf(target)! }))).code).toBe(
      'TENANT_NOT_PROVEN',
    );
  });

  it("a real administrator of a tenant bound to B, signing in through A's link, does not move it", async () => {
    const run = await browse((await consentLink(rt, proven.id, undefined, { organizationId: orgA })).url, { dispatcher, intercept });
    expect(run.final).toMatchObject({ status: 409, body: expect.stringMatching(/connected to another organization/) });
    expect(run.final.body).not.toMatch(/Owner/);
    expect((await listTenantBindings(rt.db)).find((b) => b.tenantId === proven.id)).toMatchObject({ organization: 'Owner' });
  });

  it('ID tokens that must not prove anything: another tenant, another audience, a non-admin, expired, wrong nonce, unsigned, foreign key', async () => {
    const base = { cloud: rt.cloud, http: rt.http, tenantId: never.id, clientId: managed.appId, nonce: 'n-1' };
    const admin = tenantAccounts(never).globalAdmin!;
    const reason = async (idToken: string, over: Partial<typeof base> = {}): Promise<string> => {
      const e = await validateIdToken({ ...base, ...over, idToken }).then(
        () => null,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(IdTokenRejected);
      return (e as IdTokenRejected).reason;
    };
    const good = await emulator.control.mintIdToken({ tenantId: never.id, userId: admin.id, clientId: managed.appId, nonce: 'n-1' });
    await expect(validateIdToken({ ...base, idToken: good })).resolves.toMatchObject({
      tid: never.id,
      oid: admin.id,
      username: admin.userPrincipalName,
      roles: ['Global Administrator'],
    });
    const otherTenant = await emulator.control.mintIdToken({
      tenantId: own.id,
      userId: tenantAccounts(own).globalAdmin!.id,
      clientId: managed.appId,
      nonce: 'n-1',
    });
    expect(await reason(otherTenant)).toBe('issuer');
    expect(
      await reason(
        await emulator.control.mintIdToken({ tenantId: never.id, userId: admin.id, clientId: '11111111-2222-4333-8444-555555555555', nonce: 'n-1' }),
      ),
    ).toBe('audience');
    // A Power Platform Administrator holds a directory role, but not one that may grant tenant-wide consent.
    expect(
      await reason(
        await emulator.control.mintIdToken({ tenantId: never.id, userId: tenantAccounts(never).powerPlatformAdmin!.id, clientId: managed.appId, nonce: 'n-1' }),
      ),
    ).toBe('not-admin');
    // A user without any role gets no `wids` at all.
    expect(
      await reason(
        await emulator.control.mintIdToken({ tenantId: never.id, userId: tenantAccounts(never).ordinaryUser!.id, clientId: managed.appId, nonce: 'n-1' }),
      ),
    ).toBe('no-roles-claim');
    expect(
      await reason(
        await emulator.control.mintIdToken({ tenantId: never.id, userId: admin.id, clientId: managed.appId, nonce: 'n-1', expiresInSeconds: -3600 }),
      ),
    ).toBe('expired');
    // An Application Administrator (role template 9b895d92-…) administers applications but cannot consent to Graph
    // application permissions, so could not have given the consent a binding rests on.
    const appAdmin = never.users.find((u) => u.id === tenantAccounts(never).ordinaryUser!.id)!;
    appAdmin.directoryRoles = ['9b895d92-2cd3-44c7-9d02-a6ac2d5ea5c3'];
    expect(await reason(await emulator.control.mintIdToken({ tenantId: never.id, userId: appAdmin.id, clientId: managed.appId, nonce: 'n-1' }))).toBe(
      'not-admin',
    );
    appAdmin.directoryRoles = [];
    expect(await reason(good, { nonce: 'another' })).toBe('nonce');
    const claims = JSON.parse(Buffer.from(good.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(await reason(new UnsecuredJWT(claims).encode())).toBe('signature');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const header = JSON.parse(Buffer.from(good.split('.')[0]!, 'base64url').toString()) as { kid: string };
    expect(await reason(await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: header.kid }).sign(privateKey))).toBe('signature');
    const [h, , sig] = good.split('.');
    const forgedBody = Buffer.from(JSON.stringify({ ...claims, tid: own.id })).toString('base64url');
    expect(await reason(`${h}.${forgedBody}.${sig}`)).toBe('signature');
  });

  it('the callback never echoes error_description: only a fixed text and an AADSTS code', async () => {
    const link = await consentLink(rt, never.id, undefined, { organizationId: orgA });
    const state = new URL(link.url).searchParams.get('state')!;
    const page = await intercept.handle(
      `/consent/callback?${new URLSearchParams({ error: 'access_denied', error_description: 'AADSTS65004: <script>alert(1)</script> Call +1 555 0100 to restore access', state })}`,
    );
    expect(page.body).toMatch(/Consent was cancelled/);
    expect(page.body).toMatch(/AADSTS65004/);
    expect(page.body).not.toMatch(/script|555 0100|restore access/);
    const link2 = await consentLink(rt, never.id, undefined, { organizationId: orgA });
    const other = await intercept.handle(
      `/consent/callback?${new URLSearchParams({ error: 'evil<b>html</b>', error_description: 'visit https://phish.example', state: new URL(link2.url).searchParams.get('state')! })}`,
    );
    expect(other.body).toMatch(/Consent failed/);
    expect(other.body).not.toMatch(/evil|phish/);
  });

  it('Mode A: a wrong secret gets the same answer whether or not another organization holds the tenant; a working one is refused without naming it', async () => {
    const connectorOf = (t: Tenant) => {
      const app = t.apps.find((a) => a.appId === t.connectorAppId)!;
      return { tenantId: t.id, clientId: app.appId, clientSecret: app.secrets[0]!.value };
    };
    const wrongSecret = 'Xy7Q~this-is-the-wrong-secret-value-000000';
    const onBound = await refusal(addCustomerAppIntegration(rt, { organizationId: orgA, ...connectorOf(proven), clientSecret: wrongSecret }));
    const onFree = await refusal(addCustomerAppIntegration(rt, { organizationId: orgA, ...connectorOf(consented), clientSecret: wrongSecret }));
    expect(onBound.code).toBe('AADSTS7000215');
    expect({ ...onBound, message: onBound.message.replace(connectorOf(proven).clientId, '<app>') }).toEqual({
      ...onFree,
      message: onFree.message.replace(connectorOf(consented).clientId, '<app>'),
    });
    const working = await refusal(addCustomerAppIntegration(rt, { organizationId: orgA, ...connectorOf(proven) }));
    expect(working).toMatchObject({ code: 'TENANT_BOUND_ELSEWHERE', kind: 'conflict' });
    expect(`${working.message} ${working.remediation}`).not.toMatch(/Owner|int_|proven/);
    // A working secret of an app no administrator granted anything proves nothing (any member may register an app).
    emulator.control.revokeServicePrincipalRoles(never.id, never.connectorAppId!);
    expect((await refusal(addCustomerAppIntegration(rt, { organizationId: orgA, ...connectorOf(never) }))).code).toBe('TENANT_NOT_PROVEN');
    expect((await listTenantBindings(rt.db)).some((b) => b.tenantId === never.id)).toBe(false);
    // The working secret of a free tenant's consented app is a proof: A gets the tenant, bound as mode-a-secret.
    await addCustomerAppIntegration(rt, { organizationId: orgA, ...connectorOf(consented), name: 'mode-a' });
    expect((await listTenantBindings(rt.db)).find((b) => b.tenantId === consented.id)).toMatchObject({ organization: 'Attacker', method: 'mode-a-secret' });
  });
});
