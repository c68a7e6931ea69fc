import { beforeAll, describe, expect, it } from 'vitest';
import { creationTime } from '../../emulator/auditrecords.ts';
import { componentKind } from '../../emulator/agentcomponents.ts';
import { normalizeRecord } from '../../src/sources/managementActivity/records.ts';
import { powerAppsActivity } from '../../src/sources/managementActivity/views.ts';
import { EmulatedClock, parseUtc } from '../../emulator/clock.ts';
import { FeedStore, parseFeedTime, type TenantFeed } from '../../emulator/feed.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { CONTENT_TYPES, TenantStore, type Tenant } from '../../emulator/index.ts';

type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- records are asserted field by field

const NOW = '2025-06-10T12:00:00Z';
const WINDOW = { from: '2025-06-10T04:00:00Z', to: '2025-06-10T10:00:00Z' };

let tenant: Tenant;
let feed: TenantFeed;
let clock: EmulatedClock;
const records = new Map<string, Rec[]>();

function collect(f: TenantFeed, ct: (typeof CONTENT_TYPES)[number], from: string, to: string): Rec[] {
  const out: Rec[] = [];
  for (const b of f.listContent(ct, Date.parse(from), Date.parse(to))) {
    const r = f.blob(b.contentId);
    if (r.status !== 'ok') throw new Error(`blob ${b.contentId}: ${r.status}`);
    out.push(...(JSON.parse(r.json) as Rec[]));
  }
  return out;
}

beforeAll(() => {
  tenant = generateTenant({ seed: 'records', sizes: { users: 60, guests: 8, environments: 3, agents: 20 } });
  clock = new EmulatedClock();
  clock.set(NOW);
  feed = new FeedStore(new TenantStore([tenant]), clock).feed(tenant.id) as TenantFeed;
  // Plenty of the rare kinds: a busy Audit.General and Azure AD / DLP share.
  feed.configure({
    recordsPerHour: 4000,
    mix: { 'Audit.General': 0.5, 'Audit.AzureActiveDirectory': 0.2, 'DLP.All': 0.1, 'Audit.Exchange': 0.1, 'Audit.SharePoint': 0.1 },
    kindMix: { powerPlatformAdmin: 25, powerPlatformDlp: 10 },
  });
  for (const ct of CONTENT_TYPES) records.set(ct, collect(feed, ct, WINDOW.from, WINDOW.to));
});

const general = (): Rec[] => records.get('Audit.General')!;
const upns = (): Set<string> => new Set(tenant.users.map((u) => u.userPrincipalName));

describe('common schema', () => {
  it('every record has the common fields with Microsoft formats', () => {
    const problems: string[] = [];
    const check = (ok: boolean, what: string, r: Rec) => {
      if (!ok && problems.length < 10) problems.push(`${what}: ${JSON.stringify(r).slice(0, 200)}`);
    };
    for (const ct of CONTENT_TYPES) {
      const list = records.get(ct)!;
      expect(list.length, ct).toBeGreaterThan(50);
      for (const r of list) {
        check(Object.keys(r).slice(0, 5).join() === 'CreationTime,Id,Operation,OrganizationId,RecordType', 'key order', r);
        check(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(r.CreationTime), 'CreationTime', r);
        check(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(r.Id), 'Id', r);
        check(r.OrganizationId === tenant.id, 'OrganizationId', r);
        check(Number.isInteger(r.RecordType), 'RecordType', r);
        check(typeof r.UserType === 'number' && typeof r.UserKey === 'string' && typeof r.UserId === 'string', 'user fields', r);
        check('ClientIP' in r && typeof r.Workload === 'string', 'ClientIP/Workload', r);
      }
    }
    expect(problems).toEqual([]);
  });

  it('users come from the directory (guests included); each has a small set of usual IPs', () => {
    const known = upns();
    const copilot = general().filter((r) => r.RecordType === 261);
    for (const r of copilot) expect(known.has(r.UserId)).toBe(true);
    expect(copilot.some((r) => r.UserId.includes('#EXT#') && r.UserType === 10)).toBe(true);
    const ips = new Map<string, Map<string, number>>();
    for (const r of [...general(), ...records.get('Audit.SharePoint')!]) {
      if (typeof r.ClientIP !== 'string') continue;
      const m = ips.get(r.UserId) ?? new Map<string, number>();
      m.set(r.ClientIP, (m.get(r.ClientIP) ?? 0) + 1);
      ips.set(r.UserId, m);
    }
    let rare = 0;
    let total = 0;
    for (const m of ips.values()) {
      const usual = [...m.values()].filter((n) => n > 1).length;
      expect(usual).toBeLessThanOrEqual(3);
      rare += [...m.values()].filter((n) => n === 1).length;
      total += [...m.values()].reduce((a, b) => a + b, 0);
    }
    expect(rare).toBeGreaterThan(0);
    expect(rare / total).toBeLessThan(0.05);
  });

  it('record time is in the blob window and before its contentCreated by the configured lag', () => {
    const settings = feed.settings();
    for (const b of feed.listContent('Audit.Exchange', Date.parse(WINDOW.from), Date.parse(WINDOW.to))) {
      const r = feed.blob(b.contentId);
      if (r.status !== 'ok') continue;
      for (const rec of JSON.parse(r.json) as Rec[]) {
        const lag = b.contentCreated - Date.parse(`${rec.CreationTime}Z`);
        expect(lag).toBeGreaterThanOrEqual(settings.minDelayMinutes * 60_000);
        // A duplicate rides one window later.
        expect(lag).toBeLessThanOrEqual((settings.maxDelayMinutes + 2 * settings.batchMinutes) * 60_000);
      }
    }
  });
});

