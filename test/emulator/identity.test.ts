import { ConfidentialClientApplication, type INetworkModule, type NetworkRequestOptions, type NetworkResponse } from '@azure/msal-node';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let other: Tenant;
const AADSTS_DESCRIPTION = /^AADSTS(\d+): .+\r\nTrace ID: [0-9a-f-]{36}\r\nCorrelation ID: [0-9a-f-]{36}\r\nTimestamp: \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z$/s;

beforeAll(async () => {
  tenant = generateTenant({ seed: 101 });
  other = generateTenant({ seed: 202 });
  // An app whose only secret is expired, in the first tenant.
  tenant.apps.push({
    appId: '11111111-2222-4333-8444-555555555555',
    displayName: 'Old Integration',
    servicePrincipalObjectId: '66666666-7777-4888-9999-000000000000',
    secrets: [
      {
        keyId: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee',
        displayName: 'old',
        hint: 'old',
        value: 'old8Q~expiredexpiredexpiredexpiredexpire',
        startDateTime: '2020-01-01T00:00:00Z',
        endDateTime: '2022-01-01T00:00:00Z',
      },
    ],
    grantedRoles: {},
    isManagementApp: false,
  });
  emu = await startEmulator({ tenants: [tenant, other] });
  http = emulatorClient(emu);
});

afterAll(async () => {
  await http.close();
  await emu.close();
});

const connector = (): { appId: string; secret: string; sp: string } => {
  const app = tenant.apps.find((a) => a.appId === tenant.connectorAppId)!;
  return { appId: app.appId, secret: app.secrets[0]!.value, sp: app.servicePrincipalObjectId };
};

function expectAadError(res: { status: number; json: Record<string, unknown> }, status: number, error: string, code: number): string {
  expect(res.status).toBe(status);
  expect(res.json.error).toBe(error);
  expect(res.json.error_codes).toEqual([code]);
  const description = res.json.error_description as string;
  expect(description).toMatch(AADSTS_DESCRIPTION);
  expect(description.startsWith(`AADSTS${code}: `)).toBe(true);
  expect(res.json.timestamp).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z$/);
  expect(res.json.trace_id).toMatch(/^[0-9a-f-]{36}$/);
  expect(res.json.correlation_id).toMatch(/^[0-9a-f-]{36}$/);
  expect(res.json.error_uri).toBe(`${emu.url}/error?code=${code}`);
  return description;
}

describe('discovery', () => {
  it('serves OpenID configuration by GUID and by domain, resolving to the tenant id', async () => {
    const byId = await http.get(`/${tenant.id}/v2.0/.well-known/openid-configuration`);
    const byDomain = await http.get(`/${tenant.domains[0]}/v2.0/.well-known/openid-configuration`);
    expect(byId.status).toBe(200);
    expect(byDomain.status).toBe(200);
    for (const doc of [byId.json, byDomain.json]) {
      expect(doc.issuer).toBe(`${emu.url}/${tenant.id}/v2.0`);
      expect(doc.token_endpoint).toBe(`${emu.url}/${tenant.id}/oauth2/v2.0/token`);
      expect(doc.jwks_uri).toBe(`${emu.url}/${tenant.id}/discovery/v2.0/keys`);
      expect(doc.authorization_endpoint).toBe(`${emu.url}/${tenant.id}/oauth2/v2.0/authorize`);
      expect(doc.end_session_endpoint).toBe(`${emu.url}/${tenant.id}/oauth2/v2.0/logout`);
      expect(doc.token_endpoint_auth_methods_supported).toEqual(['client_secret_post', 'private_key_jwt', 'client_secret_basic']);
      expect(doc.id_token_signing_alg_values_supported).toEqual(['RS256']);
      expect(doc.subject_types_supported).toEqual(['pairwise']);
    }
    const common = await http.get('/common/v2.0/.well-known/openid-configuration');
    expect(common.json.issuer).toBe(`${emu.url}/{tenantid}/v2.0`);
  });

  it('answers an unknown tenant with AADSTS90002 invalid_tenant', async () => {
    const res = await http.get('/nosuchtenant.onmicrosoft.com/v2.0/.well-known/openid-configuration');
    const description = expectAadError(res, 400, 'invalid_tenant', 90002);
    expect(description).toContain("Tenant 'nosuchtenant.onmicrosoft.com' not found.");
  });

  it('serves JWKS and instance discovery', async () => {
    const keys = await http.get(`/${tenant.id}/discovery/v2.0/keys`);
    expect(keys.status).toBe(200);
    const key = keys.json.keys[0];
    expect(key).toMatchObject({ kty: 'RSA', use: 'sig', e: 'AQAB' });
    expect(key.kid).toBe(key.x5t);
    expect(typeof key.n).toBe('string');
    expect(key.x5c[0]).toMatch(/^MII/);
    const authz = encodeURIComponent(`${emu.url}/${tenant.id}/oauth2/v2.0/authorize`);
    const inst = await http.get(`/common/discovery/instance?api-version=1.1&authorization_endpoint=${authz}`);
    expect(inst.status).toBe(200);
    expect(inst.json['api-version']).toBe('1.1');
    expect(inst.json.tenant_discovery_endpoint).toBe(`${emu.url}/${tenant.id}/v2.0/.well-known/openid-configuration`);
    expect(inst.json.metadata[0].aliases).toContain(`127.0.0.1:${emu.port}`);
    expect(inst.json.metadata[0].preferred_network).toBe(`127.0.0.1:${emu.port}`);
  });
});

