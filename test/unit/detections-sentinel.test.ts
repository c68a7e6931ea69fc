import { describe, expect, it } from 'vitest';
import { type AuditEvent } from '../../src/core/audit.ts';
import { normalizeRecord } from '../../src/sources/managementActivity/records.ts';
import { loadDetections } from '../../src/detections/index.ts';
import { detectionContext } from '../support/detections.ts';

// The rules that re-express Sentinel's Microsoft Business Applications and Microsoft Copilot solution rules, over
// records in the shapes the Management Activity API documents, normalised the way ingestion does.
const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);
let n = 0;
function rec(recordType: number, operation: string, raw: Record<string, unknown> = {}, atSeconds?: number): AuditEvent {
  n++;
  const r = {
    Id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    CreationTime: new Date(T0 + (atSeconds ?? n) * 1000).toISOString().slice(0, 19),
    RecordType: recordType,
    Operation: operation,
    UserId: 'ann@contoso.com',
    UserType: 0,
    ClientIP: '203.0.113.10',
    OrganizationId: 'tid',
    ...raw,
  };
  return normalizeRecord(r, 'Audit.General')!;
}

const detections = Object.fromEntries(loadDetections().map((d) => [d.metadata.id, d]));
/**
 * Runs one rule over the new `events`; `find` / `findRecords` search `stored` (the new events and any earlier ones);
 * `environments` is the collected inventory (id → SKU).
 */
const run = async (id: string, events: AuditEvent[], environments: Record<string, string> = {}, stored: AuditEvent[] = events) => {
  const search = ({ operations, from, to }: { operations: string[]; from: string; to: string }) =>
    stored.filter((e) => operations.includes(e.operation ?? '') && e.creationTime >= from && e.creationTime <= to);
  return detections[id]!.run(
    detectionContext({
      events: events.filter((e) => detections[id]!.metadata.recordTypes.includes(e.recordType!)),
      find: async (f) => search(f).map(({ raw: _raw, ...rest }) => rest),
      findRecords: async (f) => search(f),
      environments: async (ids) => new Map(ids.flatMap((i) => (environments[i] ? [[i, { displayName: `Env ${i}`, sku: environments[i]! }] as const] : []))),
    }),
  );
};

const props = (pairs: [string, string][]) => pairs.map(([Name, Value]) => ({ Name, Value }));
const copilot = (data: Record<string, unknown>, over: Record<string, unknown> = {}, at?: number) =>
  rec(
    261,
    'CopilotInteraction',
    { Workload: 'Copilot', CopilotEventData: { AppHost: 'Teams', Contexts: [], AccessedResources: [], Messages: [], ...data }, ...over },
    at,
  );
const copilotAdmin = (recordType: number, operation: string, resource: Record<string, unknown>[], over: Record<string, unknown> = {}, at?: number) =>
  rec(recordType, operation, { Workload: 'Copilot', CopilotEventData: { Resource: resource }, ...over }, at);
const aad = (operation: string, objectId: string, modified: [string, string][] = [], at?: number) =>
  rec(
    8,
    operation,
    {
      Workload: 'AzureActiveDirectory',
      ClientIP: null,
      UserId: 'root@contoso.com',
      ObjectId: objectId,
      ModifiedProperties: modified.map(([Name, NewValue]) => ({ Name, NewValue, OldValue: '' })),
      Target: [
        { ID: 'User_6d4ca534-c337-474d-8c76-6c715b31bc52', Type: 2 },
        { ID: objectId.replace(/^[0-9a-f]{32}/, ''), Type: 5 },
      ],
    },
    at,
  );
const flow = (operation: string, user: string, at: number) =>
  rec(30, operation, { Workload: 'MicrosoftFlow', UserId: user, ObjectId: `flow-${n}`, FlowConnectorNames: 'SharePoint' }, at);
