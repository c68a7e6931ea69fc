import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FaultConfig, FaultKind } from '../../emulator/index.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { listAlerts } from '../../src/store/repositories/audit.ts';
import { ingestAndDetect, ingestAudit, POWER_BI_SOURCE } from '../../src/sync/audit.ts';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import { parseExposition, sampleSum } from '../support/metrics.ts';
import { CLI, until, vigil } from '../support/process.ts';
import { TEST_ENV, world, type World } from './harness.ts';

const T = Date.parse('2026-11-20T12:00:00Z');
const HOUR = 3_600_000;

describe('audit ingestion through the emulated Management Activity API', () => {
  let w: World;
  beforeAll(async () => {
    w = await world({ seed: 'audit', sizes: { users: 25, guests: 3, groups: 3, environments: 3, agents: 5 } });
    w.emulator.control.setClock(new Date(T).toISOString());
    w.emulator.control.configureFeed(w.tenant.id, {
      recordsPerHour: 400,
      pageSize: 7,
      blobSize: 25,
      duplicateShare: 0.1,
      unavailableContentTypes: ['DLP.All'],
      since: new Date(T - 10 * 24 * HOUR).toISOString(),
    });
  });
  afterAll(async () => w.close());

  async function storedIds(rt: Awaited<ReturnType<World['runtime']>>): Promise<string[]> {
    return (await rt.db.selectFrom('audit_events').select('id').orderBy('id').execute()).map((r) => r.id);
  }

  function truthIds(from: number, to: number): string[] {
    const truth = w.emulator.control.auditGroundTruth(w.tenant.id, { from: new Date(from).toISOString(), to: new Date(to).toISOString() });
    // DLP.All is not provisioned for this tenant: nothing of it can be collected.
    return Object.entries(truth.contentTypes)
      .filter(([ct]) => ct !== 'DLP.All')
      .flatMap(([, c]) => c.ids ?? [])
      .sort();
  }

  it('stores every available record exactly once across duplicates, paging, and runs stopped at random points', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const now = new Date(T);
    // Stop the run after a few blobs, several times, as a crash would; each rerun resumes from the cursors.
    for (const stopAfter of [3, 11, 29]) {
      let blobs = 0;
      const r = await ingestAudit(rt, integration.id, {
        now,
        initialLookbackHours: 48,
        powerBi: false,
        afterBlob: () => {
          if (++blobs === stopAfter) throw new Error('killed');
        },
      });
      expect(Object.values(r.contentTypes).some((o) => o.status === 'error')).toBe(true);
    }
    const final = await ingestAudit(rt, integration.id, { now, initialLookbackHours: 48, powerBi: false });
    expect(final.contentTypes['DLP.All']).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/AF20012/) });
    for (const [ct, o] of Object.entries(final.contentTypes)) if (ct !== 'DLP.All') expect(o.status, ct).toBe('ok');
    const expected = truthIds(T - 48 * HOUR, T);
    expect(expected.length).toBeGreaterThan(500);
    expect(await storedIds(rt)).toEqual(expected);
    // Each event counted once as ingested, across the stopped runs and the final one.
    expect(sampleSum(parseExposition(await rt.metrics!.text()), 'vigil_audit_events_ingested_total')).toBe(expected.length);
    const again = await ingestAudit(rt, integration.id, { now, initialLookbackHours: 48, powerBi: false });
    expect(Object.values(again.contentTypes).reduce((n, o) => n + o.stored, 0)).toBe(0);
    expect(await storedIds(rt)).toEqual(expected);
  });

  it('a first run stopped before its first window was stored and resumed later reads from the first run’s start', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const first = T - 40 * 60_000;
    let blobs = 0;
    const stopped = await ingestAudit(rt, integration.id, {
      now: new Date(first),
      initialLookbackHours: 24,
      contentTypes: ['Audit.General'],
      powerBi: false,
      afterBlob: () => {
        if (++blobs === 2) throw new Error('killed');
      },
    });
    expect(stopped.contentTypes['Audit.General']!.status).toBe('error');
    // Resumed 40 minutes later: the records of the first run's first 40 minutes are still owed.
    const r = await ingestAudit(rt, integration.id, { now: new Date(T), initialLookbackHours: 24, contentTypes: ['Audit.General'], powerBi: false });
    expect(r.contentTypes['Audit.General']!.status).toBe('ok');
    const truth = w.emulator.control.auditGroundTruth(w.tenant.id, { from: new Date(first - 24 * HOUR).toISOString(), to: new Date(T).toISOString() });
    const expected = (truth.contentTypes['Audit.General']!.ids ?? []).sort();
    const stored = (
      await rt.db.selectFrom('audit_events').select('id').where('integration_id', '=', integration.id).where('content_type', '=', 'Audit.General').execute()
    ).map((x) => x.id);
    expect(expected.length).toBeGreaterThan(100);
    expect(expected.filter((id) => !stored.includes(id))).toEqual([]);
  });

  it('an 8-day outage raises a data-loss alert naming the content type and the lost window', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const before = T - 8 * 24 * HOUR;
    w.emulator.control.setClock(new Date(before).toISOString());
    await ingestAudit(rt, integration.id, { now: new Date(before), initialLookbackHours: 1, contentTypes: ['Audit.General'] });
    w.emulator.control.setClock(new Date(T).toISOString());
    const r = await ingestAudit(rt, integration.id, { now: new Date(T), contentTypes: ['Audit.General'] });
    expect(r.dataLossAlerts).toHaveLength(1);
    const [alert] = await listAlerts(rt.db, { integrationId: integration.id, ruleId: 'audit_data_loss' });
    expect(alert!.title).toMatch(/Audit\.General/);
    expect(Date.parse(alert!.window_start!)).toBeLessThanOrEqual(before);
    expect(Date.parse(alert!.window_end!)).toBeGreaterThan(T - 7 * 24 * HOUR);
    expect(r.contentTypes['Audit.General']!.status).toBe('ok');
  });

  /** Two hours of Audit.General ingested under injected faults: every record stored, each fault kind met. */
  async function ingestsEverythingUnder(faults: FaultConfig, met: FaultKind) {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    w.emulator.control.setFaults({ ...faults, services: ['managementActivity'] });
    try {
      const r = await ingestAudit(rt, integration.id, { now: new Date(T), initialLookbackHours: 2, contentTypes: ['Audit.General'], powerBi: false });
      expect(r.contentTypes['Audit.General']).toMatchObject({ status: 'ok', malformed: 0 });
      expect(w.emulator.control.faults().counters.byKind[met]).toBeGreaterThan(0);
    } finally {
      w.emulator.control.clearFaults();
    }
    const truth = w.emulator.control.auditGroundTruth(w.tenant.id, { from: new Date(T - 2 * HOUR).toISOString(), to: new Date(T).toISOString() }).contentTypes[
      'Audit.General'
    ].ids!;
    expect(await storedIds(rt)).toEqual([...truth].sort());
  }

  it('AF429 (answered as HTTP 403) and 429 are waited out: a throttled ingestion still stores every record', async () => {
    await ingestsEverythingUnder({ rate: 0.15, kinds: ['af429', '429'], seed: 5 }, 'af429');
  });

  it('content blobs cut short on the way or reset are fetched again: every record stored, none from a partial body', async () => {
    await ingestsEverythingUnder({ rate: 0.2, kinds: ['truncate', 'reset'], seed: 11 }, 'truncate');
  });

  it('a stopped ingestion ends its throttled wait at once and records nothing for the content type it was reading', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    // Every Management Activity answer is a 429 with Retry-After 100 s: the tenant's budget is blocked for 100 s.
    w.emulator.control.setFaults({ rate: 1, kinds: ['429'], services: ['managementActivity'], maxRetryAfterSeconds: 100 });
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('worker stopping')), 300);
      const started = Date.now();
      const run = ingestAudit(rt, integration.id, { now: new Date(T), contentTypes: ['Audit.General'], powerBi: false, signal: controller.signal });
      const hung = new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5000).unref());
      expect(
        await Promise.race([
          run.then(
            () => 'finished',
            (e: unknown) => e,
          ),
          hung,
        ]),
      ).toEqual(new Error('worker stopping'));
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      w.emulator.control.clearFaults();
    }
    // Not marked unavailable (the throttled subscription start is not a refusal), no cursor moved.
    expect(await rt.db.selectFrom('audit_cursors').selectAll().where('integration_id', '=', integration.id).execute()).toEqual([]);
  });

  it('content that expires (AF20051) between listing and fetching is a data-loss alert naming the content', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    // Two planted blobs at the far end of what can be listed: they expire 61 and 62 minutes after "now". One listing
    // page holds both, so only the fetch of the second sees the upstream's later clock.
    w.emulator.control.configureFeed(w.tenant.id, { pageSize: 1000 });
    const oldest = T - 167 * HOUR;
    const [first] = w.emulator.control.addAuditRecords(w.tenant.id, 'Audit.General', [{ Operation: 'FileAccessed', RecordType: 6, UserId: 'ann@x' }], {
      contentCreated: new Date(oldest + 60_000).toISOString(),
    });
    const [second] = w.emulator.control.addAuditRecords(w.tenant.id, 'Audit.General', [{ Operation: 'FileAccessed', RecordType: 6, UserId: 'bob@x' }], {
      contentCreated: new Date(oldest + 120_000).toISOString(),
    });
    try {
      const r = await ingestAudit(rt, integration.id, {
        now: new Date(T),
        initialLookbackHours: 167,
        contentTypes: ['Audit.General'],
        powerBi: false,
        concurrency: 1,
        // Each blob in its own transaction, so the first is stored before the second is fetched.
        commitRecords: 1,
        // Time passes on the upstream while Vigil works: 62.5 minutes once the first planted blob is stored.
        afterBlob: (_ct, contentId) => void (contentId === first!.contentId && w.emulator.control.advanceClock(62.5 * 60)),
      });
      expect(r.contentTypes['Audit.General']!.expiredBlobs, JSON.stringify(r).slice(0, 700)).toBeGreaterThan(0);
      expect(r.dataLossAlerts).toHaveLength(1);
      const [alert] = await listAlerts(rt.db, { integrationId: integration.id, ruleId: 'audit_data_loss' });
      expect(alert!.title).toMatch(/Audit\.General: \d+ content blob\(s\) expired before they were fetched/);
      expect((JSON.parse(alert!.detail!) as { contentIds: string[]; reason: string }).contentIds).toContain(second!.contentId);
      expect(await storedIds(rt)).toContain(first!.ids[0]);
      expect(await storedIds(rt)).not.toContain(second!.ids[0]);
    } finally {
      w.emulator.control.setClock(new Date(T).toISOString());
      w.emulator.control.configureFeed(w.tenant.id, { pageSize: 7 });
    }
  });

  it('without ActivityFeed.Read every content type is "not evaluated" with the permission named, not a failure', async () => {
    w.app.grantedRoles['https://manage.office.com'] = [];
    try {
      const rt = await w.runtime();
      const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
      const r = await ingestAudit(rt, integration.id, { now: new Date(T) });
      for (const [ct, o] of Object.entries(r.contentTypes))
        if (ct !== POWER_BI_SOURCE) expect(o).toMatchObject({ status: 'unavailable', reason: expect.stringMatching(/ActivityFeed\.Read/) });
    } finally {
      w.app.grantedRoles['https://manage.office.com'] = ['ActivityFeed.Read'];
    }
  });
});