describe('client credentials', () => {
  it('issues a Bearer token whose claims carry roles per resource and verify against JWKS', async () => {
    const { appId, secret, sp } = connector();
    const jwks = createLocalJWKSet((await http.get(`/${tenant.id}/discovery/v2.0/keys`)).json as JSONWebKeySet);
    const cases: [string, string, string[] | undefined][] = [
      [
        'https://graph.microsoft.com/.default',
        'https://graph.microsoft.com',
        ['GroupMember.Read.All', 'User.Read.All', 'ExternalConnection.Read.All', 'TeamsAppInstallation.ReadForUser.All', 'AiEnterpriseInteraction.Read.All'],
      ],
      ['https://manage.office.com/.default', 'https://manage.office.com', ['ActivityFeed.Read']],
      ['https://analysis.windows.net/powerbi/api/.default', 'https://analysis.windows.net/powerbi/api', ['Tenant.Read.All']],
      ['https://service.powerapps.com//.default', 'https://service.powerapps.com', undefined],
    ];
    for (const [scope, aud, roles] of cases) {
      const res = await http.token({ tenant: tenant.domains[0]!, clientId: appId, clientSecret: secret, scope });
      expect(res.status).toBe(200);
      expect(Object.keys(res.json)).toEqual(['token_type', 'expires_in', 'ext_expires_in', 'access_token']);
      expect(res.json.token_type).toBe('Bearer');
      expect(res.json.expires_in).toBe(3599);
      expect(res.json.ext_expires_in).toBe(3599);
      const { payload, protectedHeader } = await jwtVerify(res.json.access_token, jwks, { algorithms: ['RS256'] });
      expect(protectedHeader.kid).toBeDefined();
      expect(payload).toMatchObject({
        aud,
        iss: `https://sts.windows.net/${tenant.id}/`,
        ver: '1.0',
        tid: tenant.id,
        oid: sp,
        sub: sp,
        appid: appId,
        azp: appId,
        appidacr: '1',
        idtyp: 'app',
      });
      expect(payload.oid).not.toBe(payload.appid);
      expect(payload.roles).toEqual(roles);
      expect(payload.exp! - payload.iat!).toBe(3599);
      expect(payload.nbf).toBe(payload.iat);
    }
  });

  it('accepts HTTP Basic client authentication and per-environment Dataverse resources', async () => {
    const { appId, secret } = connector();
    const org = tenant.environments.find((e) => e.dataverse)!.dataverse!;
    const res = await http.token({
      tenant: tenant.id,
      clientId: appId,
      clientSecret: secret,
      basic: true,
      scope: `${emu.url}/dataverse/${org.uniqueName}/.default`,
    });
    expect(res.status).toBe(200);
    const claims = decodeJwt(res.json.access_token);
    expect(claims.aud).toBe(`${emu.url}/dataverse/${org.uniqueName}`);
    expect(claims.roles).toBeUndefined();
    expect(decodeProtectedHeader(res.json.access_token).alg).toBe('RS256');
  });

  it('applies the configured token lifetime', async () => {
    const { appId, secret } = connector();
    emu.control.setTokenLifetime(120);
    try {
      const res = await http.token({ tenant: tenant.id, clientId: appId, clientSecret: secret });
      expect(res.json.expires_in).toBe(120);
      const c = decodeJwt(res.json.access_token);
      expect(c.exp! - c.iat!).toBe(120);
    } finally {
      emu.control.setTokenLifetime(3599);
    }
  });

  it('answers each failure with the Entra error body', async () => {
    const { appId, secret } = connector();
    const t = tenant.id;

    let d = expectAadError(await http.token({ tenant: t, clientId: appId, clientSecret: 'abc8Q~wrong' }), 401, 'invalid_client', 7000215);
    expect(d).toContain(
      `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${appId}'.`,
    );

    d = expectAadError(
      await http.token({ tenant: t, clientId: '11111111-2222-4333-8444-555555555555', clientSecret: 'old8Q~expiredexpiredexpiredexpiredexpire' }),
      401,
      'invalid_client',
      7000222,
    );
    expect(d).toContain(
      "The provided client secret keys for app '11111111-2222-4333-8444-555555555555' are expired. Visit the Azure portal to create new keys for your app",
    );

    d = expectAadError(await http.token({ tenant: 'contoso-missing.onmicrosoft.com', clientId: appId, clientSecret: secret }), 400, 'invalid_tenant', 90002);
    expect(d).toContain("Tenant 'contoso-missing.onmicrosoft.com' not found");

    // The connector belongs to the first tenant only.
    d = expectAadError(await http.token({ tenant: other.id, clientId: appId, clientSecret: secret }), 400, 'unauthorized_client', 700016);
    expect(d).toContain(`Application with identifier '${appId}' was not found in the directory '${other.id}'`);

    d = expectAadError(await http.token({ tenant: t, clientId: appId }), 401, 'invalid_client', 7000218);
    expect(d).toContain("'client_assertion' or 'client_secret'");

    expectAadError(
      await http.token({ tenant: t, clientId: appId, clientSecret: secret, grantType: 'urn:ietf:params:oauth:grant-type:saml2-bearer' }),
      400,
      'unsupported_grant_type',
      70003,
    );
    expectAadError(
      await http.token({ tenant: t, clientId: appId, clientSecret: secret, scope: 'https://graph.microsoft.com/User.Read.All' }),
      400,
      'invalid_scope',
      70011,
    );
    expectAadError(
      await http.token({ tenant: t, clientId: appId, clientSecret: secret, scope: 'https://graph.microsoft.com/.default https://manage.office.com/.default' }),
      400,
      'invalid_scope',
      70011,
    );
    d = expectAadError(
      await http.token({ tenant: t, clientId: appId, clientSecret: secret, scope: 'https://unknown.example.com/.default' }),
      400,
      'invalid_resource',
      500011,
    );
    expect(d).toContain('The resource principal named https://unknown.example.com was not found in the tenant');
  });

  it('echoes client-request-id as the correlation id', async () => {
    const res = await request(`${emu.url}/${tenant.id}/oauth2/v2.0/token`, {
      method: 'POST',
      dispatcher: http.dispatcher,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'client-request-id': '12345678-1234-4234-8234-123456789012' },
      body: 'grant_type=client_credentials&client_id=x&scope=https%3A%2F%2Fgraph.microsoft.com%2F.default&client_secret=y',
    });
    const body = (await res.body.json()) as Record<string, string>;
    expect(body.correlation_id).toBe('12345678-1234-4234-8234-123456789012');
    expect(body.error_description).toContain('Correlation ID: 12345678-1234-4234-8234-123456789012');
  });
});