describe('Audit.General kinds', () => {
  it('CopilotInteraction (261) carries CopilotEventData; guests touch labelled resources', () => {
    const copilot = general().filter((r) => r.Operation === 'CopilotInteraction');
    expect(copilot.length).toBeGreaterThan(100);
    for (const r of copilot) {
      expect(r).toMatchObject({ RecordType: 261, Workload: 'Copilot', Version: 1 });
      expect(Object.keys(r.CopilotEventData)).toEqual([
        'AppHost',
        'Contexts',
        'ThreadId',
        'MessageIds',
        'Messages',
        'AccessedResources',
        'ModelTransparencyDetails',
        'AISystemPlugin',
      ]);
      expect(r.CopilotEventData.ThreadId).toMatch(/^19:[A-Za-z0-9]+@thread\.v2$/);
      expect(r.CopilotEventData.Messages.filter((m: Rec) => m.isPrompt)).not.toHaveLength(0);
      for (const a of r.CopilotEventData.AccessedResources) expect(Object.keys(a).slice(0, 5)).toEqual(['Id', 'SiteUrl', 'Name', 'Type', 'Action']);
      expect(r.CopilotEventData.ModelTransparencyDetails[0]).toHaveProperty('ModelName');
    }
    const labelled = copilot.filter((r) => r.UserType === 10 && r.CopilotEventData.AccessedResources.some((a: Rec) => a.SensitivityLabelId));
    expect(labelled.length).toBeGreaterThan(0);
    const agents = copilot.filter((r) => typeof r.AppIdentity === 'string');
    const botIds = new Set(tenant.environments.flatMap((e) => e.dataverse?.bots.map((b) => b.botid) ?? []));
    expect(agents.length).toBeGreaterThan(0);
    for (const r of agents) {
      expect(r.AppIdentity).toBe(`Copilot.Studio.${r.AgentId}`);
      expect(botIds.has(r.AgentId)).toBe(true);
    }
  });

  it('Power Apps as RecordType 256 with a PowerApp resource (as Microsoft sends them), Power Automate (30) listing the HTTP connector, Power BI (20) with PublishToWebReport', () => {
    // Microsoft Learn "View Power Apps activity logs" and the real LaunchPowerApp record of the corpus
    // (audit/pnp-analytics-powerapps-launch-sanitised.json): no RecordType 45 any more.
    expect(general().some((r) => r.RecordType === 45)).toBe(false);
    const prop = (r: Rec, name: string): unknown => r.PropertyCollection.find((p: Rec) => p.Name === name)?.Value;
    const apps = general().filter((r) => r.RecordType === 256 && prop(r, 'powerplatform.analytics.resource.type') === 'PowerApp');
    expect(apps.some((r) => r.Operation === 'LaunchPowerApp')).toBe(true);
    for (const r of apps) {
      expect(r).toMatchObject({
        Workload: 'PowerPlatform',
        ResultStatus: 'Succeeded',
        EnvironmentId: prop(r, 'powerplatform.analytics.resource.environment.id'),
        ClientIP: prop(r, 'enduser.ip_address'),
      });
      // Vigil's typed view reads the app, its environment and the activity from the record.
      const view = powerAppsActivity(normalizeRecord(r, 'Audit.General')!)!;
      expect(view).toMatchObject({
        recordType: 256,
        appId: prop(r, 'powerplatform.analytics.resource.power_app.id'),
        appName: prop(r, 'powerplatform.analytics.resource.power_app.display_name'),
        environmentId: r.EnvironmentId,
        activity: r.Operation,
      });
      expect(view.appId).toMatch(/^[0-9a-f-]{36}$/);
    }
    const flows = general().filter((r) => r.RecordType === 30);
    expect(flows.every((r) => r.Workload === 'MicrosoftFlow' && r.FlowDetailsUrl.startsWith('https://make.powerautomate.com/environments/'))).toBe(true);
    // Real flow records carry connector names, never an action's URL (Microsoft Learn "View Power Automate activity
    // logs"): the emulator invents no action detail.
    expect(flows.some((r) => 'FlowHttpActions' in r)).toBe(false);
    const names = (r: Rec) =>
      String(r.FlowConnectorNames)
        .split(',')
        .map((s) => s.trim());
    expect(flows.some((r) => names(r).includes('HTTP'))).toBe(true);
    expect(flows.some((r) => names(r).includes('HTTP with Microsoft Entra ID (preauthorized)'))).toBe(true);
    const pbi = general().filter((r) => r.RecordType === 20);
    expect(pbi.every((r) => r.Workload === 'PowerBI' && r.Activity === r.Operation)).toBe(true);
    expect(pbi.some((r) => r.Operation === 'ViewReport')).toBe(true);
    const toWeb = pbi.filter((r) => r.Operation === 'PublishToWebReport');
    expect(toWeb.length).toBeGreaterThan(0);
    expect(toWeb[0]).toMatchObject({ Activity: 'PublishToWebReport', ArtifactKind: 'Report' });
    expect(typeof toWeb[0]!.ReportName).toBe('string');
  });

  it('Power Platform admin activity (256): agents set to no authentication, custom connectors; DLP policies (187)', () => {
    const admin = general().filter((r) => r.RecordType === 256);
    const prop = (r: Rec, name: string) => r.PropertyCollection.find((p: Rec) => p.Name === name)?.Value;
    for (const r of admin) {
      expect(r.Workload).toBe('PowerPlatform');
      expect(prop(r, 'type')).toBe('PowerPlatformAdministratorActivityRecord');
      expect(prop(r, 'powerplatform.analytics.activity.name')).toBe(r.Operation);
    }
    const authNone = admin.filter(
      (r) =>
        r.Operation === 'BotUpdateOperation-BotAuthUpdate' &&
        JSON.parse(prop(r, 'powerplatform.analytics.resource.bot.update_details.change')).some(
          (c: Rec) => c.PropertyName === 'AuthenticationMode' && c.NewValue === 'None',
        ),
    );
    expect(authNone.length).toBeGreaterThan(0);
    const noAuthBots = new Set(tenant.environments.flatMap((e) => e.dataverse?.bots.filter((b) => b.authenticationmode === 1).map((b) => b.botid) ?? []));
    for (const r of authNone) expect(noAuthBots.has(r.ObjectId)).toBe(true);
    const connectors = admin.filter((r) => r.Operation === 'CreateCustomConnector');
    expect(connectors.length).toBeGreaterThan(0);
    expect(prop(connectors[0]!, 'powerplatform.analytics.resource.type')).toBe('CustomConnector');
    const published = admin.filter(
      (r) => r.Operation === 'BotUpdateOperation-BotPublish' && prop(r, 'powerplatform.analytics.resource.bot.authentication_mode') === 'None',
    );
    expect(published.length).toBeGreaterThan(0);
    const dlp = general().filter((r) => r.RecordType === 187);
    expect(new Set(dlp.map((r) => r.Operation))).toEqual(new Set(['CreateDlpPolicy', 'UpdateDlpPolicy', 'DeleteDlpPolicy']));
    for (const r of dlp) expect(JSON.parse(r.AdditionalInfo).policyId).toBe(r.ObjectId);
    expect(dlp.some((r) => JSON.parse(r.AdditionalInfo).changeSet?.connectorChanges?.some((c: Rec) => c.previousValue.classification === 'Blocked'))).toBe(
      true,
    );
  });

  it('issue 20: flagged interactions, Copilot plugin and settings records, bursts by one user, roles, departures, connections', () => {
    const all = [...new Map([...records.values()].flat().map((r) => [r.Id, r])).values()].sort((a, b) => a.CreationTime.localeCompare(b.CreationTime));
    const truth = feed.groundTruth({ ...WINDOW, includeIds: false }).scenarios;
    const prop = (r: Rec, name: string) => r.PropertyCollection.find((p: Rec) => p.Name === name)?.Value;
    // Jailbreak / XPIA flags: only the flagged variants state them; one raised flag per flagged record.
    const copilot = all.filter((r) => r.RecordType === 261);
    const jailbroken = copilot.filter((r) => r.CopilotEventData.Messages.some((m: Rec) => m.JailbreakDetected === true));
    const xpia = copilot.filter((r) => r.CopilotEventData.AccessedResources.some((a: Rec) => a.XPIADetected === true));
    expect(jailbroken.length).toBe(truth['copilot.jailbreak']);
    expect(xpia.length).toBe(truth['copilot.xpia']);
    expect(copilot.filter((r) => r.CopilotEventData.Messages.some((m: Rec) => m.JailbreakDetected === false)).length).toBeGreaterThan(jailbroken.length);
    // Plugin and settings records: the change in CopilotEventData.Resource.
    const admin = all.filter((r) => [310, 313, 314, 325].includes(r.RecordType));
    expect(admin.length).toBeGreaterThan(10);
    for (const r of admin) {
      expect(r.Workload).toBe('Copilot');
      expect(r.CopilotEventData.Resource[0].Property).toEqual(expect.any(String));
    }
    expect(admin.filter((r) => r.RecordType === 325 && r.CopilotEventData.Resource[0].NewValue === 'Disabled').length).toBe(
      truth['copilotSettings.fileUploadsDisabled'],
    );
    // Toggle bursts: each disable follows an enable by the same user within minutes.
    const offs = admin.filter((r) => r.RecordType === 314);
    expect(offs.length).toBeGreaterThan(0);
    for (const off of offs) {
      const on = admin.find(
        (r) =>
          r.RecordType === 313 &&
          r.UserId === off.UserId &&
          r.CreationTime <= off.CreationTime &&
          Date.parse(off.CreationTime) - Date.parse(r.CreationTime) < 5 * 60_000,
      );
      expect(on, off.Id).toBeDefined();
    }
    // Deletion bursts: five consecutive records of the stream by one user within an hour.
    const appDeletes = all.filter((r) => r.Operation === 'DeletePowerApp');
    const byUser = new Map<string, number[]>();
    for (const r of appDeletes) byUser.set(r.UserId, [...(byUser.get(r.UserId) ?? []), parseUtc(`${r.CreationTime}Z`)!]);
    expect([...byUser.values()].some((t) => t.some((x) => t.filter((y) => y >= x && y - x <= 3_600_000).length >= 5))).toBe(true);
    // Roles and departures: the target's UPN in ObjectId and Target (Type 5), as the recorded Entra records have it.
    const roles = all.filter((r) => r.Operation === 'Add member to role.');
    expect(roles.length).toBeGreaterThan(0);
    for (const r of roles) {
      expect(r.ModifiedProperties.map((m: Rec) => m.Name)).toEqual(expect.arrayContaining(['Role.ObjectID', 'Role.DisplayName', 'Role.TemplateId']));
      expect(r.Target.find((t: Rec) => t.Type === 5).ID).toBe(r.ObjectId);
    }
    // Shares to new guests: bursts of three to the tenant's guests, each guest also invited in Entra.
    const guests = new Set(tenant.users.filter((u) => u.userType === 'Guest').map((u) => u.id));
    const shared = all.filter((r) => r.Operation === 'PowerAppPermissionEdited').map((r) => prop(r, 'targetuser.id'));
    expect(shared.filter((id) => guests.has(id)).length).toBe(truth['powerApps.sharedToNewGuests']);
    const invited = all.filter((r) => r.Operation === 'Invite external user.');
    expect(invited.length).toBeGreaterThan(0);
    expect(invited.every((r) => guests.has(r.Target[1].ID) && r.ObjectId.includes('#EXT#'))).toBe(true);
    const disabled = all.filter((r) => r.Operation === 'Disable account.');
    expect(disabled.some((r) => r.ObjectId.includes('#EXT#'))).toBe(true);
    expect(disabled.every((r) => r.ModifiedProperties[0].Name === 'AccountEnabled' && r.ModifiedProperties[0].NewValue === '[false]')).toBe(true);
    // Connections name their environment; production ones are in a Production environment of the tenant.
    const production = new Set(tenant.environments.filter((e) => e.environmentSku === 'Production').map((e) => e.name));
    const connections = all.filter((r) => r.Operation === 'PutConnection');
    expect(connections.length).toBeGreaterThan(0);
    if (production.size > 0)
      expect(connections.filter((r) => production.has(prop(r, 'powerplatform.analytics.resource.environment.id'))).length).toBe(truth['connection.production']);
  });

  it('ground-truth scenario counts match the records', () => {
    const truth = feed.groundTruth({ ...WINDOW, includeIds: false });
    const all = [...records.values()].flat();
    const unique = new Map(all.map((r) => [r.Id, r]));
    expect(unique.size).toBe(truth.total.unique);
    const guestLabelled = [...unique.values()].filter(
      (r) => r.RecordType === 261 && r.UserType === 10 && r.CopilotEventData.AccessedResources.some((a: Rec) => a.SensitivityLabelId),
    ).length;
    expect(truth.scenarios['copilot.guestLabelled']).toBe(guestLabelled);
    const publishToWeb = [...unique.values()].filter((r) => r.Operation === 'PublishToWebReport').length;
    expect(truth.byOperation.PublishToWebReport ?? 0).toBe(publishToWeb);
    const byType: Record<string, number> = {};
    for (const r of unique.values()) byType[r.RecordType] = (byType[r.RecordType] ?? 0) + 1;
    expect(truth.byRecordType).toEqual(byType);
  });
});

