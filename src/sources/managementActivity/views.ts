import { RECORD_TYPES, type AuditEvent } from '../../core/audit.ts';
import { nonEmptyStr, obj, objects } from '../../core/json.ts';

/**
 * Typed views of the Management Activity record types detections read (Copilot interactions, Power Platform admin
 * activity, DLP policy changes, flows, Power Apps, directory changes), parsed from the raw record.
 * Source: MicrosoftDocs/office-365-management-api `office-365-management-activity-api-schema.md` and `copilot-schema.md`.
 */

/** A Copilot interaction (RecordType 261), typed from the raw record. */
export interface CopilotInteraction {
  appHost: string | null;
  threadId: string | null;
  contexts: { id: string | null; type: string | null }[];
  accessedResources: {
    id: string | null;
    name: string | null;
    type: string | null;
    siteUrl: string | null;
    sensitivityLabelId: string | null;
    action: string | null;
  }[];
  models: { provider: string | null; name: string | null }[];
  plugins: { name: string | null; id: string | null }[];
  /** Ids of the messages flagged `JailbreakDetected: true` (a user prompt judged a jailbreak attempt). */
  jailbreakMessageIds: string[];
  /** Accessed resources flagged `XPIADetected: true` (cross-prompt injection found in the content Copilot read). */
  xpiaResources: { name: string | null; siteUrl: string | null }[];
}

/** The Copilot view of a record, or null when it is not a CopilotInteraction. */
export function copilotInteraction(e: Pick<AuditEvent, 'recordType' | 'raw'>): CopilotInteraction | null {
  if (e.recordType !== RECORD_TYPES.CopilotInteraction) return null;
  const d = (e.raw.CopilotEventData ?? {}) as Record<string, unknown>;
  return {
    appHost: nonEmptyStr(d.AppHost),
    threadId: nonEmptyStr(d.ThreadId),
    contexts: objects(d.Contexts).map((c) => ({ id: nonEmptyStr(c.Id), type: nonEmptyStr(c.Type) })),
    accessedResources: objects(d.AccessedResources).map((r) => ({
      id: nonEmptyStr(r.Id),
      name: nonEmptyStr(r.Name),
      type: nonEmptyStr(r.Type),
      siteUrl: nonEmptyStr(r.SiteUrl),
      sensitivityLabelId: nonEmptyStr(r.SensitivityLabelId),
      action: nonEmptyStr(r.Action),
    })),
    models: objects(d.ModelTransparencyDetails).map((m) => ({ provider: nonEmptyStr(m.ModelProviderName), name: nonEmptyStr(m.ModelName) })),
    plugins: objects(d.AISystemPlugin).map((p) => ({ name: nonEmptyStr(p.Name), id: nonEmptyStr(p.Id) })),
    // Flags as real records carry them (booleans; a string "true" is read too): Messages[].JailbreakDetected and
    // AccessedResources[].XPIADetected — a Teams interaction of November 2025 in pnp/Microsoft365-Analytics-Insights'
    // Copilot tests; Sentinel's "Copilot - Jailbreak Attempt Detected" reads `Messages[0].JailbreakDetected`.
    jailbreakMessageIds: objects(d.Messages).flatMap((m) => (flag(m.JailbreakDetected) ? [nonEmptyStr(m.Id) ?? ''] : [])),
    xpiaResources: objects(d.AccessedResources).flatMap((r) =>
      flag(r.XPIADetected) ? [{ name: nonEmptyStr(r.Name), siteUrl: nonEmptyStr(r.SiteUrl) ?? nonEmptyStr(r.Id) }] : [],
    ),
  };
}

/** A record flag: `true`, or the string `true` (any case). */
const flag = (v: unknown): boolean => v === true || (typeof v === 'string' && /^true$/i.test(v));

/** One setting change of a Copilot admin record: the property, its value before and after. */
interface CopilotSettingChange {
  property: string | null;
  originalValue: string | null;
  newValue: string | null;
}