describe('MSAL Node', () => {
  it('acquires a client-credentials token through the emulator authority', async () => {
    const calls: string[] = [];
    const send = async <T>(method: 'GET' | 'POST', url: string, options?: NetworkRequestOptions): Promise<NetworkResponse<T>> => {
      calls.push(`${method} ${new URL(url).pathname}`);
      const res = await request(url, { method, dispatcher: http.dispatcher, headers: options?.headers, body: options?.body });
      return { status: res.statusCode, headers: res.headers as Record<string, string>, body: (await res.body.json()) as T };
    };
    const networkClient: INetworkModule = {
      sendGetRequestAsync: (url, options) => send('GET', url, options),
      sendPostRequestAsync: (url, options) => send('POST', url, options),
    };
    const { appId, secret } = connector();
    const cca = new ConfidentialClientApplication({
      auth: { clientId: appId, clientSecret: secret, authority: `${emu.url}/${tenant.domains[0]}`, knownAuthorities: [`127.0.0.1:${emu.port}`] },
      system: { networkClient },
    });
    const result = await cca.acquireTokenByClientCredential({ scopes: ['https://graph.microsoft.com/.default'] });
    expect(result?.accessToken).toBeTruthy();
    expect(decodeJwt(result!.accessToken).tid).toBe(tenant.id);
    expect(calls[0]).toBe(`GET /${tenant.domains[0]}/v2.0/.well-known/openid-configuration`);

    const wrong = new ConfidentialClientApplication({
      auth: { clientId: appId, clientSecret: 'nope', authority: `${emu.url}/${tenant.id}`, knownAuthorities: [`127.0.0.1:${emu.port}`] },
      system: { networkClient },
    });
    await expect(wrong.acquireTokenByClientCredential({ scopes: ['https://graph.microsoft.com/.default'] })).rejects.toMatchObject({
      errorCode: 'invalid_client',
    });
  });
});