describe('other content types', () => {
  it('Azure AD (8): consent, credentials and app-role assignment with ModifiedProperties / Target / ExtendedProperties', () => {
    const aad = records.get('Audit.AzureActiveDirectory')!;
    for (const r of aad) {
      expect(r).toMatchObject({ RecordType: 8, Workload: 'AzureActiveDirectory', AzureActiveDirectoryEventType: 1, ClientIP: null, ActorContextId: tenant.id });
      expect(r.Actor[0]).toEqual({ ID: r.UserId, Type: 5 });
      expect(Array.isArray(r.Target)).toBe(true);
      expect(r.ExtendedProperties.map((p: Rec) => p.Name)).toEqual(['additionalDetails', 'extendedAuditEventCategory']);
    }
    const mp = (r: Rec, name: string) => r.ModifiedProperties.find((p: Rec) => p.Name === name)?.NewValue;
    const consents = aad.filter((r) => r.Operation === 'Consent to application.');
    expect(consents.some((r) => mp(r, 'ConsentContext.IsAdminConsent') === 'True')).toBe(true);
    expect(consents.some((r) => mp(r, 'ConsentContext.IsAdminConsent') === 'False')).toBe(true);
    const creds = aad.filter((r) => r.Operation === 'Add service principal credentials.');
    expect(creds.length).toBeGreaterThan(0);
    expect(mp(creds[0]!, 'KeyDescription')).toMatch(/KeyIdentifier=[0-9a-f-]{36},KeyType=(Password|AsymmetricX509Cert),KeyUsage=Verify/);
    const roles = aad.filter((r) => r.Operation === 'Add app role assignment to service principal.');
    expect(roles.length).toBeGreaterThan(0);
    expect(mp(roles[0]!, 'AppRole.Value')).toMatch(/\./);
    expect(roles[0]!.Target).toContainEqual({ ID: 'Microsoft Graph', Type: 1 });
  });

  it('Exchange MailItemsAccessed (50) / Send (2), SharePoint file operations (6), DLP rule matches (11 / 13)', () => {
    const ex = records.get('Audit.Exchange')!;
    const mia = ex.filter((r) => r.Operation === 'MailItemsAccessed');
    expect(mia.every((r) => r.RecordType === 50 && r.Folders[0].FolderItems.length === r.OperationCount && r.MailboxOwnerUPN === r.UserId)).toBe(true);
    expect(ex.some((r) => r.Operation === 'Send' && r.RecordType === 2 && r.Item.ParentFolder.Path === '\\Sent Items')).toBe(true);
    const sp = records.get('Audit.SharePoint')!;
    expect(sp.every((r) => r.RecordType === 6 && ['SharePoint', 'OneDrive'].includes(r.Workload))).toBe(true);
    expect(sp.some((r) => r.Operation === 'FileAccessed')).toBe(true);
    const dlp = records.get('DLP.All')!;
    expect(
      dlp.every(
        (r) => r.Operation === 'DlpRuleMatch' && r.UserKey === 'DlpAgent' && r.PolicyDetails[0].Rules[0].ConditionsMatched.SensitiveInformation.length > 0,
      ),
    ).toBe(true);
    expect(dlp.some((r) => r.RecordType === 11 && r.SharePointMetaData.FilePathUrl === r.ObjectId)).toBe(true);
    expect(dlp.some((r) => r.RecordType === 13 && r.ExchangeMetaData.MessageID === r.ObjectId)).toBe(true);
  });
});