const powerApp = (activity: string, user: string, at: number) =>
  rec(
    256,
    activity,
    {
      Workload: 'PowerPlatform',
      UserId: user,
      PropertyCollection: props([
        ['powerplatform.analytics.resource.type', 'PowerApp'],
        ['powerplatform.analytics.resource.power_app.id', `app-${n}`],
        ['powerplatform.analytics.resource.environment.id', 'env-1'],
        ['powerplatform.analytics.activity.name', activity],
      ]),
    },
    at,
  );

describe('Copilot jailbreak and prompt injection', () => {
  it('alerts on a message flagged JailbreakDetected or a resource flagged XPIADetected, not on records with the flags false', async () => {
    const jailbreak = copilot({
      Messages: [
        { Id: '1', isPrompt: true, JailbreakDetected: true },
        { Id: '2', isPrompt: false, JailbreakDetected: false },
      ],
    });
    const xpia = copilot({ AccessedResources: [{ Action: 'Read', SiteUrl: 'https://contoso.sharepoint.com/x.docx', XPIADetected: true }] });
    const clean = copilot({
      Messages: [{ Id: '3', isPrompt: true, JailbreakDetected: false }],
      AccessedResources: [{ Action: 'Read', SiteUrl: 'https://contoso.sharepoint.com/y.docx', XPIADetected: false }],
    });
    const hits = await run('copilot_jailbreak_attempt', [jailbreak, xpia, clean]);
    expect(hits.map((h) => h.eventIds[0])).toEqual([jailbreak.id, xpia.id]);
    expect(hits[0]!.detail).toMatchObject({ jailbreakMessageIds: ['1'] });
    expect(hits[1]!.title).toMatch(/prompt injection in 1 resource/);
  });
});

describe('Copilot plugin and settings changes', () => {
  it('a plugin created by a regular user alerts; by an administrator it does not', async () => {
    const user = copilotAdmin(310, 'CreatePlugin', [{ Property: 'Contoso Tickets', OriginalValue: '', NewValue: 'Created' }]);
    const admin = copilotAdmin(310, 'CreatePlugin', [{ Property: 'Contoso Wiki' }], { UserType: 2 });
    const hits = await run('copilot_plugin_created_by_non_admin', [user, admin]);
    expect(hits.map((h) => h.eventIds[0])).toEqual([user.id]);
    expect(hits[0]!.title).toMatch(/Contoso Tickets/);
  });

  it('file uploads turned from Enabled to Disabled alert; turned on, or another setting, do not', async () => {
    const off = copilotAdmin(314, 'DisableCopilotPlugin', [{ Property: 'FileUploads', OriginalValue: 'Enabled', NewValue: 'Disabled' }]);
    const viaSettings = copilotAdmin(325, 'UpdateTenantSettings', [{ Property: 'FileUploads', OriginalValue: 'Enabled', NewValue: 'Disabled' }]);
    const on = copilotAdmin(325, 'UpdateTenantSettings', [{ Property: 'FileUploads', OriginalValue: 'Disabled', NewValue: 'Enabled' }]);
    const other = copilotAdmin(314, 'DisableCopilotPlugin', [{ Property: 'ServiceNow', OriginalValue: 'Enabled', NewValue: 'Disabled' }]);
    const hits = await run('copilot_file_uploads_disabled', [off, viaSettings, on, other]);
    expect(hits.map((h) => h.eventIds[0])).toEqual([off.id, viaSettings.id]);
  });

  it('a plugin enabled again after being disabled alerts; a first enabling does not', async () => {
    const again = copilotAdmin(313, 'EnablePlugin', [{ Property: 'ServiceNow', OriginalValue: 'Disabled', NewValue: 'Enabled' }]);
    const first = copilotAdmin(313, 'EnablePlugin', [{ Property: 'Contoso Wiki', OriginalValue: '', NewValue: 'Enabled' }]);
    const hits = await run('copilot_plugin_reenabled', [again, first]);
    expect(hits.map((h) => h.eventIds[0])).toEqual([again.id]);
  });

  it('enable and disable by one user within five minutes alert once; six minutes apart, or by two users, do not', async () => {
    const on = copilotAdmin(313, 'EnablePlugin', [{ Property: 'ServiceNow' }], {}, 100);
    const off = copilotAdmin(314, 'DisableCopilotPlugin', [{ Property: 'ServiceNow' }], {}, 100 + 240);
    const bobOn = copilotAdmin(313, 'EnablePlugin', [{ Property: 'ServiceNow' }], { UserId: 'bob@contoso.com' }, 1000);
    const bobOff = copilotAdmin(314, 'DisableCopilotPlugin', [{ Property: 'ServiceNow' }], { UserId: 'bob@contoso.com' }, 1000 + 360);
    const carolOff = copilotAdmin(314, 'DisableCopilotPlugin', [{ Property: 'ServiceNow' }], { UserId: 'carol@contoso.com' }, 1010);
    const hits = await run('copilot_plugin_toggled', [on, off, bobOn, bobOff, carolOff]);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.eventIds).toEqual([on.id, off.id]);
  });
});

