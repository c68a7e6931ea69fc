/**
 * Normalised audit events: the Office 365 Management Activity API common schema columns Vigil queries, plus the raw
 * record, and typed views of the record types detections read.
 * Source: MicrosoftDocs/office-365-management-api `office-365-management-activity-api-schema.md` (common schema,
 * RecordType and UserType enumerations) and `copilot-schema.md` (CopilotInteraction).
 */

/** The common-schema fields of one record. */
export interface AuditEvent {
  id: string;
  contentType: string;
  recordType: number | null;
  /** ISO 8601 UTC with milliseconds (the API sends `CreationTime` without an offset; it is UTC). */
  creationTime: string;
  operation: string | null;
  workload: string | null;
  userId: string | null;
  /** 0 Regular, 2 Admin, 3 DcAdmin, 4 System, 5 Application, 6 ServicePrincipal, 7 CustomPolicy, 8 SystemPolicy, 10 Guest. */
  userType: number | null;
  clientIp: string | null;
  objectId: string | null;
  organizationId: string | null;
  raw: Record<string, unknown>;
}

/** Record types Vigil reads (schema reference). */
export const RECORD_TYPES = {
  PowerBIAudit: 20,
  MicrosoftFlow: 30,
  PowerAppsApp: 45,
  PowerPlatformAdminDlp: 187,
  PowerPlatformAdministratorActivity: 256,
  CopilotInteraction: 261,
} as const;

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);

/** Parses `CreationTime` (UTC, with or without offset or fraction) to ISO 8601 UTC; null when unparseable. */
export function auditTime(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const withZone = /[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value}Z`;
  const t = Date.parse(withZone);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** Normalises one record; null when it has no `Id` or no parseable `CreationTime` (counted as malformed). */
export function normalizeRecord(raw: Record<string, unknown>, contentType: string): AuditEvent | null {
  const id = str(raw.Id);
  const creationTime = auditTime(raw.CreationTime);
  if (!id || !creationTime) return null;
  return {
    id,
    contentType,
    recordType: int(raw.RecordType),
    creationTime,
    operation: str(raw.Operation),
    workload: str(raw.Workload),
    userId: str(raw.UserId),
    userType: int(raw.UserType),
    clientIp: str(raw.ClientIP) ?? str(raw.ActorIpAddress),
    objectId: str(raw.ObjectId),
    organizationId: str(raw.OrganizationId),
    raw,
  };
}

/** A Copilot interaction (RecordType 261), typed from the raw record. */
export interface CopilotInteraction {
  appHost: string | null;
  threadId: string | null;
  contexts: { id: string | null; type: string | null }[];
  accessedResources: { id: string | null; name: string | null; type: string | null; siteUrl: string | null; sensitivityLabelId: string | null; action: string | null }[];
  models: { provider: string | null; name: string | null }[];
  plugins: { name: string | null; id: string | null }[];
}

const arr = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => !!x && typeof x === 'object') : []);

/** The Copilot view of a record, or null when it is not a CopilotInteraction. */
export function copilotInteraction(e: Pick<AuditEvent, 'recordType' | 'raw'>): CopilotInteraction | null {
  if (e.recordType !== RECORD_TYPES.CopilotInteraction) return null;
  const d = (e.raw.CopilotEventData ?? {}) as Record<string, unknown>;
  return {
    appHost: str(d.AppHost),
    threadId: str(d.ThreadId),
    contexts: arr(d.Contexts).map((c) => ({ id: str(c.Id), type: str(c.Type) })),
    accessedResources: arr(d.AccessedResources).map((r) => ({ id: str(r.Id), name: str(r.Name), type: str(r.Type), siteUrl: str(r.SiteUrl), sensitivityLabelId: str(r.SensitivityLabelId), action: str(r.Action) })),
    models: arr(d.ModelTransparencyDetails).map((m) => ({ provider: str(m.ModelProviderName), name: str(m.ModelName) })),
    plugins: arr(d.AISystemPlugin).map((p) => ({ name: str(p.Name), id: str(p.Id) })),
  };
}