describe('detections over the emulated feed match its ground truth', () => {
  let w: World;
  beforeAll(async () => {
    // The tenant as of T: its components and agents were last changed before the feed's window.
    w = await world({ seed: 'detect', now: new Date(T).toISOString(), sizes: { users: 40, guests: 5, groups: 3, environments: 3, agents: 8 } });
    w.emulator.control.setClock(new Date(T).toISOString());
    w.emulator.control.configureFeed(w.tenant.id, { recordsPerHour: 1500, duplicateShare: 0.05, since: new Date(T - 3 * 24 * HOUR).toISOString() });
  });
  afterAll(async () => w.close());

  it('each rule alerts on exactly its scenario records and on none of the near-misses', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    // The environments inventory tells which environments are production (connection_in_production_environment), the
    // agent components which component a record is about; the checks evaluated after the collection (as `vigil
    // collect` does) open the findings issues join. Evaluated at T, the feed's now: a finding opened more than 7 days
    // after an agent's records would not join them.
    vi.useFakeTimers({ toFake: ['Date'], now: T });
    try {
      const { run, evaluation } = await collectAndEvaluate(rt, integration.id);
      expect(run.errors.length).toBeGreaterThan(0); // the environment without the connector's application user
      expect(evaluation!.findingsOpen).toBeGreaterThan(0);
    } finally {
      vi.useRealTimers();
    }
    // Power BI activity events are left out: they also serve records whose feed blobs are not created yet.
    const { ingest, detections } = await ingestAndDetect(rt, integration.id, { now: new Date(T), initialLookbackHours: 48, powerBi: false });
    for (const [ct, o] of Object.entries(ingest.contentTypes)) expect(o.status, ct).toBe('ok');
    const truth = w.emulator.control.auditGroundTruth(w.tenant.id, {
      from: new Date(T - 48 * HOUR).toISOString(),
      to: new Date(T).toISOString(),
      includeIds: false,
      activity: true,
    });
    const s = truth.scenarios;
    const n = (...names: string[]) => names.reduce((sum, k) => sum + (s[k] ?? 0), 0);
    // Component records are about the tenant's components; a collection holds those of the readable environments.
    const components = (scenario: string) => truth.componentRecords[scenario] ?? { records: 0, readable: 0, readableComponents: 0, agentUserHours: 0 };
    const whole = (burst: string) => truth.bursts[burst] ?? { whole: 0 };
    // Per-record rules: one alert per scenario record. Their near-misses (member on labelled content, authentication
    // changed to something other than None, DLP policy created or renamed, connector updated, user consent, app role
    // assignment, report shared) are in the same feed and must not alert.
    const expected: Record<string, number> = {
      copilot_guest_sensitive_access: n('copilot.guestLabelled'),
      agent_authentication_none: n('agent.authNone', 'agent.publishedAuthNone'),
      dlp_policy_weakened: n('dlp.policyWeakened', 'dlp.policyDeleted'),
      custom_connector_created: n('customConnector.created'),
      admin_consent_granted: n('entra.adminConsent'),
      service_principal_credentials_added: n('entra.spCredentials'),
      powerbi_publish_to_web: n('powerbi.publishToWeb'),
      // Agent lifecycle: near-misses are the clean-up after a deletion, authentication changed to a stronger mode,
      // sharing with a security group or a user, topics created or edited.
      agent_created: n('agent.created'),
      agent_published: n('agent.published', 'agent.publishedAuthNone'),
      agent_deleted: n('agent.deleted'),
      agent_authentication_weakened: n('agent.authWeakened'),
      agent_access_broadened: n('agent.sharedWithEveryone'),
      agent_app_insights_changed: n('agent.appInsightsChanged'),
      // Knowledge sources other than public websites; a public website in an environment Vigil cannot read is known by
      // the record's component type only (knowledge). Tools and MCP servers are known from the collected component
      // only; public websites alert once per component (and site).
      agent_knowledge_added:
        n('agent.knowledgeAdded') + components('agent.publicWebsiteKnowledgeAdded').records - components('agent.publicWebsiteKnowledgeAdded').readable,
      agent_knowledge_public_website: components('agent.publicWebsiteKnowledgeAdded').readableComponents,
      agent_tool_added: components('agent.toolAdded').readable,
      agent_mcp_server_added: components('agent.mcpServerAdded').readable,
      // Instruction edits: one alert per agent, user and hour (readable or not: the record's component type says it).
      agent_instructions_changed: components('agent.instructionsChanged').agentUserHours,
      // Issue 20 (Sentinel peers). Near misses in the feed: interactions with the flags false, plugins created by
      // administrators, file uploads turned on, other roles, guests disabled (they own no flows), connections in
      // non-production environments.
      copilot_jailbreak_attempt: n('copilot.jailbreak', 'copilot.xpia'),
      copilot_plugin_created_by_non_admin: n('copilotPlugin.createdByUser'),
      copilot_file_uploads_disabled: n('copilotSettings.fileUploadsDisabled'),
      // The enable half of each toggle burst goes from Disabled to Enabled too.
      copilot_plugin_reenabled: n('copilotPlugin.reenabled', 'copilotPlugin.toggledOn'),
      power_platform_admin_role_added: n('entra.powerPlatformAdminRole'),
      // Bursts (emulator RecordVariant.burst) whole in the window: bulk deletions of 5 by one user (flows: each burst's
      // user is new to it), toggles (an enable and a disable within minutes), shares to 3 guests once each guest's
      // invitation is stored before the share.
      powerapps_bulk_deletion: whole('powerApps.bulkDelete').whole,
      flow_bulk_deletion: whole('flow.bulkDelete').whole,
      copilot_plugin_toggled: whole('copilotPlugin.toggle').whole,
      powerapps_shared_with_new_guests: whole('powerApps.sharedToNewGuests').guestsInvited ?? 0,
      // Issues: readable agents failing a medium-or-worse check (the tenant's ground truth: every fact but dormancy,
      // a low-severity check) that have agent records in the window.
      agent_posture_runtime_issue: Object.entries(w.truth.agentFacts).filter(
        ([agent, facts]) => facts.some((f) => f !== 'dormant') && (truth.agentRecords[agent] ?? 0) > 0,
      ).length,
    };
    if (w.tenant.environments.some((e) => e.environmentSku === 'Production')) expected.connection_in_production_environment = n('connection.production');
    for (const [rule, count] of Object.entries(expected)) {
      expect(count, rule).toBeGreaterThan(0);
      expect(detections.byRule[rule] ?? 0, rule).toBe(count);
    }
    // The joins are not vacuous: some component records are about components in the environment Vigil cannot read (no
    // tool alert there; public websites alert once per component), the agents there have records but no finding,
    // repeated instruction saves fall in one hour, and some whole share bursts precede a guest's invitation.
    const by = (rule: string) => detections.byRule[rule] ?? 0;
    expect(components('agent.toolAdded').records + components('agent.mcpServerAdded').records).toBeGreaterThan(
      by('agent_tool_added') + by('agent_mcp_server_added'),
    );
    expect(components('agent.publicWebsiteKnowledgeAdded').readable).toBeGreaterThan(by('agent_knowledge_public_website'));
    expect(components('agent.instructionsChanged').records).toBeGreaterThan(by('agent_instructions_changed'));
    expect(Object.keys(truth.agentRecords).length).toBeGreaterThan(by('agent_posture_runtime_issue'));
    expect(whole('powerApps.sharedToNewGuests').whole).toBeGreaterThan(by('powerapps_shared_with_new_guests'));
    // Rules over many records, from what the feed's users did (the ground truth's `activity`). Volume spikes: bursts
    // of 120 interactions by one member (above 10 times a member's usual hour in this feed); a burst before the user
    // has history cannot alert.
    const activity = truth.activity!;
    expect(by('copilot_interaction_volume_spike')).toBe(activity.copilotSpikes);
    expect(activity.copilotSpikesWithoutHistory).toBeGreaterThan(0);
    // Departures: one alert per disabled member with flow activity within 7 days (members make flows often); disabled
    // guests own none.
    expect(by('flow_activity_by_departing_user')).toBe(activity.departuresWithFlowActivity);
    expect(n('entra.memberDisabled', 'entra.guestDisabled')).toBeGreaterThan(by('flow_activity_by_departing_user'));
    // Flows: one alert per (flow, outside host); the feed's flows are not collected, so each flow calling any URL (the
    // HTTP connector) alerts once, and never one calling Microsoft APIs through the Entra-authenticated connector.
    expect(by('flow_external_http')).toBe(activity.externalHttpFlows);
    expect(n('flow.externalHttp')).toBeGreaterThan(by('flow_external_http'));
    const flows = await listAlerts(rt.db, { integrationId: integration.id, ruleId: 'flow_external_http' });
    for (const a of flows)
      for (const host of (JSON.parse(a.detail!) as { hosts: string[] }).hosts) expect(host).not.toMatch(/microsoft\.com|sharepoint\.com|azure\.com/);
    // Copilot from an address new for the user: once per (user, address); a user's first record never alerts.
    expect(by('copilot_new_ip')).toBe(activity.copilotNewIps);
    for (const [rule, count] of Object.entries({
      copilot_interaction_volume_spike: activity.copilotSpikes,
      flow_activity_by_departing_user: activity.departuresWithFlowActivity,
      flow_external_http: activity.externalHttpFlows,
      copilot_new_ip: activity.copilotNewIps,
    }))
      expect(count, rule).toBeGreaterThan(0);
    // Every alert links the events that raised it; a second cycle raises nothing new.
    const linked = await rt.db.selectFrom('alert_events').select('alert_id').distinct().execute();
    expect(linked.length).toBe((await listAlerts(rt.db, { integrationId: integration.id })).length);
    expect((await ingestAndDetect(rt, integration.id, { now: new Date(T), initialLookbackHours: 48, powerBi: false })).detections.alertsRaised).toBe(0);
  });

  it('reads Power BI activity events one UTC day per call, storing every event once next to its Audit.General copy', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const r = await ingestAudit(rt, integration.id, { now: new Date(T), initialLookbackHours: 40, contentTypes: [] });
    const pbi = r.contentTypes[POWER_BI_SOURCE]!;
    expect(pbi.status).toBe('ok');
    // 40 hours back from noon spans three UTC days: at least three calls, each within one day.
    const calls = w.emulator.control.requests().filter((q) => q.path.includes('/admin/activityevents') && q.path.includes('startDateTime'));
    expect(calls.length).toBeGreaterThanOrEqual(3);
    const truth = w.emulator.control.powerBiGroundTruth(w.tenant.id, { from: new Date(T - 40 * HOUR).toISOString(), to: new Date(T).toISOString() });
    expect(truth.count).toBeGreaterThan(50);
    const stored = new Set((await rt.db.selectFrom('audit_events').select('id').where('integration_id', '=', integration.id).execute()).map((e) => e.id));
    expect(truth.ids.filter((id) => !stored.has(id))).toEqual([]);
    expect(pbi.stored).toBe(truth.count);
    // The Management Activity copy of the same records is dropped as duplicates.
    const feed = await ingestAudit(rt, integration.id, { now: new Date(T), initialLookbackHours: 40, contentTypes: ['Audit.General'], powerBi: false });
    expect(feed.contentTypes['Audit.General']!.duplicates).toBeGreaterThan(0);
  });

  it('Power BI refused to the service principal is "not evaluated" with the tenant setting to change, and nothing else fails', async () => {
    w.emulator.control.setPowerBiAdminApiAccess(w.tenant.id, false);
    try {
      const rt = await w.runtime();
      const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
      const r = await ingestAudit(rt, integration.id, { now: new Date(T), initialLookbackHours: 2 });
      expect(r.contentTypes[POWER_BI_SOURCE]).toMatchObject({
        status: 'unavailable',
        stored: 0,
        reason: expect.stringMatching(/Service principals can access read-only admin APIs/),
      });
      expect(r.contentTypes['Audit.General']!.status).toBe('ok');
    } finally {
      w.emulator.control.setPowerBiAdminApiAccess(w.tenant.id, true);
    }
  });
});