describe('helpers', () => {
  it('formats CreationTime without allocation mistakes across dates', () => {
    for (const iso of ['1970-01-01T00:00:00', '2000-02-29T23:59:59', '2024-12-31T12:34:56', '2025-03-01T00:00:00', '2100-03-01T01:02:03']) {
      expect(creationTime(Date.parse(`${iso}Z`))).toBe(iso);
    }
    for (let ms = Date.UTC(2023, 0, 1); ms < Date.UTC(2027, 0, 1); ms += 86_400_000 * 3 + 3_661_000) {
      expect(creationTime(ms)).toBe(new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19));
    }
  });

  it('parses feed times and ISO instants as UTC', () => {
    expect(parseFeedTime('2025-06-10')).toBe(Date.parse('2025-06-10T00:00:00Z'));
    expect(parseFeedTime('2025-06-10T08:30')).toBe(Date.parse('2025-06-10T08:30:00Z'));
    expect(parseFeedTime('2025-06-10T08:30:15')).toBe(Date.parse('2025-06-10T08:30:15Z'));
    expect(parseFeedTime('2025-02-30')).toBeNull();
    expect(parseFeedTime('10 June 2025')).toBeNull();
    expect(parseUtc('2025-06-10T08:30:15')).toBe(Date.parse('2025-06-10T08:30:15Z'));
    expect(parseUtc('2025-06-10')).toBe(Date.parse('2025-06-10T00:00:00Z'));
  });

  it('the clock freezes, advances and returns to real time', () => {
    const c = new EmulatedClock();
    expect(Math.abs(c.now() - Date.now())).toBeLessThan(1000);
    c.set('2025-01-01T00:00:00Z');
    expect(c.state()).toEqual({ now: '2025-01-01T00:00:00.000Z', frozen: true, offsetMs: 0 });
    c.advance(90);
    expect(c.state().now).toBe('2025-01-01T00:01:30.000Z');
    c.set(null);
    c.advance(3600);
    expect(c.now() - Date.now()).toBeGreaterThan(3_590_000);
    expect(c.state().frozen).toBe(false);
    expect(() => c.set('not a date')).toThrow(RangeError);
  });
});

