/**
 * Normalised audit events: the Office 365 Management Activity API common schema columns Vigil queries, plus the raw
 * record. The types only: records are parsed in `sources/managementActivity/` (`records.ts` normalises, `views.ts`
 * gives typed views of the record types detections read).
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
  /** The client address normalised by `normalizeIp` (sources/managementActivity/records.ts) (no port, no brackets, IPv4-mapped as IPv4); the raw value stays in `raw`. */
  clientIp: string | null;
  objectId: string | null;
  organizationId: string | null;
  raw: Record<string, unknown>;
}

/** Record types Vigil reads (schema reference). */
export const RECORD_TYPES = {
  AzureActiveDirectory: 8,
  PowerBIAudit: 20,
  MicrosoftFlow: 30,
  PowerAppsApp: 45,
  PowerPlatformAdminDlp: 187,
  PowerPlatformAdministratorActivity: 256,
  CopilotInteraction: 261,
  /** Copilot plugin lifecycle and settings (schema AuditLogRecordType 310–314, 325). */
  CreateCopilotPlugin: 310,
  EnableCopilotPlugin: 313,
  DisableCopilotPlugin: 314,
  UpdateCopilotSettings: 325,
} as const;

/** Column values of one event: id, contentType, recordType, creationTime, operation, workload, userId, userType, clientIp, objectId, organizationId. */
export type EventColumns = [
  string,
  string,
  number | null,
  string,
  string | null,
  string | null,
  string | null,
  number | null,
  string | null,
  string | null,
  string | null,
];