/**
 * A Copilot plugin or settings activity (RecordType 310 CreateCopilotPlugin, 311 Update…, 312 Delete…, 313
 * EnableCopilotPlugin, 314 DisableCopilotPlugin, 325 UpdateCopilotSettings), typed from `CopilotEventData.Resource`
 * (a list of `{Property, OriginalValue, NewValue}`; `Property` names the plugin or the setting, e.g. `FileUploads`).
 * Source: the schema's AuditLogRecordType table (310–325); the `Resource[…]` fields are those Sentinel's Microsoft
 * Copilot solution rules read from `LLMEventData` (Copilot - File Uploads Disabled, Plugin Enabled After Being
 * Disabled, Plugin Created by Non-Admin User). UNCONFIRMED: no published record shows the nesting, so a top-level
 * `Resource` is read too.
 */
export interface CopilotAdminActivity {
  recordType: number;
  changes: CopilotSettingChange[];
}

const COPILOT_ADMIN_TYPES: readonly number[] = [310, 311, 312, 313, 314, 325];

/** The Copilot admin view of a record, or null when it is none of RecordTypes 310–314, 325. */
export function copilotAdminActivity(e: Pick<AuditEvent, 'recordType' | 'raw'>): CopilotAdminActivity | null {
  if (e.recordType === null || !COPILOT_ADMIN_TYPES.includes(e.recordType)) return null;
  const d = obj(e.raw.CopilotEventData);
  const list = Array.isArray(d.Resource) ? d.Resource : e.raw.Resource;
  const text = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'boolean' ? String(v) : null);
  return {
    recordType: e.recordType,
    changes: objects(list).map((r) => ({ property: nonEmptyStr(r.Property), originalValue: text(r.OriginalValue), newValue: text(r.NewValue) })),
  };
}

/** Parses a JSON string field of a record (Power Platform records nest JSON in strings); `{}`/`[]`-less values → null. */
function jsonField(v: unknown): unknown {
  if (typeof v !== 'string' || !/^\s*[[{]/.test(v)) return null;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return null;
  }
}

/** `Name`/`Value` (or `NewValue`) pairs of a record list as a map (names as sent). */
function nameValues(list: unknown): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of objects(list)) {
    const name = nonEmptyStr(p.Name);
    const value = typeof p.Value === 'string' ? p.Value : typeof p.NewValue === 'string' ? p.NewValue : null;
    if (name && value !== null) out.set(name, value);
  }
  return out;
}

/** One property change: before and after. */
interface PropertyChange {
  property: string;
  oldValue: string | null;
  newValue: string | null;
}

/**
 * A Power Platform administrator activity (RecordType 256, Copilot Studio agents and custom connectors), typed from
 * its `PropertyCollection` (OpenTelemetry-style names `powerplatform.analytics.*`).
 * Source: learn.microsoft.com/microsoft-copilot-studio/admin-logging-copilot-studio (operations BotCreate,
 * BotUpdateOperation-*, properties), and the schema's PowerPlatformAdministratorActivity record type.
 */
export interface PowerPlatformAdminActivity {
  /** `Bot`, `CustomConnector`, … */
  resourceType: string | null;
  environmentId: string | null;
  environmentName: string | null;
  botId: string | null;
  botName: string | null;
  /** `…resource.bot.schema.name`: the agent's schema name (e.g. `cr123_hrHelper`), when the record carries it. */
  botSchemaName: string | null;
  /**
   * The agent component a `BotComponent*` record is about, when the record names it: `…resource.bot_component.id`
   * (botcomponentid), `…resource.bot_component.schema.name` and `…resource.bot_component.type` (the Dataverse
   * `componenttype` number as a string, e.g. `15` instructions, `16` knowledge source). UNCONFIRMED key names: Learn's
   * "schema audit fields" list BotComponentId and BotComponentType, no public record shows their PropertyCollection
   * spelling; these follow the `bot.id` / `bot.schema.name` pattern. Null when none of them is present.
   */
  component: { id: string | null; schemaName: string | null; type: number | null } | null;
  /** The agent's authentication mode when the record states it (publication records). */
  authenticationMode: string | null;
  /** Changes listed in `bot.update_details.change` (a JSON string of PropertyName/OldValue/NewValue). */
  changes: PropertyChange[];
  customConnector: { id: string | null; name: string | null; host: string | null } | null;
  /** The connection a `PutConnection` record creates or updates (`…resource.connection.id`), else null. */
  connectionId: string | null;
  /** The activity (`powerplatform.analytics.activity.name`), e.g. `PutConnection`. */
  activity: string | null;
}

