import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcriptsGroundTruth, turnsOf, type ConversationTranscript } from '../../emulator/index.ts';
import { operator } from '../../src/access/index.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { conversationTimelineOf, transcriptConversationsOf } from '../../src/reporting/protection.ts';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { freshStore, type TestStore } from '../store/dialects.ts';
import { world, type World } from './harness.ts';

/** Every byte of every file under a directory, as Latin-1 text (UTF-8 text of ASCII values stays searchable). */
function filesText(dir: string): string {
  return readdirSync(dir)
    .map((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesText(path) : readFileSync(path).toString('latin1');
    })
    .join('\n');
}

describe('Copilot Studio conversation transcripts', () => {
  let w: World;
  let rt: Runtime;
  let dataDir: string;
  let integrationId: string;
  const caller = operator('test');
  beforeAll(async () => {
    w = await world({
      seed: 'transcripts-e2e',
      plantedTranscripts: true,
      sizes: { users: 20, guests: 2, groups: 4, environments: 5, agents: 8, powerBiWorkspaces: 0, apps: 0, flows: 0, connections: 0, foundryAccounts: 0 },
    });
    dataDir = mkdtempSync(join(tmpdir(), 'vigil-data-'));
    // Three transcripts a page: every readable environment's slice is read over several pages.
    rt = await w.runtime(dataDir, { VIGIL_DATAVERSE_PAGE_SIZE: '3' });
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
  }, 60_000);
  afterAll(async () => w.close());

  it('collects every turn through paging and 429s, records the environment without the table as a gap, stores no planted value, and alerts on the planted cases only', async () => {
    const truth = transcriptsGroundTruth(w.tenant);
    expect(truth.environmentsWithoutTable).toBe(1);
    expect(truth.unreadableEnvironments).toBeGreaterThan(0);
    expect(Object.keys(truth.planted).sort()).toEqual(['benign', 'jailbreak', 'personal', 'secret', 'toolInjection']);
    const largest = Math.max(...w.tenant.environments.map((e) => e.dataverse?.conversationtranscripts?.length ?? 0));
    expect(largest).toBeGreaterThan(3);

    w.emulator.control.setFaults({ rate: 0.4, kinds: ['429'], seed: 11, services: ['dataverse'], match: '/conversationtranscripts' });
    let result: Awaited<ReturnType<typeof collectAndEvaluate>>;
    try {
      result = await collectAndEvaluate(rt, integrationId, { evaluate: false });
      expect(w.emulator.control.faults().counters.byKind['429']).toBeGreaterThan(0);
    } finally {
      w.emulator.control.clearFaults();
    }
    const { run, transcripts } = result;
    expect(run.streams.conversationTranscripts.records).toBe(truth.turns);
    const stored = await rt.db.selectFrom('transcript_turns').selectAll().where('integration_id', '=', integrationId).execute();
    expect(stored).toHaveLength(truth.turns);
    expect(stored.every((t) => t.evaluated_at !== null)).toBe(true);
    expect(transcripts.turns).toBe(truth.turns);

    // Throttling delays, never fails a slice: the errored slices are exactly the gaps (no table, no access).
    const errors = run.errors.filter((e) => e.stream === 'conversationTranscripts');
    expect(errors).toHaveLength(truth.environmentsWithoutTable + truth.unreadableEnvironments);
    expect(errors.filter((e) => e.message.includes('0x8006088a'))).toHaveLength(truth.environmentsWithoutTable);
    expect(errors.filter((e) => /0x80072560|0x80040220/.test(e.message))).toHaveLength(truth.unreadableEnvironments);

    // No planted secret or personal value anywhere: not in the database file (and its WAL), not in any row.
    expect(truth.plantedValues.length).toBeGreaterThanOrEqual(3);
    const onDisk = filesText(dataDir);
    const rows = JSON.stringify(stored) + JSON.stringify(await rt.db.selectFrom('alerts').selectAll().execute());
    for (const value of truth.plantedValues) {
      expect(onDisk).not.toContain(value);
      expect(rows).not.toContain(value);
    }
    expect(stored.some((t) => t.text.includes('[REDACTED:github_token]'))).toBe(true);
    expect(stored.some((t) => t.text.includes('[REDACTED:card_number]'))).toBe(true);

    // The alerts: one per planted case, none for the benign near miss nor for any generated conversation.
    const alerts = await rt.db.selectFrom('alerts').select(['rule_id', 'severity', 'detail']).where('integration_id', '=', integrationId).execute();
    const byConversation = alerts.map((a) => [a.rule_id, (JSON.parse(a.detail ?? '{}') as { conversationId: string }).conversationId, a.severity]);
    expect(byConversation.sort()).toEqual(
      [
        ['transcript_injection_marker', truth.planted.jailbreak, 'high'],
        ['transcript_injection_marker', truth.planted.toolInjection, 'high'],
        ['transcript_sensitive_data', truth.planted.personal, 'medium'],
        ['transcript_sensitive_data', truth.planted.secret, 'high'],
      ].sort(),
    );
    expect(transcripts.alertsRaised).toBe(4);

    // The conversation view shows the transcript turns, redacted, with their source and markers.
    const timeline = await conversationTimelineOf(rt.db, caller, integrationId, truth.planted.jailbreak!);
    expect(timeline.steps).toEqual([]);
    expect(timeline.turns.map((t) => [t.source, t.role])).toEqual([
      ['transcript', 'bot'],
      ['transcript', 'user'],
      ['transcript', 'bot'],
    ]);
    expect(timeline.turns[1]!.jailbreak).toBeGreaterThanOrEqual(0.5);
    expect(timeline.turns[1]!.markers.length).toBeGreaterThan(0);
    const tool = (await conversationTimelineOf(rt.db, caller, integrationId, truth.planted.toolInjection!)).turns.find((t) => t.role === 'tool')!;
    expect(tool.injection).toBeGreaterThanOrEqual(0.5);
    const list = await transcriptConversationsOf(rt.db, caller, integrationId, 500);
    expect(list.items.reduce((n, c) => n + c.turns, 0)).toBe(truth.turns);
  }, 120_000);

  it('stores the same turns, markers, alerts and conversation totals on PostgreSQL', async () => {
    let store: TestStore | undefined;
    try {
      store = await freshStore('postgres');
      const pg = await w.runtime(store.dataDir, { ...store.env, VIGIL_DATAVERSE_PAGE_SIZE: '3' });
      const { integration } = await addCustomerAppIntegration(pg, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
      const truth = transcriptsGroundTruth(w.tenant);
      const { transcripts } = await collectAndEvaluate(pg, integration.id, { evaluate: false });
      expect(transcripts).toMatchObject({ turns: truth.turns, alertsRaised: 4 });
      const list = await transcriptConversationsOf(pg.db, caller, integration.id, 500);
      expect(list.items.reduce((n, c) => n + c.turns, 0)).toBe(truth.turns);
      const jailbreak = list.items.find((c) => c.conversationId === truth.planted.jailbreak)!;
      expect(jailbreak.jailbreak).toBeGreaterThanOrEqual(0.5);
      expect(list.items.find((c) => c.conversationId === truth.planted.secret)!.secrets).toBe(1);
      const rows = JSON.stringify(await pg.db.selectFrom('transcript_turns').selectAll().execute());
      for (const value of truth.plantedValues) expect(rows).not.toContain(value);
    } finally {
      await store?.drop();
    }
  }, 120_000);

  it('the second run reads only the transcripts modified or added since, and evaluates only their new turns', async () => {
    const org = w.tenant.environments.find(
      (e) => e.dataverse?.conversationtranscripts?.length && e.dataverse.appUsers.some((a) => a.appId === w.app.appId),
    )!.dataverse!;
    const list = org.conversationtranscripts!;
    const changed = list[0]!;
    const before = turnsOf(changed);
    const content = JSON.parse(changed.content) as { activities: Record<string, unknown>[] };
    const now = Math.floor(Date.now() / 1000);
    content.activities.push(
      {
        id: 'late-1',
        type: 'message',
        timestamp: now,
        from: { id: 'u', aadObjectId: 'late-user', role: 1 },
        channelId: 'msteams',
        text: 'One more question: where is the canteen?',
      },
      {
        id: 'late-2',
        type: 'message',
        timestamp: now + 1,
        from: { id: 'b', role: 0 },
        channelId: 'msteams',
        text: 'On the ground floor.',
        replyToId: 'late-1',
      },
    );
    changed.content = JSON.stringify(content);
    changed.modifiedon = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const added: ConversationTranscript = {
      ...list[1]!,
      conversationtranscriptid: '0e0e0e0e-0000-4000-8000-000000000001',
      name: `0e0e0e0e-0000-4000-8000-0000000000aa_${list[1]!._bot_conversationtranscriptid_value}`,
      modifiedon: changed.modifiedon,
    };
    list.push(added);
    const truth = transcriptsGroundTruth(w.tenant);

    const { run, transcripts } = await collectAndEvaluate(rt, integrationId, { evaluate: false });
    expect(run.streams.conversationTranscripts.records).toBe(before + 2 + turnsOf(added));
    expect(run.streams.conversationTranscripts.incrementalSlices).toBe(truth.readableEnvironments);
    expect(transcripts.turns).toBe(2 + turnsOf(added));
    expect(await rt.db.selectFrom('transcript_turns').select('id').where('integration_id', '=', integrationId).execute()).toHaveLength(truth.turns);

    // A third run with no change reads nothing.
    const third = await collectAndEvaluate(rt, integrationId, { evaluate: false });
    expect(third.run.streams.conversationTranscripts.records).toBe(0);
    expect(third.transcripts.turns).toBe(0);
  }, 120_000);
});
