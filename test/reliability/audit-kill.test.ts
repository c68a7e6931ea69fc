import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { openStore } from '../../src/store/db.ts';
import { ingestAndDetect } from '../../src/sync/audit.ts';
import { world, type World } from '../e2e/harness.ts';
import { copyDataDir, dumpAudit, killAndResume, pool, random, report, suiteSeed } from './support.ts';

const HOUR = 3_600_000;

/**
 * Crash recovery of `vigil audit`: the real CLI, against the emulated Management Activity API and Power BI activity
 * events over HTTPS, kills itself (SIGKILL) right after a random stored content blob or Power BI page, then the same
 * command runs again until it completes; the database must then hold exactly what an uninterrupted run stored: every
 * event with its raw record as received, every alert with its events, the client IPs the detections learnt.
 *
 * The feed holds six hours of records that all lie inside any run's window (the emulated clock is frozen two hours
 * back, so nothing new appears while the suite runs and every run reads the same content). The kill points come from
 * a seeded generator: the seed is printed, and VIGIL_RELIABILITY_SEED=<seed> replays them.
 */
describe('vigil audit killed by SIGKILL at random blobs and resumed', () => {
  const seed = suiteSeed();
  const next = random(seed);
  const KILLS = 20;
  let w: World;
  let integrationId: string;
  let fresh: string;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    w = await world({ seed: 'reliability-audit', sizes: { users: 20, guests: 2, groups: 3, environments: 1, agents: 0 } });
    const frozen = Date.now() - 2 * HOUR;
    w.emulator.control.setClock(new Date(frozen).toISOString());
    w.emulator.control.configureFeed(w.tenant.id, {
      recordsPerHour: 300,
      batchMinutes: 30,
      pageSize: 5,
      duplicateShare: 0.05,
      unavailableContentTypes: ['DLP.All'],
      since: new Date(frozen - 6 * HOUR).toISOString(),
    });
    fresh = join(mkdtempSync(join(tmpdir(), 'vigil-rel-template-')), 'data');
    const rt = await w.runtime(fresh);
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
    await rt.close();
    cliEnv = { VIGIL_ENDPOINTS_FILE: w.endpointsFile };
  });
  afterAll(async () => w.close());

  const dump = async (dataDir: string) => {
    const db = await openStore({ dataDir, migrate: false });
    try {
      return await dumpAudit(db);
    } finally {
      await db.destroy();
    }
  };

  it(`${KILLS} kills during audit ingestion: every resumed database equals the uninterrupted one`, async () => {
    const started = Date.now();
    // The uninterrupted run, as `vigil audit` does it, counting the blobs and pages it stores.
    const rt = await w.runtime(copyDataDir(fresh));
    let pages = 0;
    let reference: Awaited<ReturnType<typeof dumpAudit>>;
    try {
      await ingestAndDetect(rt, integrationId, { publisherId: rt.config.publisherId, concurrency: rt.config.auditConcurrency, afterBlob: () => void pages++ });
      reference = await dumpAudit(rt.db);
    } finally {
      await rt.close();
    }
    expect(reference.audit_events!.length).toBeGreaterThan(1000);
    expect(reference.alerts!.length).toBeGreaterThan(0);

    const points = Array.from({ length: KILLS }, () => 1 + Math.floor(next() * pages));
    const outcomes = await pool(
      points.map((page) => () => killAndResume({ template: fresh, args: ['audit', integrationId, '--json'], env: cliEnv, page, reference, dump })),
      2,
    );
    console.log(report('audit ingestion', seed, outcomes, pages, Date.now() - started));
    expect(outcomes.map((o) => o.killed)).toEqual(outcomes.map(() => true));
    expect(outcomes.filter((o) => o.difference.length > 0)).toEqual([]);
  }, 300_000);
});
