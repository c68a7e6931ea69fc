import { describe, expect, it } from 'vitest';
import { type AuditEvent } from '../../src/core/audit.ts';
import { normalizeRecord } from '../../src/sources/managementActivity/records.ts';
import { loadDetections } from '../../src/detections/index.ts';
import { detectionContext } from '../support/detections.ts';
import type { FlowAttrs } from '../../src/sources/powerPlatform/streams/flows.ts';

// Records in the shapes the Management Activity API documents (and the emulator renders): the detections read the
// typed views, so these are raw records normalised the way ingestion does.
let n = 0;
function rec(recordType: number, operation: string, raw: Record<string, unknown> = {}, over: Record<string, unknown> = {}): AuditEvent {
  n++;
  const r = {
    Id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    CreationTime: new Date(Date.UTC(2026, 10, 20, 8, 0, n)).toISOString().slice(0, 19),
    RecordType: recordType,
    Operation: operation,
    UserId: 'ann@contoso.com',
    UserType: 0,
    ClientIP: '203.0.113.10',
    OrganizationId: 'tid',
    ...raw,
    ...over,
  };
  return normalizeRecord(r, 'Audit.General')!;
}

const detections = Object.fromEntries(loadDetections().map((d) => [d.metadata.id, d]));
/**
 * Runs one rule over events; `history` is user → IPs seen before everything (as `audit_user_ips` holds them); `find`
 * searches the same events; `flows` is the collected flow inventory.
 */
const run = async (id: string, events: AuditEvent[], history: Record<string, string[]> = {}, flows: Record<string, FlowAttrs> = {}) =>
  detections[id]!.run(
    detectionContext({
      events: events.filter((e) => detections[id]!.metadata.recordTypes.includes(e.recordType!)),
      ipsSeenBefore: (u, t) =>
        new Set([
          ...(history[u.toLowerCase()] ?? []),
          ...events.filter((e) => e.userId?.toLowerCase() === u.toLowerCase() && e.creationTime < t && e.clientIp).map((e) => e.clientIp!),
        ]),
      find: async ({ operations, from, to }) => events.filter((e) => operations.includes(e.operation ?? '') && e.creationTime >= from && e.creationTime <= to),
      flows: async (ids) => new Map(ids.flatMap((i) => (flows[i] ? [[i, flows[i]] as const] : []))),
      findRecords: async ({ operations, from, to }) =>
        events.filter((e) => operations.includes(e.operation ?? '') && e.creationTime >= from && e.creationTime <= to),
    }),
  );

const copilot = (resources: Record<string, unknown>[], over: Record<string, unknown> = {}) =>
  rec(261, 'CopilotInteraction', { Workload: 'Copilot', CopilotEventData: { AppHost: 'Word', Contexts: [], AccessedResources: resources } }, over);
const props = (pairs: [string, string][]) => pairs.map(([Name, Value]) => ({ Name, Value }));
const bot = (operation: string, extra: [string, string][]) =>
  rec(256, operation, {
    Workload: 'PowerPlatform',
    ObjectId: 'bot-1',
    PropertyCollection: props([
      ['powerplatform.analytics.resource.type', 'Bot'],
      ['powerplatform.analytics.resource.bot.id', 'bot-1'],
      ['powerplatform.analytics.resource.bot.display_name', 'HR helper'],
      ...extra,
    ]),
  });
const authChange = (from: string, to: string) =>
  ['powerplatform.analytics.resource.bot.update_details.change', JSON.stringify([{ PropertyName: 'AuthenticationMode', OldValue: from, NewValue: to }])] as [
    string,
    string,
  ];
const dlp = (operation: string, changeSet?: unknown) =>
  rec(187, operation, {
    ObjectId: 'policy-1',
    AdditionalInfo: JSON.stringify({ policyId: 'policy-1', policyType: 'Environment', ...(changeSet ? { changeSet } : {}) }),
  });