/** The component fields of a record, or null when it has none (see {@link PowerPlatformAdminActivity.component}). */
function botComponent(id: string | null, schemaName: string | null, type: string | null): PowerPlatformAdminActivity['component'] {
  if (!id && !schemaName && !type) return null;
  const n = type !== null && /^\d+$/.test(type.trim()) ? Number(type.trim()) : null;
  return { id, schemaName, type: n };
}

/** The Power Platform admin view of a record, or null when it is not RecordType 256. */
export function powerPlatformAdminActivity(e: Pick<AuditEvent, 'recordType' | 'raw'>): PowerPlatformAdminActivity | null {
  if (e.recordType !== RECORD_TYPES.PowerPlatformAdministratorActivity) return null;
  const p = nameValues(e.raw.PropertyCollection);
  const g = (k: string) => nonEmptyStr(p.get(`powerplatform.analytics.resource.${k}`));
  const changes = objects(jsonField(p.get('powerplatform.analytics.resource.bot.update_details.change'))).map((c) => ({
    property: nonEmptyStr(c.PropertyName) ?? '',
    oldValue: typeof c.OldValue === 'string' ? c.OldValue : null,
    newValue: typeof c.NewValue === 'string' ? c.NewValue : null,
  }));
  const resourceType = g('type');
  return {
    resourceType,
    environmentId: g('environment.id'),
    environmentName: g('environment.name'),
    botId: g('bot.id'),
    botName: g('bot.display_name'),
    botSchemaName: g('bot.schema.name'),
    component: botComponent(g('bot_component.id'), g('bot_component.schema.name'), g('bot_component.type')),
    authenticationMode: g('bot.authentication_mode'),
    changes,
    customConnector:
      resourceType === 'CustomConnector' ? { id: g('custom_connector.id'), name: g('custom_connector.display_name'), host: g('custom_connector.host') } : null,
    connectionId: g('connection.id'),
    activity: nonEmptyStr(p.get('powerplatform.analytics.activity.name')),
  };
}

/** A connector's classification change in a DLP policy. */
interface DlpConnectorChange {
  name: string | null;
  id: string | null;
  /** `Blocked`, `Confidential` (business), `General` (non-business), or null when absent. */
  previous: string | null;
  current: string | null;
}

/**
 * A Power Platform DLP policy activity (RecordType 187), typed from `AdditionalInfo` (a JSON string).
 * Source: learn.microsoft.com/power-platform/admin/dlp-activity-logging (CreateDlpPolicy, UpdateDlpPolicy,
 * DeleteDlpPolicy; `changeSet` with connector changes).
 */
export interface DlpPolicyActivity {
  policyId: string | null;
  policyType: string | null;
  connectorChanges: DlpConnectorChange[];
  changedProperties: PropertyChange[];
}

/** The DLP policy view of a record, or null when it is not RecordType 187. */
export function dlpPolicyActivity(e: Pick<AuditEvent, 'recordType' | 'raw'>): DlpPolicyActivity | null {
  if (e.recordType !== RECORD_TYPES.PowerPlatformAdminDlp) return null;
  const info = obj(jsonField(e.raw.AdditionalInfo));
  const changeSet = obj(info.changeSet);
  const classification = (v: unknown) => nonEmptyStr(obj(v).classification);
  return {
    policyId: nonEmptyStr(info.policyId) ?? nonEmptyStr(e.raw.ObjectId),
    policyType: nonEmptyStr(info.policyType),
    connectorChanges: objects(changeSet.connectorChanges).map((c) => ({
      name: nonEmptyStr(c.name),
      id: nonEmptyStr(c.id),
      previous: classification(c.previousValue),
      current: classification(c.currentValue),
    })),
    changedProperties: objects(changeSet.changedProperties).map((c) => ({
      property: nonEmptyStr(c.name) ?? '',
      oldValue: nonEmptyStr(c.previousValue),
      newValue: nonEmptyStr(c.currentValue),
    })),
  };
}