describe('vigil audit killed with SIGKILL at random points', () => {
  let w: World;
  beforeAll(async () => {
    w = await world({ seed: 'audit-kill', sizes: { users: 30, guests: 3, groups: 3, environments: 3, agents: 5 } });
    // Real time (the CLI reads the clock): a day of 1,500 records an hour in blobs of 40.
    w.emulator.control.configureFeed(w.tenant.id, {
      recordsPerHour: 1500,
      blobSize: 40,
      pageSize: 50,
      duplicateShare: 0.05,
      since: new Date(Date.now() - 3 * 24 * HOUR).toISOString(),
    });
  });
  afterAll(async () => w.close());

  it('resumes from its cursors: every available record stored exactly once, none from outside the window', async () => {
    const rt = await w.runtime();
    const { integration } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret });
    const count = async () =>
      Number(
        (
          await rt.db
            .selectFrom('audit_events')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirst()
        )?.n ?? 0,
      );
    const run = () => {
      const child = spawn(process.execPath, [...CLI, '--data-dir', rt.config.dataDir, 'audit', integration.id, '--json'], {
        env: { ...process.env, ...TEST_ENV, VIGIL_ENDPOINTS_FILE: w.endpointsFile },
        stdio: 'ignore',
      });
      const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
      return { child, exited };
    };
    const firstStart = Date.now();
    // Kill after a random number of stored events, three times; each rerun resumes from the cursors.
    for (const [low, high] of [
      [500, 3000],
      [6000, 12000],
      [15000, 22000],
    ] as const) {
      const target = low + Math.floor(Math.random() * (high - low));
      const p = run();
      await until(`${target} events stored`, async () => (await count()) >= target, 60_000);
      p.child.kill('SIGKILL');
      expect(await p.exited).toBeNull(); // killed, not finished
    }
    const finalStart = Date.now();
    const last = run();
    expect(await last.exited).toBe(0);
    const finalEnd = Date.now();
    const stored = new Set((await rt.db.selectFrom('audit_events').select('id').where('content_type', '!=', POWER_BI_SOURCE).execute()).map((r) => r.id));
    const ids = (from: number, to: number) =>
      Object.values(
        w.emulator.control.auditGroundTruth(w.tenant.id, { from: new Date(from).toISOString(), to: new Date(to).toISOString() }).contentTypes,
      ).flatMap((c) => c.ids ?? []);
    // The first run's window starts 24 h before its own clock (a few seconds after firstStart).
    const mustHave = ids(firstStart - 24 * HOUR + 30_000, finalStart);
    const mayHave = new Set(ids(firstStart - 24 * HOUR, finalEnd));
    expect(mustHave.length).toBeGreaterThan(30_000);
    expect(mustHave.filter((id) => !stored.has(id))).toEqual([]);
    expect([...stored].filter((id) => !mayHave.has(id))).toEqual([]);

    // The CLI over what was stored: alerts with their events, the lifecycle, events with their raw records.
    const env = { VIGIL_DATA_DIR: rt.config.dataDir, VIGIL_ENDPOINTS_FILE: w.endpointsFile };
    const alerts = JSON.parse((await vigil(['alerts', '--json'], env)).stdout) as { id: string; status: string; ruleId: string; eventIds: string[] }[];
    expect(alerts.length).toBeGreaterThan(0);
    const all = new Set((await rt.db.selectFrom('audit_events').select('id').execute()).map((r) => r.id));
    for (const a of alerts) expect(a.eventIds.length > 0 && a.eventIds.every((id) => all.has(id)), a.ruleId).toBe(true);
    expect((await vigil(['alerts', 'ack', alerts[0]!.id], env)).code).toBe(0);
    expect((JSON.parse((await vigil(['alerts', '--status', 'acknowledged', '--json'], env)).stdout) as { id: string }[]).map((a) => a.id)).toEqual([
      alerts[0]!.id,
    ]);
    expect((await vigil(['alerts', 'close', 'alr_nope'], env)).code).not.toBe(0);
    const events = JSON.parse((await vigil(['events', '--operation', 'CopilotInteraction', '--limit', '3', '--json', '--raw'], env)).stdout) as {
      id: string;
      operation: string;
      raw: { Id: string; CopilotEventData?: unknown };
    }[];
    expect(events).toHaveLength(3);
    for (const e of events) expect([e.operation, e.raw.Id, typeof e.raw.CopilotEventData]).toEqual(['CopilotInteraction', e.id, 'object']);
    const bad = await vigil(['events', '--since', 'yesterday-ish', '--json'], env);
    expect([bad.code, bad.stdout + bad.stderr]).toEqual([2, expect.stringMatching(/--since/)]);
  }, 180_000); // three killed and resumed audit runs over real HTTPS: ~20–60 s depending on the machine's load
});