describe('Copilot interaction volume', () => {
  it("alerts when a user's hour reaches 30 and ten times their usual hourly count; a steady user does not", async () => {
    const events: AuditEvent[] = [];
    // Two days of history: ann and bob each once an hour.
    for (let h = 0; h < 48; h++) {
      events.push(copilot({}, {}, h * 3600));
      events.push(copilot({}, { UserId: 'bob@contoso.com' }, h * 3600 + 60));
    }
    // Then ann 35 times within 40 minutes, bob 12 times (above his usual, below the floor of 30).
    const spike = Array.from({ length: 35 }, (_, i) => copilot({}, {}, 49 * 3600 + i * 60));
    const bob = Array.from({ length: 12 }, (_, i) => copilot({}, { UserId: 'bob@contoso.com' }, 49 * 3600 + i * 60 + 30));
    const hits = await run(
      'copilot_interaction_volume_spike',
      [...events, ...spike, ...bob].filter((e) => e.creationTime >= new Date(T0 + 49 * 3600_000).toISOString()),
    );
    // The history is found through `find` (it searches every event below); only the last hour is new.
    expect(hits).toEqual([]);
    const withHistory = await run('copilot_interaction_volume_spike', [...spike, ...bob], {}, [...events, ...spike, ...bob]);
    expect(withHistory).toHaveLength(1);
    expect(withHistory[0]).toMatchObject({ detail: { user: 'ann@contoso.com', count: 35 } });
  });

  it('a burst before any history does not alert when read again later; the same burst after a day of history does', async () => {
    // ann 35 times within 35 minutes, then once an hour for a day: a later evaluation reads the burst again (its
    // cluster chains into the new events) but judges it against the hours before it, which hold nothing.
    const burst = (start: number) => Array.from({ length: 35 }, (_, i) => copilot({}, {}, start + i * 60));
    const hourly = (from: number) => Array.from({ length: 30 }, (_, h) => copilot({}, {}, from + h * 3600));
    const first = [...burst(0), ...hourly(3600)];
    const late = first.filter((e) => e.creationTime >= new Date(T0 + 24 * 3600_000).toISOString());
    expect(await run('copilot_interaction_volume_spike', late, {}, first)).toEqual([]);
    // The near miss: a day of history first, then the burst.
    const after = [...hourly(0), ...burst(31 * 3600)];
    const hits = await run('copilot_interaction_volume_spike', after.slice(-35), {}, after);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ detail: { user: 'ann@contoso.com', count: 35, threshold: 30 } });
  });
});

describe('Power Platform privileged roles', () => {
  it('an account added to Power Platform Administrator alerts; to Helpdesk Administrator it does not', async () => {
    const pp = aad('Add member to role.', 'newuser@contoso.com', [
      ['Role.ObjectID', 'cc5cbfa4-d24e-4060-9a46-4c8d447b0adf'],
      ['Role.DisplayName', 'Power Platform Administrator'],
      ['Role.TemplateId', '11648597-926c-4cf3-9c36-bcebb0ba8dcc'],
    ]);
    const helpdesk = aad('Add member to role.', 'newuser@contoso.com', [
      ['Role.DisplayName', 'Helpdesk Administrator'],
      ['Role.TemplateId', '729827e3-9c14-49f7-bb1b-9608f156bbb8'],
    ]);
    const hits = await run('power_platform_admin_role_added', [pp, helpdesk]);
    expect(hits.map((h) => h.eventIds[0])).toEqual([pp.id]);
    expect(hits[0]!.title).toBe('newuser@contoso.com added to Power Platform Administrator by root@contoso.com');
  });
});

