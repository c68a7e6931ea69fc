import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/core/audit.ts';
import { loadDetections } from '../../src/detections/index.ts';
import type { DetectionContext } from '../../src/detections/types.ts';

let n = 0;
function ev(over: Partial<AuditEvent> & { raw?: Record<string, unknown> }): AuditEvent {
  n++;
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    contentType: 'Audit.General',
    recordType: null,
    creationTime: new Date(Date.UTC(2026, 10, 20, 8, 0, n)).toISOString(),
    operation: null,
    workload: null,
    userId: 'ann@contoso.com',
    userType: 0,
    clientIp: '203.0.113.10',
    objectId: null,
    organizationId: 'tid',
    raw: {},
    ...over,
  };
}

const detections = Object.fromEntries(loadDetections().map((d) => [d.metadata.id, d]));
const run = (id: string, events: AuditEvent[], prior: Record<string, string[]> = {}) =>
  detections[id]!.run({ integrationId: 'int_1', events, priorIps: (u) => (prior[u] ? new Set(prior[u]) : undefined) } satisfies DetectionContext);

const copilot = (over: Partial<AuditEvent>, resources: Record<string, unknown>[]) =>
  ev({ recordType: 261, workload: 'Copilot', operation: 'CopilotInteraction', raw: { CopilotEventData: { AppHost: 'Word', AccessedResources: resources } }, ...over });

describe('detections: each fires on its positive case and stays quiet on a near-miss', () => {
  it('has at least ten rules, each mapped and validated', () => {
    expect(Object.keys(detections).length).toBeGreaterThanOrEqual(10);
    for (const d of Object.values(detections)) expect(Object.keys(d.metadata.frameworks).length).toBeGreaterThan(0);
  });

  it('copilot_guest_sensitive_access', () => {
    const guest = { userId: 'eve_fabrikam.com#EXT#@contoso.onmicrosoft.com', userType: 10 };
    expect(run('copilot_guest_sensitive_access', [copilot(guest, [{ Name: 'Salaries.xlsx', SensitivityLabelId: 'lbl-1' }])])).toHaveLength(1);
    expect(run('copilot_guest_sensitive_access', [copilot(guest, [{ Name: 'Menu.docx' }]), copilot({}, [{ Name: 'Salaries.xlsx', SensitivityLabelId: 'lbl-1' }])])).toEqual([]);
  });

  it('agent_authentication_none', () => {
    expect(run('agent_authentication_none', [ev({ operation: 'BotUpdateOperation-BotAuthUpdate', objectId: 'bot-1', raw: { PropertyCollection: { authenticationmode: 'None' } } })])).toHaveLength(1);
    expect(run('agent_authentication_none', [ev({ operation: 'BotUpdateOperation-BotAuthUpdate', objectId: 'bot-1', raw: { PropertyCollection: { authenticationmode: 'Integrated' } } })])).toEqual([]);
  });

  it('dlp_policy_weakened', () => {
    expect(run('dlp_policy_weakened', [ev({ recordType: 187, operation: 'DeleteDlpPolicy', objectId: 'policy-1' })])).toHaveLength(1);
    expect(run('dlp_policy_weakened', [ev({ recordType: 187, operation: 'CreateDlpPolicy', objectId: 'policy-1' })])).toEqual([]);
  });

  it('custom_connector_created', () => {
    expect(run('custom_connector_created', [ev({ operation: 'CreateCustomConnector', objectId: 'shared_acme' })])).toHaveLength(1);
    expect(run('custom_connector_created', [ev({ operation: 'CreateConnection', objectId: 'shared_office365' })])).toEqual([]);
  });

  it('admin_consent_granted', () => {
    const consent = (admin: string) => ev({ contentType: 'Audit.AzureActiveDirectory', operation: 'Consent to application.', objectId: 'app-1', raw: { ModifiedProperties: [{ Name: 'ConsentContext.IsAdminConsent', NewValue: admin }] } });
    expect(run('admin_consent_granted', [consent('True')])).toHaveLength(1);
    expect(run('admin_consent_granted', [consent('False')])).toEqual([]);
  });

  it('service_principal_credentials_added', () => {
    expect(run('service_principal_credentials_added', [ev({ operation: 'Add service principal credentials.', objectId: 'sp-1' })])).toHaveLength(1);
    expect(run('service_principal_credentials_added', [ev({ operation: 'Add service principal.', objectId: 'sp-1' })])).toEqual([]);
  });

  it('mass_agent_or_flow_creation: ten creations within an hour, not nine, not spread over hours', () => {
    const burst = (count: number, stepMinutes: number) => Array.from({ length: count }, (_, i) => ev({ operation: i % 2 ? 'BotCreate' : 'CreateFlow', creationTime: new Date(Date.UTC(2026, 10, 20, 9, i * stepMinutes)).toISOString() }));
    expect(run('mass_agent_or_flow_creation', burst(10, 5))).toHaveLength(1);
    expect(run('mass_agent_or_flow_creation', burst(9, 5))).toEqual([]);
    expect(run('mass_agent_or_flow_creation', burst(12, 20))).toEqual([]);
  });

  it('flow_external_http', () => {
    expect(run('flow_external_http', [ev({ recordType: 30, workload: 'MicrosoftFlow', operation: 'PutFlow', objectId: 'flow-1', raw: { Actions: [{ type: 'Http', uri: 'https://exfil.example.net/upload' }] } })])).toHaveLength(1);
    expect(run('flow_external_http', [ev({ recordType: 30, workload: 'MicrosoftFlow', operation: 'PutFlow', objectId: 'flow-1', raw: { Actions: [{ uri: 'https://contoso.sharepoint.com/sites/hr' }] } })])).toEqual([]);
  });

  it('powerbi_publish_to_web', () => {
    expect(run('powerbi_publish_to_web', [ev({ recordType: 20, operation: 'PublishToWebReport', raw: { ReportName: 'Sales' } })])).toHaveLength(1);
    expect(run('powerbi_publish_to_web', [ev({ recordType: 20, operation: 'ViewReport' })])).toEqual([]);
  });

  it('copilot_new_ip: a new IP after history alerts; a first-ever event or a known IP does not', () => {
    const user = 'ann@contoso.com';
    expect(run('copilot_new_ip', [copilot({ clientIp: '198.51.100.7' }, [])], { [user]: ['203.0.113.10'] })).toHaveLength(1);
    expect(run('copilot_new_ip', [copilot({ clientIp: '203.0.113.10' }, [])], { [user]: ['203.0.113.10'] })).toEqual([]);
    expect(run('copilot_new_ip', [copilot({ clientIp: '198.51.100.7' }, [])])).toEqual([]);
  });
});