describe('agent component records and bursts in the ground truth (issue 20)', () => {
  const props = (r: Rec): Record<string, string> => Object.fromEntries((r.PropertyCollection as Rec[]).map((p) => [p.Name, p.Value]));
  /** The tenant's components: parent agent, componenttype, kind (public websites apart), readable by the connector. */
  const components = () => {
    const out = new Map<string, { bot: string; type: number; kind: string; readable: boolean }>();
    for (const env of tenant.environments) {
      const org = env.dataverse;
      if (!org) continue;
      const readable = org.appUsers.some((a) => a.appId === tenant.connectorAppId);
      for (const c of org.botcomponents ?? []) {
        const kind = componentKind(c);
        out.set(c.botcomponentid, {
          bot: c._parentbotid_value!,
          type: c.componenttype,
          kind: kind === 'knowledge' && /PublicSiteSearchSource/.test(c.data ?? '') ? 'publicWebsite' : kind,
          readable,
        });
      }
    }
    return out;
  };

  it('component records name the tenant’s own components on their agents; the ground truth counts them by readability, component and agent-user-hour', () => {
    const known = components();
    const scenarioOf: Record<string, string> = {
      'BotComponentCreate|knowledge': 'agent.knowledgeAdded',
      'BotComponentCreate|publicWebsite': 'agent.publicWebsiteKnowledgeAdded',
      'BotComponentCreate|topic': 'agent.topicAdded',
      'BotComponentCreate|action': 'agent.toolAdded',
      'BotComponentCreate|mcp': 'agent.mcpServerAdded',
      'BotComponentUpdate|topic': 'agent.topicChanged',
      'BotComponentUpdate|instructions': 'agent.instructionsChanged',
    };
    const unique = new Map([...records.values()].flat().map((r) => [r.Id as string, r]));
    const mine: Record<string, { records: number; readable: number; components: Set<string>; groups: Set<string> }> = {};
    for (const r of unique.values()) {
      if (!/^BotComponent/.test(r.Operation)) continue;
      const p = props(r);
      const c = known.get(p['powerplatform.analytics.resource.bot_component.id']!);
      // Every kind exists in this tenant, so every record is about one of its components, on that component's agent.
      expect(c, JSON.stringify(p)).toBeDefined();
      expect([r.ObjectId, p['powerplatform.analytics.resource.bot.id'], Number(p['powerplatform.analytics.resource.bot_component.type'])]).toEqual([
        c!.bot,
        c!.bot,
        c!.type,
      ]);
      const scenario = scenarioOf[`${r.Operation}|${c!.kind}`]!;
      expect(scenario, `${r.Operation} of a ${c!.kind}`).toBeDefined();
      const o = (mine[scenario] ??= { records: 0, readable: 0, components: new Set(), groups: new Set() });
      o.records++;
      if (c!.readable) {
        o.readable++;
        o.components.add(p['powerplatform.analytics.resource.bot_component.id']!);
      }
      o.groups.add(`${c!.bot}|${String(r.UserId).toLowerCase()}|${Math.floor(Date.parse(`${r.CreationTime}Z`) / 3_600_000)}`);
    }
    const truth = feed.groundTruth({ ...WINDOW, includeIds: false });
    expect(truth.componentRecords).toEqual(
      Object.fromEntries(
        Object.entries(mine).map(([k, o]) => [
          k,
          { records: o.records, readable: o.readable, readableComponents: o.components.size, agentUserHours: o.groups.size },
        ]),
      ),
    );
    for (const k of Object.values(scenarioOf)) expect(mine[k]?.records ?? 0, k).toBeGreaterThan(0);
    // Some components are unreadable to the connector; repeated saves of instructions fall in one hour.
    expect(Object.values(mine).some((o) => o.readable < o.records)).toBe(true);
    expect(mine['agent.instructionsChanged']!.groups.size).toBeLessThan(mine['agent.instructionsChanged']!.records);
    // Agent records per agent: every Bot* record is about the agent its ObjectId names.
    const perAgent: Record<string, number> = {};
    for (const r of unique.values()) if (r.RecordType === 256 && /^Bot/.test(r.Operation)) perAgent[r.ObjectId] = (perAgent[r.ObjectId] ?? 0) + 1;
    expect(truth.agentRecords).toEqual(perAgent);
  });

  it('a burst counts whole only with every record in the window; a share burst counts as invited once each guest was invited before its share', () => {
    const at = (r: Rec) => Date.parse(`${r.CreationTime}Z`);
    const deletions = general()
      .filter((r) => r.Operation === 'DeletePowerApp')
      .sort((a, b) => at(a) - at(b));
    const start = deletions.findIndex(
      (r, i) => i + 4 < deletions.length && deletions.slice(i, i + 5).every((x) => x.UserId === r.UserId) && at(deletions[i + 1]!) > at(r),
    );
    expect(start).toBeGreaterThanOrEqual(0);
    const whole = (from: number) =>
      feed.groundTruth({ from: new Date(from).toISOString(), to: WINDOW.to, basis: 'creationTime', includeIds: false }).bursts['powerApps.bulkDelete']!.whole;
    const first = at(deletions[start]!);
    expect(whole(first) - whole(first + 1000)).toBe(1);

    // Shares to guests come in bursts of three; invitations are Azure AD records naming the guest.
    const guests = new Map(tenant.users.filter((u) => u.userType === 'Guest').map((u) => [u.id, u.userPrincipalName.toLowerCase()]));
    const invited = new Map<string, number[]>();
    for (const r of records.get('Audit.AzureActiveDirectory')!)
      if (r.Operation === 'Invite external user.')
        invited.set(String(r.ObjectId).toLowerCase(), [...(invited.get(String(r.ObjectId).toLowerCase()) ?? []), at(r)]);
    const shares = general()
      .map((r) => ({ r, target: powerAppsActivity(normalizeRecord(r, 'Audit.General')!)?.targetPrincipal }))
      .filter((s) => s.r.Operation === 'PowerAppPermissionEdited' && s.target && guests.has(s.target))
      .sort((a, b) => at(a.r) - at(b.r));
    const bursts: (typeof shares)[] = [];
    for (const s of shares) {
      const last = bursts.at(-1);
      if (last && last[0]!.r.UserId === s.r.UserId && at(s.r) - at(last.at(-1)!.r) < 10 * 60_000) last.push(s);
      else bursts.push([s]);
    }
    const full = bursts.filter((b) => b.length === 3);
    const truth = feed.groundTruth({ ...WINDOW, includeIds: false }).bursts['powerApps.sharedToNewGuests']!;
    expect(truth.whole).toBe(full.length);
    expect(truth.guestsInvited).toBe(full.filter((b) => b.every((s) => (invited.get(guests.get(s.target!)!) ?? []).some((t) => t <= at(s.r)))).length);
    expect(truth.whole).toBeGreaterThan(0);
  });
});

