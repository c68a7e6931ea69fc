import { afterEach, describe, expect, it } from 'vitest';
import { runDetections } from '../../src/detections/run.ts';
import { listAlerts, setAlertStatus, storeRecords, withRaw } from '../../src/store/repositories/audit.ts';
import { DIALECTS, freshStore, type TestStore } from './dialects.ts';
import { insertTestIntegration } from './fixtures.ts';

const record = (id: string, time: string, over: Record<string, unknown>) => ({ Id: id, CreationTime: time, UserId: 'ann@contoso.com', ClientIP: '203.0.113.10', RecordType: 261, Operation: 'CopilotInteraction', ...over });

describe.each(DIALECTS)('detections over the store on %s', (dialect) => {
  let store: TestStore;
  afterEach(async () => store?.drop());

  it('drops duplicate records by Id, raises each alert once with its events linked, and keeps the lifecycle', async () => {
    store = await freshStore(dialect);
    const db = store.db;
    await insertTestIntegration(db, 'int_1');
    // History: Ann always worked from 203.0.113.10.
    expect(await storeRecords(db, 'int_1', 'Audit.General', [record('a1', '2026-11-01T08:00:00', {}), record('a2', '2026-11-02T08:00:00', {})], '2026-11-02T09:00:00.000Z')).toBe(2);
    const since = '2026-11-20T00:00:00.000Z';
    const fresh = [record('b1', '2026-11-20T08:00:00', { ClientIP: '198.51.100.7' }), record('b2', '2026-11-20T08:05:00', { Operation: 'PublishToWebReport', RecordType: 20 })];
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
    const linked = await db.selectFrom('alert_events').select(['event_id']).where('alert_id', '=', alerts.find((a) => a.rule_id === 'copilot_new_ip')!.id).execute();
    expect(linked).toEqual([{ event_id: 'b1' }]);
    expect(await setAlertStatus(db, alerts[0]!.id, 'acknowledged', 'now')).toBe(true);
    expect(await setAlertStatus(db, 'alr_missing', 'closed', 'now')).toBe(false);
    expect((await listAlerts(db, { status: 'acknowledged' })).map((a) => a.id)).toEqual([alerts[0]!.id]);
  });
});
