import { afterEach, describe, expect, it } from 'vitest';
import { runDetections } from '../../src/detections/run.ts';
import type { Detection } from '../../src/detections/types.ts';
import { vigilProduct } from '../../src/exports/ocsf.ts';
import type { Sinks } from '../../src/sinks/index.ts';
import { findEventsByOperation, listAlerts, mergeUserIps, setAlertStatus } from '../../src/store/repositories/audit.ts';
import { withLazyRaw, withRaw } from '../../src/store/repositories/auditRaw.ts';
import { storeRecords } from '../../src/sync/audit.ts';
import { upsertRecords } from '../../src/store/repositories/inventory.ts';
import { applyEvaluation, listFindings, suppressFinding } from '../../src/store/repositories/findings.ts';
import { loadDetections } from '../../src/detections/index.ts';
import type { AgentComponentAttrs } from '../../src/sources/dataverse/streams/agentComponents.ts';
import type { FlowAttrs } from '../../src/sources/powerPlatform/streams/flows.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

const record = (id: string, time: string, over: Record<string, unknown>) => ({
  Id: id,
  CreationTime: time,
  UserId: 'ann@contoso.com',
  ClientIP: '203.0.113.10',
  RecordType: 261,
  Operation: 'CopilotInteraction',
  ...over,
});