describe('component dates the feed implies (issue 20)', () => {
  it('each component’s latest create and change is the latest record about it that has happened, none after the clock', () => {
    const clock2 = new EmulatedClock();
    const C = Date.parse('2025-06-10T10:00:00Z');
    const f = new FeedStore(new TenantStore([tenant]), clock2).feed(tenant.id) as TenantFeed;
    f.configure({ recordsPerHour: 4000, kindMix: { powerPlatformAdmin: 25 }, since: new Date(C - 5 * 3_600_000).toISOString() });
    clock2.set(new Date(C).toISOString());
    const changes = f.componentChanges();
    // Two hours later every record up to C has its blob: the expectation from the records themselves.
    clock2.set(new Date(C + 2 * 3_600_000).toISOString());
    const expected = new Map<string, { created: number | null; modified: number }>();
    const after = new Set<string>();
    const recs = collect(f, 'Audit.General', new Date(C - 6 * 3_600_000).toISOString(), new Date(C + 2 * 3_600_000).toISOString());
    for (const r of [...new Map(recs.map((x) => [x.Id as string, x])).values()].sort((a, b) => a.CreationTime.localeCompare(b.CreationTime))) {
      if (!/^BotComponent/.test(r.Operation)) continue;
      const id = (r.PropertyCollection as Rec[]).find((p) => p.Name === 'powerplatform.analytics.resource.bot_component.id')!.Value as string;
      const t = Date.parse(`${r.CreationTime}Z`);
      if (t > C) {
        after.add(id);
        continue;
      }
      const prev = expected.get(id);
      expected.set(id, { created: r.Operation === 'BotComponentCreate' ? t : (prev?.created ?? null), modified: t });
    }
    expect(changes).toEqual(expected);
    expect(expected.size).toBeGreaterThan(10);
    // Records after the clock moved nothing yet: they show once the clock passes them.
    expect([...after].some((id) => changes.get(id)?.modified !== f.componentChanges().get(id)?.modified)).toBe(true);
  });
});
