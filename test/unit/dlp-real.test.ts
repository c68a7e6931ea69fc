import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_CLOUD, type CloudProfile } from '../../src/config/cloud.ts';
import type { DlpPolicyAttrs } from '../../src/sources/powerPlatform/streams/dlpPolicies.ts';
import type { EstateObject } from '../../src/core/inventory.ts';
import { HttpClient } from '../../src/platform/http/client.ts';
import { LinkPolicy } from '../../src/platform/http/links.ts';
import { silentLogger } from '../../src/platform/log/index.ts';
import { dlpPoliciesStream, toDlpPolicy } from '../../src/sources/powerPlatform/streams/dlpPolicies.ts';
import type { StreamContext } from '../../src/sources/stream.ts';
import { checkContext, environmentRow, estateRow, runCheck } from '../support/checks.ts';

/**
 * The DLP policy stream and the HTTP-connector check over REAL recorded answers of
 * `GET {bap}/providers/PowerPlatform.Governance/v2/policies` and `…/v2/policies/{name}` (test/fixtures/real/dlp,
 * SOURCES.md there): the list carries no `connectorGroups`, only the single policy does.
 */

type Json = Record<string, unknown>;
const real = (file: string): Json => JSON.parse(readFileSync(new URL(`../fixtures/real/dlp/${file}`, import.meta.url), 'utf8')) as Json;

const LIST = real('tf-list-policies.json');
const ONE: Record<string, Json> = {
  '00000000-0000-0000-0000-000000000001': real('tf-get-policy-00000001.json'),
  '00000000-0000-0000-0000-000000000002': real('tf-get-policy-00000002.json'),
};