describe.each(DIALECTS)('detections over the store on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('drops duplicate records by Id, raises each alert once with its events linked, and keeps the lifecycle', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    // History: Ann always worked from 203.0.113.10.
    expect(
      await storeRecords(
        db,
        'int_1',
        'Audit.General',
        [record('a1', '2026-11-01T08:00:00', {}), record('a2', '2026-11-02T08:00:00', {})],
        '2026-11-02T09:00:00.000Z',
      ),
    ).toBe(2);
    const since = '2026-11-20T00:00:00.000Z';
    const fresh = [
      record('b1', '2026-11-20T08:00:00', { ClientIP: '198.51.100.7' }),
      record('b2', '2026-11-20T08:05:00', { Operation: 'PublishToWebReport', RecordType: 20 }),
    ];
    // The same records arrive twice (duplicates by design upstream): stored once.
    expect(await storeRecords(db, 'int_1', 'Audit.General', [...fresh, ...fresh], since)).toBe(2);
    expect(await storeRecords(db, 'int_1', 'Audit.General', fresh, since)).toBe(0);
    // The raw records come back byte-exact from their compressed segments; a blob with nothing new left no segment.
    const stored = await withRaw(db, await db.selectFrom('audit_events').selectAll().orderBy('id').execute());
    expect(stored.map((e) => e.raw)).toEqual([record('a1', '2026-11-01T08:00:00', {}), record('a2', '2026-11-02T08:00:00', {}), ...fresh]);
    expect((await db.selectFrom('audit_raw_segments').select('id').execute()).length).toBe(2);
    const first = await runDetections(db, 'int_1');
    expect(first).toMatchObject({ events: 4, alertsRaised: 2, byRule: { copilot_new_ip: 1, powerbi_publish_to_web: 1 } });
    expect(await runDetections(db, 'int_1')).toMatchObject({ events: 0, alertsRaised: 0 });
    const alerts = await listAlerts(db, { integrationId: 'int_1' });
    expect(alerts.map((a) => a.status)).toEqual(['new', 'new']);
    const linked = await db
      .selectFrom('alert_events')
      .select(['event_id'])
      .where('alert_id', '=', alerts.find((a) => a.rule_id === 'copilot_new_ip')!.id)
      .execute();
    expect(linked).toEqual([{ event_id: 'b1' }]);
    expect(await setAlertStatus(db, alerts[0]!.id, 'acknowledged', 'now')).toBe(true);
    expect(await setAlertStatus(db, 'alr_missing', 'closed', 'now')).toBe(false);
    expect((await listAlerts(db, { status: 'acknowledged' })).map((a) => a.id)).toEqual([alerts[0]!.id]);
  });

  it('reads raw records on demand, byte-exact as stored, and refuses a row whose segment is missing', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    const first = [record('a1', '2026-11-01T08:00:00', { Nested: { x: [1, '],'] } }), record('a2', '2026-11-01T08:01:00', {})];
    await storeRecords(db, 'int_1', 'Audit.General', first, '2026-11-02T09:00:00.000Z');
    await storeRecords(db, 'int_1', 'Audit.General', [record('b1', '2026-11-20T08:00:00', { UserId: 'zoë@contoso.com' })], '2026-11-20T09:00:00.000Z');
    const rows = await db.selectFrom('audit_events').selectAll().orderBy('id').execute();
    const cache = new Map();
    const lazy = await withLazyRaw(db, rows, cache);
    expect(cache.size).toBe(2);
    // Spreading or serialising an event reads its raw record, as with a plain property; each is the record stored.
    const stored = [...first, record('b1', '2026-11-20T08:00:00', { UserId: 'zoë@contoso.com' })];
    expect(lazy.map((e) => ({ ...e }).raw)).toEqual(stored);
    expect(JSON.parse(JSON.stringify(lazy)).map((e: { raw: unknown }) => e.raw)).toEqual(stored);
    expect(await withRaw(db, rows)).toEqual(lazy.map((e) => ({ ...e })));
    // The next page keeps only the segments its rows use.
    await withLazyRaw(db, rows.slice(2), cache);
    expect(cache.size).toBe(1);
    await expect(withLazyRaw(db, [{ ...rows[0]!, raw_segment_id: 'seg_missing' }], cache)).rejects.toThrow(/raw record of audit event a1 is missing/);
    await expect(withLazyRaw(db, [{ ...rows[2]!, raw_index: 1 }], new Map())).rejects.toThrow(/raw record of audit event b1 is missing/);
  });

  it('stores addresses normalised (raw kept byte-exact) and compares history stored before normalisation by address', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    // History kept by an earlier version, with the port and the IPv4-mapped form real records carry (no migration).
    await mergeUserIps(db, 'int_1', [
      { user_key: 'ann@contoso.com', client_ip: '203.0.113.10:40927', first_seen: '2026-11-01T08:00:00.000Z', last_seen: '2026-11-01T08:00:00.000Z' },
      { user_key: 'ann@contoso.com', client_ip: '::ffff:198.51.100.7', first_seen: '2026-11-01T09:00:00.000Z', last_seen: '2026-11-01T09:00:00.000Z' },
    ]);
    const fresh = [
      record('c1', '2026-11-20T08:00:00', { ClientIP: '[203.0.113.10]:443' }),
      record('c2', '2026-11-20T08:01:00', { ClientIP: '198.51.100.7' }),
      record('c3', '2026-11-20T08:02:00', { ClientIP: '[2001:DB8:0:0:0:0:0:1]:50000' }),
      record('c4', '2026-11-20T08:03:00', { ClientIP: 'cool.client.local:12345' }),
    ];
    expect(await storeRecords(db, 'int_1', 'Audit.General', fresh, '2026-11-20T09:00:00.000Z')).toBe(4);
    const rows = await db.selectFrom('audit_events').select(['id', 'client_ip']).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 'c1', client_ip: '203.0.113.10' },
      { id: 'c2', client_ip: '198.51.100.7' },
      { id: 'c3', client_ip: '2001:db8::1' },
      { id: 'c4', client_ip: null },
    ]);
    expect((await withRaw(db, await db.selectFrom('audit_events').selectAll().orderBy('id').execute())).map((e) => e.raw.ClientIP)).toEqual(
      fresh.map((r) => r.ClientIP),
    );
    // Only the IPv6 address is new for Ann; the port-less and unmapped forms of her known addresses are not.
    await runDetections(db, 'int_1');
    const alerts = await listAlerts(db, { integrationId: 'int_1', ruleId: 'copilot_new_ip' });
    expect(alerts.map((a) => (JSON.parse(a.detail!) as { ip: string }).ip)).toEqual(['2001:db8::1']);
  });

  it('flow_external_http reads the collected flow definition for a flow edited in the audit feed', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    const attrs = (urls: string[]): FlowAttrs => ({
      environmentId: 'env-1',
      displayName: 'Order sync',
      state: 'Started',
      creator: { objectId: null, userId: null, userType: null },
      createdTime: '2026-11-01T08:00:00Z',
      lastModifiedTime: '2026-11-20T08:00:30Z',
      triggers: [],
      actions: urls.map(() => ({ type: 'Http', kind: null, connectorId: null })),
      hasHttpTrigger: false,
      hasHttpAction: true,
      httpTargets: urls.map((url) => ({ via: 'Http', method: 'POST', url, host: new URL(url).hostname })),
      connectionReferences: [],
      definitionRead: true,
    });
    const flowRecord = (sliceKey: string, id: string, urls: string[]) => ({ sliceKey, id, name: 'Order sync', attrs: attrs(urls), raw: {} });
    await upsertRecords(
      db,
      'flows',
      'int_1',
      'run_1',
      [
        flowRecord('env-1', '0b1d2c3e-0000-4000-8000-000000000001', ['https://hooks.zapier.com/hooks/catch/1/abc/']),
        flowRecord('env-1', '0b1d2c3e-0000-4000-8000-000000000002', ['https://graph.microsoft.com/v1.0/me']),
      ],
      '2026-11-20T08:30:00.000Z',
    );
    const edit = (id: string, flowId: string) => ({
      Id: id,
      CreationTime: '2026-11-20T08:00:00',
      RecordType: 30,
      Operation: 'EditFlow',
      Workload: 'MicrosoftFlow',
      UserId: 'ann@contoso.com',
      ClientIP: '203.0.113.10',
      FlowDetailsUrl: `https://make.powerautomate.com/environments/env-1/flows/${flowId}/details`,
      FlowConnectorNames: 'HTTP',
    });
    await storeRecords(
      db,
      'int_1',
      'Audit.General',
      [edit('f1', '0b1d2c3e-0000-4000-8000-000000000001'), edit('f2', '0b1d2c3e-0000-4000-8000-000000000002')],
      '2026-11-20T09:00:00.000Z',
    );
    await runDetections(db, 'int_1');
    const alerts = await listAlerts(db, { integrationId: 'int_1', ruleId: 'flow_external_http' });
    expect(alerts.map((a) => (JSON.parse(a.detail!) as { hosts: string[] }).hosts)).toEqual([['hooks.zapier.com']]);
  });
  it('raises an alert once per dedupe key across one page and across runs, linking the first hit, one outbox row each', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    const rule = (keyOf: (id: string) => string): Detection => ({
      metadata: {
        id: 'test_keys',
        title: 'Test keys',
        severity: 'low',
        description: 'One hit per event, keyed by the test.',
        response: 'Nothing to do: a test rule.',
        references: ['https://example.com/'],
        frameworks: {},
        peers: [],
        recordTypes: [261],
      },
      run: (ctx) => ctx.events.map((e) => ({ dedupeKey: keyOf(e.id), title: `hit ${e.id}`, eventIds: [e.id], detail: { id: e.id } })),
    });
    const sinks: Sinks = { names: ['webhook'], targets: [], product: vigilProduct('0.1.0'), deliver: async () => [], test: async () => [] };
    const records = ['k1', 'k2', 'k3', 'k4'].map((id, i) => record(id, `2026-11-20T08:0${i}:00`, {}));
    await storeRecords(db, 'int_1', 'Audit.General', records, '2026-11-20T09:00:00.000Z');
    // k1 and k2 share a key (and so do k3 and k4, the U+0000 of k4's stored as U+FFFD like k3's): raised once each, by the first.
    const keys: Record<string, string> = { k1: 'same', k2: 'same', k3: 'nul\uFFFD', k4: 'nul\u0000' };
    expect(await runDetections(db, 'int_1', [rule((id) => keys[id]!)], { sinks })).toMatchObject({ events: 4, alertsRaised: 2, byRule: { test_keys: 2 } });
    const linked = async () =>
      (
        await db
          .selectFrom('alert_events')
          .innerJoin('alerts', 'alerts.id', 'alert_events.alert_id')
          .select(['alerts.title', 'alert_events.event_id'])
          .orderBy('event_id')
          .execute()
      ).map((r) => `${r.title}: ${r.event_id}`);
    expect(await linked()).toEqual(['hit k1: k1', 'hit k3: k3']);
    const outbox = await db.selectFrom('sink_outbox').select(['subject_id', 'event_type', 'sink']).execute();
    const alerts = await listAlerts(db, { integrationId: 'int_1' });
    expect(outbox.map((o) => o.subject_id).sort()).toEqual(alerts.map((a) => a.id).sort());
    expect(new Set(outbox.map((o) => `${o.event_type} ${o.sink}`))).toEqual(new Set(['alert.raised webhook']));
    // A later run: a key already stored is not raised again (nor linked); a new one is.
    await storeRecords(
      db,
      'int_1',
      'Audit.General',
      [record('k5', '2026-11-20T08:05:00', {}), record('k6', '2026-11-20T08:06:00', {})],
      '2026-11-20T10:00:00.000Z',
    );
    const later: Record<string, string> = { k5: 'same', k6: 'other' };
    expect(await runDetections(db, 'int_1', [rule((id) => later[id]!)], { sinks })).toMatchObject({ events: 2, alertsRaised: 1 });
    expect(await linked()).toEqual(['hit k1: k1', 'hit k3: k3', 'hit k6: k6']);
    expect(await db.selectFrom('sink_outbox').select('id').execute()).toHaveLength(3);
  });

  it('find answers each page as the store does, with the window sliding across pages and more rows than its limit', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    // 12,000 creations, four per second (ties at every time). Pages of 2,000 span 500 s; with 1,250 s either side,
    // the third and fourth windows hold 11,000 rows (find's 10,000 cut inside them) and later windows start later.
    const start = Date.parse('2026-11-20T08:00:00Z');
    const creations = Array.from({ length: 12_000 }, (_, i) => ({
      Id: `e${String(11_999 - i).padStart(5, '0')}`,
      CreationTime: new Date(start + Math.floor(i / 4) * 1000).toISOString().slice(0, 19),
      RecordType: 30,
      Operation: i % 3 ? 'CreateFlow' : 'BotCreate',
      UserId: `maker${i % 5000}@contoso.com`,
    }));
    await storeRecords(db, 'int_1', 'Audit.General', creations, '2026-11-20T12:00:00.000Z');
    const compared: number[] = [];
    const probe: Detection = {
      metadata: {
        id: 'test_find',
        title: 'Test find',
        severity: 'low',
        description: 'Compares find with the store.',
        response: 'Nothing to do: a test rule.',
        references: ['https://example.com/'],
        frameworks: {},
        peers: [],
        recordTypes: [30],
      },
      run: async (ctx) => {
        const first = Date.parse(ctx.events[0]!.creationTime);
        const last = Date.parse(ctx.events.at(-1)!.creationTime);
        for (const [operations, margin] of [
          [['CreateFlow', 'BotCreate'], 1_250_000],
          [['CreateFlow'], 600_000],
        ] as const) {
          const q = { operations: [...operations], from: new Date(first - margin).toISOString(), to: new Date(last + margin).toISOString() };
          const got = await ctx.find(q);
          const fresh = await findEventsByOperation(db, 'int_1', { ...q, limit: 10_000 });
          expect(got.map((e) => e.id)).toEqual(fresh.map((e) => e.id));
          if (operations.length === 2) compared.push(got.length);
        }
        return [];
      },
    };
    expect(await runDetections(db, 'int_1', [probe])).toMatchObject({ events: 12_000, alertsRaised: 0 });
    expect(compared).toEqual([7000, 9000, 10_000, 10_000, 9000, 7000]);
  });

  it('agent rules read the collected components and the open, unsuppressed findings of the agents in the feed', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    const website: AgentComponentAttrs = {
      botId: 'bot-1',
      parentComponentId: null,
      schemaName: 'cr123_hr.knowledge.faq',
      componentType: 16,
      yamlKind: 'KnowledgeSourceConfiguration',
      kind: 'knowledge',
      stateCode: 0,
      modifiedOn: '2026-11-20T08:00:30Z',
      dataUnparsed: false,
      knowledge: {
        sourceType: 'publicWebsite',
        sourceKind: 'PublicSiteSearchSource',
        url: 'https://example.org/faq',
        host: 'example.org',
        connectionName: null,
      },
    };
    await upsertRecords(
      db,
      'agentComponents',
      'int_1',
      'run_1',
      [{ sliceKey: 'env-1', id: 'comp-1', name: 'FAQ', attrs: website, raw: {} }],
      '2026-11-20T08:30:00.000Z',
    );
    // bot-1 fails a posture check; bot-2's finding is suppressed.
    const fail = (resourceId: string) => ({
      checkId: 'agent_no_authentication',
      severity: 'high' as const,
      resourceType: 'agent',
      resourceId,
      resourceName: resourceId,
      status: 'fail' as const,
      reason: 'fail',
    });
    await applyEvaluation(db, 'int_1', null, [fail('bot-1'), fail('bot-2')], '2026-11-19T00:00:00.000Z');
    const bot2 = (await listFindings(db, { status: 'open' })).find((f) => f.resource_id === 'bot-2')!;
    await suppressFinding(db, bot2.id, { reason: 'sandbox', author: 'ann', expiresAt: null }, '2026-11-19T01:00:00.000Z');
    const componentCreated = (id: string, botId: string, componentId: string) =>
      record(id, '2026-11-20T08:00:00', {
        RecordType: 256,
        Operation: 'BotComponentCreate',
        Workload: 'PowerPlatform',
        ObjectId: botId,
        PropertyCollection: [
          { Name: 'powerplatform.analytics.resource.type', Value: 'Bot' },
          { Name: 'powerplatform.analytics.resource.bot.id', Value: botId },
          { Name: 'powerplatform.analytics.resource.bot_component.id', Value: componentId },
        ],
      });
    await storeRecords(
      db,
      'int_1',
      'Audit.General',
      [componentCreated('d1', 'bot-1', 'comp-1'), componentCreated('d2', 'bot-2', 'comp-2')],
      '2026-11-20T09:00:00.000Z',
    );
    const rules = loadDetections().filter((d) => ['agent_knowledge_public_website', 'agent_posture_runtime_issue'].includes(d.metadata.id));
    expect(await runDetections(db, 'int_1', rules)).toMatchObject({
      alertsRaised: 2,
      byRule: { agent_knowledge_public_website: 1, agent_posture_runtime_issue: 1 },
    });
    const [issue] = await listAlerts(db, { integrationId: 'int_1', ruleId: 'agent_posture_runtime_issue' });
    expect(JSON.parse(issue!.detail!)).toMatchObject({ agentId: 'bot-1', findings: [{ checkId: 'agent_no_authentication', severity: 'high' }] });
  });
});
