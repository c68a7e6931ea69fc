import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ForeignLinkRule } from '../../emulator/index.ts';
import type { CloudProfile } from '../../src/config/cloud.ts';
import { createRuntime, type Runtime } from '../../src/main/runtime.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { credentialsFor, getIntegration, streamContext } from '../../src/integration/index.ts';
import { HttpClient } from '../../src/platform/http/client.ts';
import { LinkPolicy } from '../../src/platform/http/links.ts';
import { silentLogger } from '../../src/platform/log/index.ts';
import { environmentSlice } from '../../src/sources/dataverse/entity.ts';
import { agentsStream } from '../../src/sources/dataverse/streams/agents.ts';
import { STREAM_RUN_ORDER } from '../../src/sources/index.ts';
import { countLive } from '../../src/store/repositories/inventory.ts';
import { ingestAudit, POWER_BI_SOURCE } from '../../src/sync/audit.ts';
import type { CollectResult } from '../../src/sync/engine.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import { startForeignHost, type ForeignHost } from '../support/foreignhost.ts';
import { DIALECTS, freshStore, type TestStore } from '../store/dialects.ts';
import { TEST_ENV, world, type World } from './harness.ts';

const T = Date.parse('2026-11-20T12:00:00Z');
const HOUR = 3_600_000;

/**
 * The attack of issue 14, point 1, for every kind of link Vigil follows or stores: the emulator (through its
 * foreign-link fault) or the database hands Vigil a link to another host — a real HTTPS listener on 127.0.0.2 whose
 * certificate Vigil trusts, so a request sent there would arrive and be counted. Each time: no request (so no token)
 * reaches it, the stream fails with FOREIGN_LINK naming the API and the host, and no foreign link is left in any table
 * of the store or in the log.
 */