describe('connections in production environments', () => {
  const put = (env: string) =>
    rec(256, 'PutConnection', {
      Workload: 'PowerPlatform',
      PropertyCollection: props([
        ['powerplatform.analytics.resource.type', 'Connection'],
        ['powerplatform.analytics.resource.connection.id', `shared-sql-${n}`],
        ['powerplatform.analytics.resource.environment.id', env],
        ['powerplatform.analytics.activity.name', 'PutConnection'],
      ]),
    });
  it('a connection in a Production environment alerts; in a Sandbox, or in an environment not collected, it does not', async () => {
    const prod = put('env-prod');
    const hits = await run('connection_in_production_environment', [prod, put('env-sandbox'), put('env-unknown')], {
      'env-prod': 'Production',
      'env-sandbox': 'Sandbox',
    });
    expect(hits.map((h) => h.eventIds[0])).toEqual([prod.id]);
    expect(hits[0]!.detail).toMatchObject({ sku: 'Production', environmentName: 'Env env-prod' });
  });
});

describe('bulk deletions', () => {
  it('five app deletions by one user within an hour alert once; four, or five spread over two hours, do not', async () => {
    const burst = Array.from({ length: 5 }, (_, i) => powerApp('DeletePowerApp', 'ann@contoso.com', i * 600));
    const four = Array.from({ length: 4 }, (_, i) => powerApp('DeletePowerApp', 'bob@contoso.com', i * 600));
    const slow = Array.from({ length: 5 }, (_, i) => powerApp('AdminDeleteApp', 'carol@contoso.com', i * 1800));
    const hits = await run('powerapps_bulk_deletion', [...burst, ...four, ...slow]);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.eventIds).toEqual(burst.map((e) => e.id));
    // Pages that read different parts of the burst name the same alert.
    const later = await run('powerapps_bulk_deletion', burst.slice(3), {}, [...burst, ...four, ...slow]);
    expect(later.map((h) => h.dedupeKey)).toEqual([hits[0]!.dedupeKey]);
  });

  it('five flow deletions within an hour alert unless the user deleted as many within an hour in the previous 14 days', async () => {
    const ann = Array.from({ length: 5 }, (_, i) => flow('DeleteFlow', 'ann@contoso.com', 10 * 86400 + i * 300));
    const bobEarlier = Array.from({ length: 5 }, (_, i) => flow('DeleteFlow', 'bob@contoso.com', i * 300));
    const bobAgain = Array.from({ length: 5 }, (_, i) => flow('DeleteFlow', 'bob@contoso.com', 10 * 86400 + i * 300));
    const all = [...bobEarlier, ...ann, ...bobAgain];
    const hits = await run('flow_bulk_deletion', [...ann, ...bobAgain], {}, all);
    expect(hits.map((h) => h.detail.user)).toEqual(['ann@contoso.com']);
  });
});