const aad = (operation: string, modified: [string, string][]) =>
  rec(8, operation, {
    Workload: 'AzureActiveDirectory',
    ClientIP: null,
    ObjectId: 'sp-1',
    ModifiedProperties: modified.map(([Name, NewValue]) => ({ Name, NewValue, OldValue: '' })),
    Target: [{ ID: 'Contoso Sync', Type: 1 }],
  });
// The fields Microsoft Learn "View Power Automate activity logs" lists; no action detail (real records carry none).
const flow = (operation: string, connectors = 'Office 365 Outlook, HTTP') =>
  rec(30, operation, {
    Workload: 'MicrosoftFlow',
    ResultStatus: 'Succeeded',
    ObjectId: 'flow-1',
    FlowDetailsUrl: 'https://make.powerautomate.com/environments/env-1/flows/flow-1/details',
    FlowConnectorNames: connectors,
    LicenseDisplayName: 'Microsoft 365 E5',
    UserTypeInitiated: 1,
    UserUPN: 'ann@contoso.com',
  });
/** A flow as the `flows` stream stores it, with its HTTP actions' targets read from the definition. */
const inventoryFlow = (urls: string[], lastModifiedTime = '2026-11-20T08:10:00Z'): FlowAttrs => ({
  environmentId: 'env-1',
  displayName: 'Order sync',
  state: 'Started',
  creator: { objectId: 'u-1', userId: 'u-1', userType: 'ActiveDirectory' },
  createdTime: '2026-11-01T08:00:00Z',
  lastModifiedTime,
  triggers: [{ type: 'Recurrence', kind: null, connectorId: null }],
  actions: urls.map(() => ({ type: 'Http', kind: null, connectorId: null })),
  hasHttpTrigger: false,
  hasHttpAction: urls.length > 0,
  httpTargets: urls.map((url) => ({ via: 'Http', method: 'POST', url, host: /^https?:\/\//.test(url) ? new URL(url).hostname : null })),
  connectionReferences: [],
  definitionRead: true,
});

describe('detections: each fires on its positive case and stays quiet on a near-miss', () => {
  it('has at least ten rules, each mapped, validated and declaring the record types it reads', () => {
    expect(Object.keys(detections).length).toBeGreaterThanOrEqual(10);
    for (const d of Object.values(detections)) {
      expect(Object.keys(d.metadata.frameworks).length).toBeGreaterThan(0);
      expect(d.metadata.recordTypes.length).toBeGreaterThan(0);
    }
  });

  it('copilot_guest_sensitive_access: a guest on labelled content; not a guest on unlabelled content, not a member on labelled content', async () => {
    const guest = { UserId: 'eve_fabrikam.com#EXT#@contoso.onmicrosoft.com', UserType: 10 };
    expect(await run('copilot_guest_sensitive_access', [copilot([{ Name: 'Salaries.xlsx', SensitivityLabelId: 'lbl-1' }], guest)])).toHaveLength(1);
    expect(
      await run('copilot_guest_sensitive_access', [copilot([{ Name: 'Menu.docx' }], guest), copilot([{ Name: 'Salaries.xlsx', SensitivityLabelId: 'lbl-1' }])]),
    ).toEqual([]);
  });

  it('agent_authentication_none: changed to None, or published with None; not a change away from None', async () => {
    expect(await run('agent_authentication_none', [bot('BotUpdateOperation-BotAuthUpdate', [authChange('Integrated', 'None')])])).toHaveLength(1);
    expect(
      await run('agent_authentication_none', [bot('BotUpdateOperation-BotPublish', [['powerplatform.analytics.resource.bot.authentication_mode', 'None']])]),
    ).toHaveLength(1);
    expect(
      await run('agent_authentication_none', [
        bot('BotUpdateOperation-BotAuthUpdate', [authChange('None', 'Custom Azure AD')]),
        bot('BotUpdateOperation-BotPublish', [['powerplatform.analytics.resource.bot.authentication_mode', 'Integrated']]),
      ]),
    ).toEqual([]);
  });

  it('dlp_policy_weakened: deleted, or a connector moved out of Blocked; not created, not renamed, not tightened', async () => {
    expect(await run('dlp_policy_weakened', [dlp('DeleteDlpPolicy')])).toHaveLength(1);
    const loosened = await run('dlp_policy_weakened', [
      dlp('UpdateDlpPolicy', {
        changedProperties: [],
        connectorChanges: [{ name: 'HTTP', previousValue: { classification: 'Blocked' }, currentValue: { classification: 'General' } }],
      }),
    ]);
    expect(loosened).toHaveLength(1);
    expect(loosened[0]!.title).toContain('HTTP: Blocked → General');
    expect(
      await run('dlp_policy_weakened', [
        dlp('CreateDlpPolicy'),
        dlp('UpdateDlpPolicy', { changedProperties: [{ name: 'ApiPolicyName', previousValue: 'Old', currentValue: 'New' }], connectorChanges: [] }),
        dlp('UpdateDlpPolicy', {
          changedProperties: [],
          connectorChanges: [{ name: 'HTTP', previousValue: { classification: 'General' }, currentValue: { classification: 'Blocked' } }],
        }),
      ]),
    ).toEqual([]);
  });

  it('custom_connector_created: created; not updated', async () => {
    const connector = (op: string) =>
      rec(256, op, {
        ObjectId: 'shared_acme',
        PropertyCollection: props([
          ['powerplatform.analytics.resource.type', 'CustomConnector'],
          ['powerplatform.analytics.resource.custom_connector.display_name', 'Acme'],
          ['powerplatform.analytics.resource.custom_connector.host', 'api.acme.example'],
        ]),
      });
    const hits = await run('custom_connector_created', [connector('CreateCustomConnector')]);
    expect(hits.map((h) => h.detail.host)).toEqual(['api.acme.example']);
    expect(await run('custom_connector_created', [connector('UpdateCustomConnector')])).toEqual([]);
  });

  it('admin_consent_granted: admin consent; not a user consenting for themselves', async () => {
    const consent = (admin: string) =>
      aad('Consent to application.', [
        ['ConsentContext.IsAdminConsent', admin],
        ['ConsentAction.Permissions', '[] => [[Id: x, ClientId: sp-1, ConsentType: AllPrincipals, Scope:  Mail.Read Files.Read.All, CreatedDateTime: ]]; '],
        ['TargetId.ServicePrincipalNames', 'app-guid'],
      ]);
    const hits = await run('admin_consent_granted', [consent('True')]);
    expect(hits.map((h) => h.detail.scopes)).toEqual([['Mail.Read', 'Files.Read.All']]);
    expect(await run('admin_consent_granted', [consent('False')])).toEqual([]);
  });

  it('service_principal_credentials_added: credentials added; not an app role assignment', async () => {
    expect(
      (
        await run('service_principal_credentials_added', [
          aad('Add service principal credentials.', [['KeyDescription', '["[KeyIdentifier=k,KeyType=Password,KeyUsage=Verify,DisplayName=x]"]']]),
        ])
      ).map((h) => h.title),
    ).toEqual(['Client secret added to Contoso Sync by ann@contoso.com']);
    expect(await run('service_principal_credentials_added', [aad('Add app role assignment to service principal.', [['AppRole.Value', 'Mail.Read']])])).toEqual(
      [],
    );
  });

  it('mass_agent_or_flow_creation: ten creations within an hour, not nine, not spread over hours', async () => {
    const burst = (count: number, stepMinutes: number) =>
      Array.from({ length: count }, (_, i) => (i % 2 ? bot('BotCreate', []) : flow('CreateFlow'))).map((e, i) => ({
        ...e,
        creationTime: new Date(Date.UTC(2026, 10, 20, 9, i * stepMinutes)).toISOString(),
      }));
    expect(await run('mass_agent_or_flow_creation', burst(10, 5))).toHaveLength(1);
    expect(await run('mass_agent_or_flow_creation', burst(9, 5))).toEqual([]);
    expect(await run('mass_agent_or_flow_creation', burst(12, 20))).toEqual([]);
  });

  it('flow_external_http: the collected definition calls an outside host; not only Microsoft Graph; not a flow without HTTP', async () => {
    const hits = await run(
      'flow_external_http',
      [flow('EditFlow')],
      {},
      { 'flow-1': inventoryFlow(['https://webhook.site/abc', 'https://graph.microsoft.com/v1.0/users']) },
    );
    expect(hits.map((h) => [h.detail.basis, h.detail.hosts])).toEqual([['inventory', ['webhook.site']]]);
    expect(hits[0]!.title).toBe('Flow Order sync sends data to webhook.site');
    expect(await run('flow_external_http', [flow('EditFlow')], {}, { 'flow-1': inventoryFlow(['https://graph.microsoft.com/v1.0/users']) })).toEqual([]);
    expect(await run('flow_external_http', [flow('CreateFlow', 'Office 365 Outlook, Approvals')])).toEqual([]);
    // A permission change is not a change of what the flow calls.
    expect(await run('flow_external_http', [flow('PutPermissions')])).toEqual([]);
  });

  it('flow_external_http: a flow the inventory does not describe yet alerts on the HTTP connector in FlowConnectorNames', async () => {
    const hits = await run('flow_external_http', [flow('CreateFlow')]);
    expect(hits.map((h) => [h.detail.basis, h.detail.hosts])).toEqual([['connectorNames', []]]);
    expect(hits[0]!.title).toMatch(/uses the HTTP connector/);
    // The inventory read an older version (modified before this edit): the record decides.
    expect(
      (await run('flow_external_http', [flow('EditFlow')], {}, { 'flow-1': inventoryFlow(['https://graph.microsoft.com/'], '2026-11-19T08:00:00Z') })).map(
        (h) => h.detail.basis,
      ),
    ).toEqual(['connectorNames']);
    // The Entra-authenticated HTTP connector is not the any-URL HTTP connector.
    expect(await run('flow_external_http', [flow('EditFlow', 'SharePoint, HTTP with Microsoft Entra ID (preauthorized)')])).toEqual([]);
  });

  it('powerbi_publish_to_web: published to the web; not shared', async () => {
    expect(await run('powerbi_publish_to_web', [rec(20, 'PublishToWebReport', { ReportName: 'Sales' })])).toHaveLength(1);
    expect(await run('powerbi_publish_to_web', [rec(20, 'ShareReport', { ReportName: 'Sales' })])).toEqual([]);
  });

  it('copilot_new_ip: a new IP after history alerts; a first-ever event or a known IP does not', async () => {
    const user = 'ann@contoso.com';
    expect(await run('copilot_new_ip', [copilot([], { ClientIP: '198.51.100.7' })], { [user]: ['203.0.113.10'] })).toHaveLength(1);
    expect(await run('copilot_new_ip', [copilot([], { ClientIP: '203.0.113.10' })], { [user]: ['203.0.113.10'] })).toEqual([]);
    expect(await run('copilot_new_ip', [copilot([], { ClientIP: '198.51.100.7' })])).toEqual([]);
  });

  it('copilot_new_ip: the same address with a port, in brackets or IPv4-mapped is not new; another address is', async () => {
    const user = 'ann@contoso.com';
    // History as stored before ingestion normalised addresses, and the forms real records carry.
    for (const ip of ['203.0.113.10:40927', '[203.0.113.10]:443', '::ffff:203.0.113.10', '[::ffff:203.0.113.10]:12345']) {
      expect(await run('copilot_new_ip', [copilot([], { ClientIP: ip })], { [user]: ['203.0.113.10'] }), ip).toEqual([]);
    }
    expect(await run('copilot_new_ip', [copilot([], { ClientIP: '[2001:DB8:0:0:0:0:0:1]:443' })], { [user]: ['2001:db8::1'] })).toEqual([]);
    const other = await run('copilot_new_ip', [copilot([], { ClientIP: '198.51.100.7:51000' })], { [user]: ['203.0.113.10'] });
    expect(other.map((h) => h.detail.ip)).toEqual(['198.51.100.7']);
  });
});