/**
 * A Power Automate flow activity (RecordType 30, `Workload` `MicrosoftFlow`). Real records carry the flow's
 * lifecycle, not its actions: `FlowDetailsUrl` (the flow's details page, holding the environment and flow ids),
 * `FlowConnectorNames` (the connector display names listed in the flow definition at the time of the event, comma
 * separated), `SharingPermission` / `RecipientUPN` (permission changes), `LicenseDisplayName`, `UserTypeInitiated`,
 * `UserUPN`. No URL of an HTTP action is in the record: rules that need one read the collected inventory.
 * Source: Microsoft Learn "View Power Automate activity logs in Microsoft Purview" (MicrosoftDocs/power-platform
 * `power-platform/admin/activity-logging-auditing/activity-logs-power-automate.md`: events Created flow, Edited flow,
 * Deleted flow, Edited/Deleted permissions, trials; the base schema table and its Limitations: "They don't include
 * individual flow runs, action executions, and connector calls at runtime").
 */
export interface FlowActivity {
  /** The flow id (GUID): from `FlowDetailsUrl` (`…/flows/{id}/details`), else the record's `ObjectId`. */
  flowId: string | null;
  environmentId: string | null;
  /** `FlowConnectorNames`, split on commas, trimmed. */
  connectors: string[];
  /** The connectors of {@link connectors} that make arbitrary HTTP calls: `HTTP`, `HTTP Webhook`. */
  httpConnectors: string[];
  recipient: string | null;
}

/** Connector display names of the HTTP action and HTTP webhook (any URL); not "HTTP with Microsoft Entra ID". */
const HTTP_CONNECTOR_NAMES = /^HTTP(?: Webhook)?$/i;