describe('dlpPolicies stream over the real list-then-get answers', () => {
  let server: Server;
  let base: string;
  const seen: string[] = [];
  const gone = new Set<string>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.setHeader('content-type', 'application/json; charset=utf-8');
      const path = (req.url ?? '').split('?')[0]!;
      if (path === '/providers/PowerPlatform.Governance/v2/policies') return res.end(JSON.stringify(LIST));
      const name = /^\/providers\/PowerPlatform\.Governance\/v2\/policies\/([^/]+)$/.exec(path)?.[1];
      if (name && ONE[name] && !gone.has(name)) return res.end(JSON.stringify(ONE[name]));
      res.statusCode = 404;
      return res.end(JSON.stringify({ error: { code: 'PolicyNotFound', message: 'not found' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const ctx = (): StreamContext => ({
    tenantId: 'tid',
    http: new HttpClient({ links: new LinkPolicy({ bases: { bap: [base] } }), logger: silentLogger(), sleepMs: async () => undefined }),
    cloud: { ...PUBLIC_CLOUD, bap: { baseUrl: base, resource: PUBLIC_CLOUD.bap.resource } } as CloudProfile,
    tokens: { bearer: () => async () => 'token', roles: async () => [] },
    logger: silentLogger(),
  });
  const readAll = async (): Promise<EstateObject<DlpPolicyAttrs>[]> => {
    const out: EstateObject<DlpPolicyAttrs>[] = [];
    for await (const page of dlpPoliciesStream.read(ctx(), { key: '*', params: {} }, null)) out.push(...(page.records as EstateObject<DlpPolicyAttrs>[]));
    return out;
  };

  it('reads the list, then each policy, and stores the groups only the single policy carries', async () => {
    seen.length = 0;
    const got = await readAll();
    expect(seen).toEqual([
      '/providers/PowerPlatform.Governance/v2/policies',
      '/providers/PowerPlatform.Governance/v2/policies/00000000-0000-0000-0000-000000000001',
      '/providers/PowerPlatform.Governance/v2/policies/00000000-0000-0000-0000-000000000002',
    ]);
    const a2 = got.find((p) => p.id === '00000000-0000-0000-0000-000000000002')!.attrs;
    expect(a2).toMatchObject({
      displayName: 'a2',
      environmentType: 'ExceptEnvironments',
      environments: ['be0eb809-e58a-ec1b-8fce-ea40b0e53442'],
      defaultConnectorsClassification: 'General',
      connectorGroupsRead: true,
    });
    expect(a2.business).toEqual(['shared_office365users', 'shared_azureblob']);
    expect(a2.nonBusiness).toEqual(['shared_powerappsforappmakers', 'shared_microsoftspatialservices', 'shared_sql', 'shared_bttn']);
    expect(a2.blocked).toEqual([]);
    // The list item alone says nothing about the groups: mapped, it is marked unread, not "blocks nothing".
    expect(toDlpPolicy((LIST.value as Json[])[1]!).attrs).toMatchObject({ blocked: [], connectorGroupsRead: false });
  });

  it('leaves out a policy deleted between the list and its read (404)', async () => {
    gone.add('00000000-0000-0000-0000-000000000001');
    try {
      expect((await readAll()).map((p) => p.id)).toEqual(['00000000-0000-0000-0000-000000000002']);
    } finally {
      gone.clear();
    }
  });
});

describe('pp_dlp_http_connector_not_blocked on real-shaped policies', () => {
  const defaultEnv = environmentRow({ id: 'Default-tid', display_name: 'Contoso (default)', is_default: 1, sku: 'Default' });
  const verdict = async (...bodies: Json[]) => {
    const rows = bodies.map((b) => {
      const o = toDlpPolicy(b);
      return estateRow('dlpPolicies', o.id, o.attrs, { name: o.name });
    });
    return (await runCheck('pp_dlp_http_connector_not_blocked', checkContext({ environments: [defaultEnv], estate: { dlpPolicies: rows } })))[0]!;
  };
  /** The recorded policy a2 with the HTTP connectors, as Microsoft Learn spells their entries, added to its Blocked group. */
  const blockingHttp = (): Json => {
    const b = structuredClone(ONE['00000000-0000-0000-0000-000000000002']!);
    const groups = (b.policyDefinition as Json).connectorGroups as { classification: string; connectors: Json[] }[];
    groups
      .find((g) => g.classification === 'Blocked')!
      .connectors.push(
        { id: 'Http', name: 'HTTP', type: 'Microsoft.PowerApps/apis' },
        { id: 'HttpWebhook', name: 'HTTP Webhook', type: 'Microsoft.PowerApps/apis' },
        { id: '/providers/Microsoft.PowerApps/apis/shared_webcontents', name: 'HTTP with Microsoft Entra ID', type: 'Microsoft.PowerApps/apis' },
      );
    return b;
  };

  it('passes a policy that blocks HTTP: listed in Blocked (ids Http, HttpWebhook, shared_webcontents)', async () => {
    expect(await verdict(blockingHttp())).toMatchObject({ resourceId: 'Default-tid', status: 'pass' });
  });

  it('passes the recorded "Block All Policy" (default group Blocked, HTTP unlisted) for the environment it covers', async () => {
    const body = real('tf-get-policy-block-all.json');
    const env = ((body.policyDefinition as Json).environments as Json[])[0]!.name as string;
    const r = await runCheck(
      'pp_dlp_http_connector_not_blocked',
      checkContext({
        environments: [environmentRow({ id: env, is_default: 1 })],
        estate: { dlpPolicies: [estateRow('dlpPolicies', 'p', toDlpPolicy(body).attrs)] },
      }),
    );
    expect(r[0]).toMatchObject({ resourceId: env, status: 'pass' });
  });

  it('fails the recorded policies that leave HTTP in the default General group', async () => {
    const r = await verdict(ONE['00000000-0000-0000-0000-000000000001']!, ONE['00000000-0000-0000-0000-000000000002']!);
    expect(r).toMatchObject({ status: 'fail', detail: expect.objectContaining({ open: ['Http', 'HttpWebhook', 'shared_webcontents'] }) });
  });

  it('is not evaluated, not failed, when a covering policy was stored from the list alone (groups unread)', async () => {
    const r = await verdict((LIST.value as Json[])[0]!);
    expect(r).toMatchObject({ status: 'not_evaluated', reason: expect.stringContaining('were not read') });
  });
});