describe('apps shared with newly created guests', () => {
  const guestId = (i: number) => `0000000${i}-aaaa-4bbb-8ccc-00000000000${i}`;
  const invite = (i: number, at: number, upn = `guest${i}_fabrikam.com#EXT#@contoso.onmicrosoft.com`) =>
    rec(
      8,
      'Invite external user.',
      {
        Workload: 'AzureActiveDirectory',
        UserId: 'bob@contoso.com',
        ObjectId: upn,
        ModifiedProperties: [],
        Target: [
          { ID: `User_${guestId(i)}`, Type: 2 },
          { ID: guestId(i), Type: 2 },
          { ID: 'User', Type: 2 },
          { ID: upn, Type: 5 },
        ],
      },
      at,
    );
  const share = (target: string, at: number, user = 'ann@contoso.com') =>
    rec(
      256,
      'PowerAppPermissionEdited',
      {
        Workload: 'PowerPlatform',
        UserId: user,
        PropertyCollection: props([
          ['powerplatform.analytics.resource.type', 'PowerApp'],
          ['powerplatform.analytics.resource.power_app.id', 'app-1'],
          ['powerplatform.analytics.resource.power_app.display_name', 'Expense Tracker'],
          ['powerplatform.analytics.activity.name', 'PowerAppPermissionEdited'],
          ['targetuser.id', target],
        ]),
      },
      at,
    );
  it('three new guests within an hour alert once; guests created 20 days before, or members, do not count', async () => {
    const invites = [1, 2, 3, 4].map((i) => invite(i, 86400 * (i === 4 ? 0 : 19)));
    const shares = [1, 2, 3].map((i) => share(guestId(i), 86400 * 20 + i * 300));
    // bob: two new guests, one guest invited 20 days earlier, and a member (not a guest).
    const member = invite(5, 86400 * 19, 'carol@contoso.com');
    const bob = [
      share(guestId(1), 86400 * 20 + 60, 'bob@contoso.com'),
      share(guestId(2), 86400 * 20 + 90, 'bob@contoso.com'),
      share(guestId(4), 86400 * 20 + 120, 'bob@contoso.com'),
      share(guestId(5), 86400 * 20 + 150, 'bob@contoso.com'),
    ];
    const all = [...invites, member, ...shares, ...bob];
    const hits = await run('powerapps_shared_with_new_guests', [...shares, ...bob], {}, all);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ eventIds: shares.map((e) => e.id), detail: { user: 'ann@contoso.com', apps: ['Expense Tracker'] } });
    expect((hits[0]!.detail.guests as string[]).sort()).toEqual([guestId(1), guestId(2), guestId(3)]);
    // A later page holding only the last share names the same burst.
    const again = await run('powerapps_shared_with_new_guests', [shares[2]!], {}, all);
    expect(again.map((h) => h.dedupeKey)).toEqual([hits[0]!.dedupeKey]);
  });
});

describe('departing employee flow activity', () => {
  it('flow changes within 7 days of the account being disabled or deleted alert once per departure; other users do not', async () => {
    const edit = flow('EditFlow', 'newuser@contoso.com', 3600);
    const del = flow('DeleteFlow', 'newuser@contoso.com', 2 * 86400);
    const other = flow('CreateFlow', 'ann@contoso.com', 3600);
    const late = flow('CreateFlow', 'newuser@contoso.com', 20 * 86400);
    // The deleted user's ObjectId carries its object id (no dashes) before the UPN, as Entra records it.
    const deleted = aad('Delete user.', '6d4ca534c337474d8c766c715b31bc52newuser@contoso.com', [['Is Hard Deleted', 'False']], 86400);
    const disabledOther = aad('Disable account.', 'dave@contoso.com', [], 86400);
    const hits = await run('flow_activity_by_departing_user', [edit, other, deleted, disabledOther, del, late]);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.eventIds).toEqual([deleted.id, edit.id, del.id]);
    expect(hits[0]!.title).toMatch(/newuser@contoso.com deleted in Entra: 2 flow change\(s\) within 7 days, 1 after it/);
  });
});

describe('library', () => {
  it('every new rule names its Sentinel peer and the frameworks it maps to', () => {
    for (const id of [
      'copilot_jailbreak_attempt',
      'copilot_plugin_created_by_non_admin',
      'copilot_file_uploads_disabled',
      'copilot_plugin_reenabled',
      'copilot_plugin_toggled',
      'power_platform_admin_role_added',
      'connection_in_production_environment',
      'powerapps_bulk_deletion',
      'powerapps_shared_with_new_guests',
      'flow_bulk_deletion',
      'flow_activity_by_departing_user',
    ])
      expect(detections[id]!.metadata.peers.join(), id).toMatch(/^Sentinel "(Copilot|Power Apps|Power Automate|Power Platform) - /);
  });
});