/** The flow view of a record, or null when it is not RecordType 30. */
export function flowActivity(e: Pick<AuditEvent, 'recordType' | 'raw' | 'objectId'>): FlowActivity | null {
  if (e.recordType !== RECORD_TYPES.MicrosoftFlow) return null;
  const url = nonEmptyStr(e.raw.FlowDetailsUrl);
  const connectors = (nonEmptyStr(e.raw.FlowConnectorNames) ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    flowId: (url ? (/\/flows\/([^/?#]+)/.exec(url)?.[1] ?? null) : null) ?? e.objectId,
    environmentId: url ? (/\/environments\/([^/?#]+)/.exec(url)?.[1] ?? null) : null,
    connectors,
    httpConnectors: connectors.filter((c) => HTTP_CONNECTOR_NAMES.test(c)),
    recipient: nonEmptyStr(e.raw.RecipientUPN),
  };
}

/**
 * A Power Apps activity, from either record form Microsoft sends:
 * - RecordType 256 (PowerPlatformAdministratorActivity) whose `PropertyCollection` has
 *   `powerplatform.analytics.resource.type` = `PowerApp`: app id and name in `…resource.power_app.id` /
 *   `…resource.power_app.display_name`, environment in `…resource.environment.id` / `.name`, the activity in
 *   `powerplatform.analytics.activity.name` (e.g. `AdminDeleteApp`), the caller's address in `enduser.ip_address`;
 * - RecordType 45 (PowerAppsApp, the older form): `AppName` and `AdditionalInfo` (a JSON string with `appName`,
 *   `environmentName`, …).
 * Source: Microsoft Learn "View Power Apps activity logs in Microsoft Purview" (MicrosoftDocs/power-platform
 * `power-platform/admin/activity-logging-auditing/activity-logs-power-apps.md`, its schema example; the 2018 version of
 * `logging-powerapps.md` for RecordType 45 and `AdditionalInfo`); the Management Activity schema's AuditLogRecordType.
 */
export interface PowerAppsActivity {
  /** The record type it came from: 256 or 45. */
  recordType: number;
  /** The app's id (GUID, the `name` of the Power Apps admin API), or null when the record does not name it. */
  appId: string | null;
  /** The app's display name, when the record carries it. */
  appName: string | null;
  environmentId: string | null;
  environmentName: string | null;
  /** The activity (`powerplatform.analytics.activity.name`, e.g. `AdminDeleteApp`), or the record's `Operation`. */
  activity: string | null;
  permissionType: string | null;
  targetPrincipal: string | null;
}

/** The Power Apps view of a record, or null when it is neither RecordType 45 nor a RecordType 256 `PowerApp` record. */
export function powerAppsActivity(e: Pick<AuditEvent, 'recordType' | 'raw'> & { operation?: string | null }): PowerAppsActivity | null {
  if (e.recordType === RECORD_TYPES.PowerPlatformAdministratorActivity) {
    const p = nameValues(e.raw.PropertyCollection);
    const g = (k: string) => nonEmptyStr(p.get(`powerplatform.analytics.resource.${k}`));
    if (g('type') !== 'PowerApp') return null;
    return {
      recordType: RECORD_TYPES.PowerPlatformAdministratorActivity,
      appId: g('power_app.id'),
      appName: g('power_app.display_name'),
      environmentId: g('environment.id'),
      environmentName: g('environment.name'),
      activity: nonEmptyStr(p.get('powerplatform.analytics.activity.name')) ?? e.operation ?? nonEmptyStr(e.raw.Operation),
      permissionType: null,
      // A permission change names its recipient's Entra object id in `targetuser.id` (the property Sentinel's "Power
      // Apps - Bulk sharing of Power Apps to newly created guest users" reads from PowerAppPermissionEdited records).
      targetPrincipal: nonEmptyStr(p.get('targetuser.id')),
    };
  }
  if (e.recordType !== RECORD_TYPES.PowerAppsApp) return null;
  const info = obj(jsonField(e.raw.AdditionalInfo));
  return {
    recordType: RECORD_TYPES.PowerAppsApp,
    appId: nonEmptyStr(info.appName) ?? nonEmptyStr(e.raw.AppName),
    appName: nonEmptyStr(info.appDisplayName),
    environmentId: nonEmptyStr(info.environmentName),
    environmentName: null,
    activity: e.operation ?? nonEmptyStr(e.raw.Operation),
    permissionType: nonEmptyStr(info.permissionType),
    targetPrincipal: nonEmptyStr(info.targetPrincipal),
  };
}

/**
 * An Entra ID directory change (RecordType 8, Audit.AzureActiveDirectory): consent and service principal credential
 * events among others, typed from `ModifiedProperties` and `Target`.
 * Source: the schema's Azure Active Directory base schema; learn.microsoft.com/entra/identity/monitoring-health
 * reference-audit-activities ("Consent to application.", "Add service principal credentials.").
 */
export interface DirectoryChange {
  /** `ModifiedProperties` name → new value. */
  modified: Map<string, string>;
  /** Application (client) ID of the target service principal, when the record names one. */
  targetAppId: string | null;
  targetName: string | null;
  /** The target's user principal name (`Target` entry of Type 5), e.g. the user added to a role or disabled. */
  targetUpn: string | null;
  /** The target's object id: the first `Target` entry of Type 2 that is a bare GUID (after `User_<id>`), lower case. */
  targetId: string | null;
  /** Consent: admin consent (for all users) or a user's own consent; null when not a consent record. */
  adminConsent: boolean | null;
  /** Consent: the delegated scopes granted, as listed in `ConsentAction.Permissions`. */
  scopes: string[];
  /**
   * Credentials: the types (`Password`, `AsymmetricX509Cert`) of the keys this change added — the `KeyDescription`
   * entries of the new value whose `KeyIdentifier` the old value does not hold (the new value lists every key the
   * object has after the change, old ones included).
   */
  keyTypes: string[];
  /** Credentials: the keys added, as {@link keyTypes} counts them. */
  keysAdded: CredentialKey[];
}

/** One credential of an Entra `KeyDescription` list. */
export interface CredentialKey {
  keyId: string | null;
  /** `Password` (a client secret) or `AsymmetricX509Cert` (a certificate), as the record states it. */
  keyType: string;
  displayName: string | null;
}

const KEY_ENTRY = /\[KeyIdentifier=([^,\]]*),KeyType=([A-Za-z0-9]+)(?:,KeyUsage=[^,\]]*)?(?:,DisplayName=([^\]]*))?\]/g;

/**
 * The credentials of a `KeyDescription` value: a JSON string of a list of strings such as
 * `[KeyIdentifier=…,KeyType=Password,KeyUsage=Verify,DisplayName=…]` (or the same text not JSON-encoded).
 * Source: the Management Activity Azure AD schema (`ModifiedProperties[{Name,NewValue,OldValue}]`); public Microsoft
 * 365 Defender hunting queries compare `NewValue` and `OldValue` of `KeyDescription` by set difference; recorded values
 * in test/fixtures/real/audit-defects/SOURCES.md.
 */
export function credentialKeys(value: string | null | undefined): CredentialKey[] {
  if (!value) return [];
  return [...value.matchAll(KEY_ENTRY)].map((m) => ({ keyId: m[1] || null, keyType: m[2]!, displayName: m[3] ? m[3] : null }));
}

/** The keys of `after` that `before` does not hold (by `KeyIdentifier`, else by type and name). */
function keysAddedBetween(before: string | null, after: string | null): CredentialKey[] {
  const old = credentialKeys(before);
  const key = (k: CredentialKey) => k.keyId ?? `${k.keyType}|${k.displayName ?? ''}`;
  const had = new Set(old.map(key));
  return credentialKeys(after).filter((k) => !had.has(key(k)));
}

/** The directory-change view of a record, or null when it is not RecordType 8. */
export function directoryChange(e: Pick<AuditEvent, 'recordType' | 'raw' | 'operation'>): DirectoryChange | null {
  if (e.recordType !== RECORD_TYPES.AzureActiveDirectory) return null;
  const modified = new Map<string, string>();
  const previous = new Map<string, string>();
  for (const p of objects(e.raw.ModifiedProperties)) {
    const name = nonEmptyStr(p.Name);
    if (name) modified.set(name, typeof p.NewValue === 'string' ? p.NewValue : '');
    if (name && typeof p.OldValue === 'string') previous.set(name, p.OldValue);
  }
  const keysAdded = keysAddedBetween(previous.get('KeyDescription') ?? null, modified.get('KeyDescription') ?? null);
  const targets = objects(e.raw.Target);
  const isConsent = /^consent to application/i.test(e.operation ?? '');
  const permissions = modified.get('ConsentAction.Permissions') ?? '';
  return {
    modified,
    targetAppId: nonEmptyStr(modified.get('TargetId.ServicePrincipalNames')?.split(';')[0]) ?? null,
    targetName: nonEmptyStr(targets.find((t) => t.Type === 1)?.ID),
    targetUpn: nonEmptyStr(targets.find((t) => t.Type === 5)?.ID),
    targetId:
      nonEmptyStr(
        targets.find((t) => t.Type === 2 && typeof t.ID === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(t.ID))?.ID,
      )?.toLowerCase() ?? null,
    adminConsent: isConsent ? /^true$/i.test(modified.get('ConsentContext.IsAdminConsent') ?? '') : null,
    scopes: isConsent ? [...permissions.matchAll(/Scope:\s*([^,\]]*)/g)].flatMap((m) => m[1]!.trim().split(/\s+/)).filter(Boolean) : [],
    keyTypes: [...new Set(keysAdded.map((k) => k.keyType))],
    keysAdded,
  };
}