describe('a bearer token never follows a link to another host', () => {
  let w: World;
  let foreign: ForeignHost;
  let cloud: CloudProfile;
  const opened: Runtime[] = [];
  const stores: TestStore[] = [];
  /** Per kind: links handed to Vigil, and tokens the foreign host received. */
  const tally: { kind: string; links: number; tokens: number }[] = [];

  beforeAll(async () => {
    foreign = await startForeignHost('127.0.0.2');
    w = await world({
      seed: 'foreign-links',
      sizes: {
        users: 20,
        guests: 2,
        groups: 3,
        environments: 2,
        agents: 4,
        powerBiWorkspaces: 8,
        apps: 3,
        flows: 2,
        connectors: 1,
        connections: 2,
        azureSubscriptions: 1,
        foundryAccounts: 3,
        foundryProjects: 1,
        foundryDeployments: 1,
        externalConnections: 2,
        teamsAppsPerUser: 12,
        teamsAppCatalog: 14,
      },
    });
    // Vigil trusts the emulator's CA and the foreign host's: only the link policy stands between its tokens and that host.
    cloud = Object.freeze({ ...w.cloud, caPem: `${w.cloud.caPem}\n${foreign.caPem}` });
    // Small pages, so every paged answer carries a next link to rewrite.
    w.tenant.azure!.pageSize = 1;
    w.tenant.powerPlatform!.pageSize = 1;
    w.tenant.powerBi!.widelySharedPageSize = 1;
    w.emulator.control.setClock(new Date(T).toISOString());
    w.emulator.control.configureFeed(w.tenant.id, { recordsPerHour: 300, pageSize: 3, blobSize: 10, since: new Date(T - 3 * 24 * HOUR).toISOString() });
    w.emulator.control.setPowerBiSettings(w.tenant.id, { pageSize: 3 });
  });
  afterAll(async () => {
    for (const rt of opened) await rt.close().catch(() => undefined);
    for (const s of stores) await s.drop();
    await w?.close();
    await foreign?.close();
    // The figures of the closing note: kinds tried, links handed out, tokens received by the foreign host.
    console.info(
      `foreign links: ${tally.length} kinds, ${tally.reduce((n, t) => n + t.links, 0)} links tried, ${tally.reduce((n, t) => n + t.tokens, 0)} tokens leaked`,
      tally,
    );
  });

  async function fresh(env: Record<string, string> = {}, store?: TestStore): Promise<{ rt: Runtime; integrationId: string; dataDir: string }> {
    const dataDir = store?.dataDir ?? mkdtempSync(join(tmpdir(), 'vigil-links-'));
    const rt = await createRuntime({ dataDir, cloud, env: { ...TEST_ENV, ...store?.env, ...env } });
    opened.push(rt);
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    return { rt, integrationId: integration.id, dataDir };
  }

  /**
   * Runs `act` while the emulator hands out `rules`' foreign links (or, with `planted`, a link the test put in the
   * store), and checks the foreign host received nothing.
   */
  async function attack(kind: string, rules: ForeignLinkRule[], act: () => Promise<void>, planted = 0): Promise<void> {
    const ctl = w.emulator.control;
    const emitted = ctl.foreignLinks().counters.total;
    const requests = foreign.requests.length;
    const tokens = foreign.tokens();
    ctl.setForeignLinks(rules);
    try {
      await act();
    } finally {
      ctl.clearForeignLinks();
    }
    const links = ctl.foreignLinks().counters.total - emitted + planted;
    tally.push({ kind, links, tokens: foreign.tokens() - tokens });
    // The attack really happened: Vigil was handed at least one foreign link.
    expect(links, `${kind}: foreign links handed to Vigil`).toBeGreaterThan(0);
    expect(foreign.requests.slice(requests), `${kind}: requests that reached the foreign host`).toEqual([]);
  }

  /** The refusal: one code, naming the API and the foreign origin, never a path or query of the link. */
  function expectRefused(err: { code?: string; message?: string; reason?: string } | undefined, api: RegExp): void {
    expect(err, 'a refusal is reported').toBeDefined();
    const message = err!.message ?? err!.reason ?? '';
    expect(err!.code).toBe('FOREIGN_LINK');
    expect(message).toMatch(api);
    expect(message).toContain(foreign.origin);
    expect(message).not.toContain(`${foreign.origin}/`);
  }

  /** No table cell and no log line holds a link to the foreign host (its bare origin in an error message is fine). */
  async function expectNothingForeignStored(rt: Runtime, dataDir: string): Promise<void> {
    const link = `${foreign.origin}/`;
    for (const table of await rt.db.introspection.getTables()) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const rows = (await (rt.db as any).selectFrom(table.name).selectAll().execute()) as Record<string, unknown>[];
      for (const row of rows) {
        for (const [column, value] of Object.entries(row)) {
          if (typeof value === 'string') expect(value.includes(link), `${table.name}.${column} holds a foreign link`).toBe(false);
        }
      }
    }
    const log = join(dataDir, 'vigil.log');
    if (existsSync(log)) expect(readFileSync(log, 'utf8').includes(link), 'vigil.log holds a foreign link').toBe(false);
  }

  const streamError = (run: CollectResult, stream: string) => run.errors.find((e) => e.stream === stream && e.code === 'FOREIGN_LINK');

  it('control: the foreign host is reachable and trusted, so a token sent there would be counted', async () => {
    const http = new HttpClient({ links: new LinkPolicy({ bases: { graph: [foreign.origin] } }), caPem: cloud.caPem, logger: silentLogger() });
    try {
      await http.send({ api: 'graph', url: `${foreign.origin}/v1.0/users`, token: async () => 'control-token' });
    } finally {
      await http.close();
    }
    expect(foreign.requests.splice(0)).toEqual([{ method: 'GET', path: '/v1.0/users', authorization: 'Bearer control-token' }]);
  });

  it('Graph @odata.nextLink of a users delta round', async () => {
    const { rt, integrationId, dataDir } = await fresh({ VIGIL_GRAPH_PAGE_SIZE: '5' });
    let run!: CollectResult;
    await attack('graph @odata.nextLink', [{ service: 'graph', field: '@odata.nextLink', origin: foreign.origin, match: '/users/delta' }], async () => {
      run = await collectIntegration(rt, integrationId);
    });
    expectRefused(streamError(run, 'users'), /Microsoft Graph/);
    await expectNothingForeignStored(rt, dataDir);
  });

  it('Graph @odata.deltaLink at the end of a delta round: not stored, so no later run follows it', async () => {
    const { rt, integrationId, dataDir } = await fresh();
    let run!: CollectResult;
    await attack('graph @odata.deltaLink', [{ service: 'graph', field: '@odata.deltaLink', origin: foreign.origin, match: '/users/delta' }], async () => {
      run = await collectIntegration(rt, integrationId);
    });
    expectRefused(streamError(run, 'users'), /Microsoft Graph/);
    expect(run.status).not.toBe('succeeded');
    expect(await rt.db.selectFrom('stream_states').select('delta_link').where('stream', '=', 'users').execute()).toEqual([]);
    await expectNothingForeignStored(rt, dataDir);
    // The next run reads users in full from Graph itself.
    const next = await collectIntegration(rt, integrationId);
    expect(next.errors.filter((e) => e.stream === 'users')).toEqual([]);
    expect(foreign.requests).toEqual([]);
  });

  it.each(DIALECTS)('a foreign delta link already in the database, from an earlier run or planted (%s)', async (dialect) => {
    const store = await freshStore(dialect);
    stores.push(store);
    const { rt, integrationId, dataDir } = await fresh({}, store);
    const first = await collectIntegration(rt, integrationId);
    expect(first.errors.filter((e) => e.stream === 'users')).toEqual([]);
    const planted = `${foreign.origin}/graph/v1.0/users/delta?$deltatoken=planted-by-an-attacker`;
    const updated = await rt.db
      .updateTable('stream_states')
      .set({ delta_link: planted })
      .where('integration_id', '=', integrationId)
      .where('stream', '=', 'users')
      .executeTakeFirst();
    expect(Number(updated.numUpdatedRows)).toBe(1);

    let run!: CollectResult;
    await attack(
      `stored graph @odata.deltaLink (${dialect})`,
      [],
      async () => {
        run = await collectIntegration(rt, integrationId);
      },
      1,
    );
    expectRefused(streamError(run, 'users'), /Microsoft Graph/);
    // The refused link is dropped, not kept for the next run or copied into the slice's checkpoint.
    await expectNothingForeignStored(rt, dataDir);

    const after = await collectIntegration(rt, integrationId);
    expect(after.errors.filter((e) => e.stream === 'users')).toEqual([]);
    expect(after.streams.users.incrementalSlices ?? 0).toBe(0);
    expect((await countLive(rt.db, integrationId, STREAM_RUN_ORDER)).users).toBe(w.truth.users);
    expect(foreign.requests).toEqual([]);
  });

  it('Graph $batch inner @odata.nextLink (Teams apps)', async () => {
    const { rt, integrationId, dataDir } = await fresh();
    let run!: CollectResult;
    await attack('graph $batch inner @odata.nextLink', [{ service: 'graph', field: '@odata.nextLink', origin: foreign.origin, match: '/$batch' }], async () => {
      run = await collectIntegration(rt, integrationId);
    });
    expectRefused(streamError(run, 'teamsApps'), /Microsoft Graph.*\$batch/);
    await expectNothingForeignStored(rt, dataDir);
  });

  it('Dataverse instanceUrl of an environment: refused before it is stored', async () => {
    const { rt, integrationId, dataDir } = await fresh();
    let run!: CollectResult;
    await attack('bap instanceUrl', [{ service: 'bap', field: 'instanceUrl', origin: foreign.origin }], async () => {
      run = await collectIntegration(rt, integrationId);
    });
    expectRefused(streamError(run, 'environments'), /Dataverse.*instanceUrl/);
    await expectNothingForeignStored(rt, dataDir);
  });

  it('Dataverse instanceUrl already stored: no token is even asked for it', async () => {
    const { rt, integrationId } = await fresh();
    const ctx = streamContext(rt, credentialsFor(rt, await getIntegration(rt.db, integrationId)));
    const requests = w.emulator.control.requests().length;
    await attack(
      'stored dataverse instanceUrl',
      [],
      async () => {
        const pages = agentsStream.read(ctx, environmentSlice({ id: 'planted-environment', dataverse_url: `${foreign.origin}/dataverse/org/` })!, null);
        await expect(pages.next()).rejects.toMatchObject({ code: 'FOREIGN_LINK', message: expect.stringMatching(/Dataverse/) });
      },
      1,
    );
    // Not even a token request: the audience would have been the foreign host.
    expect(w.emulator.control.requests().slice(requests)).toEqual([]);
  });

  it('Dataverse @odata.nextLink', async () => {
    const { rt, integrationId, dataDir } = await fresh({ VIGIL_DATAVERSE_PAGE_SIZE: '1' });
    let run!: CollectResult;
    await attack('dataverse @odata.nextLink', [{ service: 'dataverse', field: '@odata.nextLink', origin: foreign.origin }], async () => {
      run = await collectIntegration(rt, integrationId);
    });
    expectRefused(streamError(run, 'dataverseUsers') ?? streamError(run, 'agents'), /Dataverse/);
    await expectNothingForeignStored(rt, dataDir);
  });

  it('Azure Resource Manager nextLink', async () => {
    const { rt, integrationId, dataDir } = await fresh();
    let run!: CollectResult;
    await attack('arm nextLink', [{ service: 'arm', field: 'nextLink', origin: foreign.origin }], async () => {
      run = await collectIntegration(rt, integrationId);
    });
    expectRefused(streamError(run, 'foundryAccounts'), /Azure Resource Manager/);
    await expectNothingForeignStored(rt, dataDir);
  });

  it('Power Apps admin API nextLink (the BAP family)', async () => {
    const { rt, integrationId, dataDir } = await fresh();
    let run!: CollectResult;
    await attack('powerApps nextLink', [{ service: 'powerApps', field: 'nextLink', origin: foreign.origin }], async () => {
      run = await collectIntegration(rt, integrationId);
    });
    expectRefused(streamError(run, 'powerApps'), /Power Apps/);
    await expectNothingForeignStored(rt, dataDir);
  });

  it('Power BI continuationUri of the widely shared artifacts', async () => {
    const { rt, integrationId, dataDir } = await fresh();
    let run!: CollectResult;
    await attack(
      'powerBi widelyShared continuationUri',
      [{ service: 'powerBi', field: 'continuationUri', origin: foreign.origin, match: '/widelySharedArtifacts' }],
      async () => {
        run = await collectIntegration(rt, integrationId);
      },
    );
    expectRefused(streamError(run, 'powerBiSharedLinks'), /Power BI.*continuationUri/);
    await expectNothingForeignStored(rt, dataDir);
  });

  it('Power BI scan Location: never followed (the scan status is read by id on the Power BI host)', async () => {
    const { rt, integrationId, dataDir } = await fresh();
    let run!: CollectResult;
    await attack('powerBi scan Location', [{ service: 'powerBi', field: 'Location', origin: foreign.origin, match: '/getInfo' }], async () => {
      run = await collectIntegration(rt, integrationId);
    });
    expect(run.errors.filter((e) => e.stream === 'powerBiWorkspaces')).toEqual([]);
    expect((await countLive(rt.db, integrationId, STREAM_RUN_ORDER)).powerBiWorkspaces).toBeGreaterThan(0);
    await expectNothingForeignStored(rt, dataDir);
  });

  it('Power BI continuationUri of the activity events', async () => {
    const { rt, integrationId, dataDir } = await fresh();
    let outcome!: { status: string; code?: string; reason?: string };
    await attack(
      'powerBi activityevents continuationUri',
      [{ service: 'powerBi', field: 'continuationUri', origin: foreign.origin, match: '/activityevents' }],
      async () => {
        const r = await ingestAudit(rt, integrationId, { now: new Date(T), initialLookbackHours: 6, contentTypes: [] });
        outcome = r.contentTypes[POWER_BI_SOURCE]!;
      },
    );
    expect(outcome.status).toBe('error');
    expectRefused(outcome, /Power BI.*continuationUri/);
    await expectNothingForeignStored(rt, dataDir);
  });

  it.each([
    ['NextPageUri', 'the NextPageUri header of a content listing'],
    ['contentUri', 'the contentUri of a content blob'],
  ])('Office 365 Management Activity API %s', async (field) => {
    const { rt, integrationId, dataDir } = await fresh();
    let outcome!: { status: string; code?: string; reason?: string };
    await attack(`managementActivity ${field}`, [{ service: 'managementActivity', field, origin: foreign.origin }], async () => {
      const r = await ingestAudit(rt, integrationId, { now: new Date(T), initialLookbackHours: 6, contentTypes: ['Audit.General'], powerBi: false });
      outcome = r.contentTypes['Audit.General']!;
    });
    expect(outcome.status).toBe('error');
    expectRefused(outcome, new RegExp(`Management Activity API.*${field}`));
    await expectNothingForeignStored(rt, dataDir);
  });

  it('leaks no token across every kind', () => {
    expect(tally.length).toBe(15);
    expect(tally.reduce((n, t) => n + t.tokens, 0)).toBe(0);
  });
});
