import { isIP } from 'node:net';
import type { AuditEvent, EventColumns } from '../../core/audit.ts';
import { nonEmptyStr } from '../../core/json.ts';

/**
 * Normalisation of Office 365 Management Activity API records into the common-schema columns Vigil stores and queries
 * (`AuditEvent`, `EventColumns` in core/audit.ts).
 * Source: MicrosoftDocs/office-365-management-api `office-365-management-activity-api-schema.md` (common schema).
 */

const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);

const PLAIN_UTC = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/;

/** Parses `CreationTime` (UTC, with or without offset or fraction) to ISO 8601 UTC; null when unparseable. */
export function auditTime(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  // The API's own form (`2026-11-20T08:00:00`, UTC) needs no date arithmetic.
  if (value.length === 19 && PLAIN_UTC.test(value)) return `${value}.000Z`;
  const withZone = /[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value}Z`;
  const t = Date.parse(withZone);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED = /^\[([^\]]+)\](?::\d{1,5})?$/;
const MAPPED = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;
/** `ffff:1.2.3.4`: the IPv4-mapped form with its leading `::` lost, as Microsoft's CopilotInteraction example sends it. */
const MAPPED_WITHOUT_PREFIX = /^ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * One client address as Vigil stores and compares it, from the forms real audit records carry: `1.2.3.4`,
 * `1.2.3.4:40927` (Exchange, SharePoint), `[2001:db8::1]:443` and `[2001:db8::1]`, `::ffff:1.2.3.4` (IPv4-mapped IPv6,
 * Power Platform), IPv6 in any case and compression. Returns the bare address: IPv4 dotted, or IPv6 in the RFC 5952
 * canonical text form (lower case, longest zero run compressed; WHATWG URL host serialisation), an IPv4-mapped IPv6
 * address as its IPv4 address, a zone index (`%eth0`) dropped. Null for anything else (empty, `<null>`, host names,
 * IPv4 with leading zeros): the raw record keeps the value. Never throws.
 * Source: the Management Activity API common schema (`ClientIP`: "The IP address is displayed in either an IPv4 or
 * IPv6 address format"); the Exchange mailbox schema (`ClientIPAddress`); Azure AD records (`ActorIpAddress`);
 * Microsoft Learn "View Power Apps activity logs" example (`enduser.ip_address` `::ffff:172.172.34.12`); the
 * Management Activity API's Copilot schema example (`ClientIP` `ffff:10.11.0.229`, the `::` lost: read as the IPv4
 * address it maps); recorded values with ports in test/fixtures/real/audit-defects/SOURCES.md.
 */
export function normalizeIp(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 100) return null;
  let s = value.trim();
  const v4 = IPV4_WITH_PORT.exec(s);
  if (v4) s = v4[1]!;
  else {
    const b = BRACKETED.exec(s);
    if (b) s = b[1]!;
  }
  const zone = s.indexOf('%');
  if (zone > 0) s = s.slice(0, zone);
  const unprefixed = MAPPED_WITHOUT_PREFIX.exec(s);
  if (unprefixed) s = unprefixed[1]!;
  const family = isIP(s);
  if (family === 4) return s;
  if (family !== 6) return null;
  const canonical = new URL(`http://[${s}]/`).hostname.slice(1, -1);
  const mapped = MAPPED.exec(canonical);
  if (!mapped) return canonical;
  const hi = parseInt(mapped[1]!, 16);
  const lo = parseInt(mapped[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * The record's client address: the first of `ClientIP`, `ClientIPAddress` (Exchange), `ActorIpAddress` (Azure AD),
 * and for Power Platform records the `enduser.ip_address` of `PropertyCollection`, that parses.
 */
function recordIp(raw: Record<string, unknown>): string | null {
  return normalizeIp(raw.ClientIP) ?? normalizeIp(raw.ClientIPAddress) ?? normalizeIp(raw.ActorIpAddress) ?? propertyIp(raw.PropertyCollection);
}

/** `enduser.ip_address` of a `PropertyCollection` (`[{Name, Value}]`), normalised; null when absent. */
function propertyIp(list: unknown): string | null {
  if (!Array.isArray(list)) return null;
  for (const p of list) {
    if (p && typeof p === 'object' && (p as { Name?: unknown }).Name === 'enduser.ip_address') return normalizeIp((p as { Value?: unknown }).Value);
  }
  return null;
}

/**
 * The stored columns of one record, in `EVENT_COLUMNS` order, without building an event object (the ingestion hot
 * path: one array per record, serialised straight into the insert). Null when the record has no `Id` or no
 * parseable `CreationTime`.
 */
function recordColumns(raw: Record<string, unknown>, contentType: string): EventColumns | null {
  const id = nonEmptyStr(raw.Id);
  const creationTime = auditTime(raw.CreationTime);
  if (!id || !creationTime) return null;
  return [
    id,
    contentType,
    int(raw.RecordType),
    creationTime,
    nonEmptyStr(raw.Operation),
    nonEmptyStr(raw.Workload),
    nonEmptyStr(raw.UserId),
    int(raw.UserType),
    recordIp(raw),
    nonEmptyStr(raw.ObjectId),
    nonEmptyStr(raw.OrganizationId),
  ];
}

/**
 * The stored columns of a content blob's records, each with its position in the blob (where its raw record stays),
 * and how many records were malformed (not an object, no `Id` or no parseable `CreationTime`). `records` is read once,
 * in order: an array, or a blob's records parsed as they are read.
 */
export function blobEvents(records: Iterable<unknown>, contentType: string): { events: { columns: EventColumns; rawIndex: number }[]; malformed: number } {
  const events: { columns: EventColumns; rawIndex: number }[] = [];
  let malformed = 0;
  let rawIndex = 0;
  for (const record of records) {
    const columns = record && typeof record === 'object' && !Array.isArray(record) ? recordColumns(record as Record<string, unknown>, contentType) : null;
    if (columns) events.push({ columns, rawIndex });
    else malformed++;
    rawIndex++;
  }
  return { events, malformed };
}

/** Normalises one record; null when it has no `Id` or no parseable `CreationTime` (counted as malformed). */
export function normalizeRecord(raw: Record<string, unknown>, contentType: string): AuditEvent | null {
  const c = recordColumns(raw, contentType);
  if (!c) return null;
  const [id, , recordType, creationTime, operation, workload, userId, userType, clientIp, objectId, organizationId] = c;
  return { id, contentType, recordType, creationTime, operation, workload, userId, userType, clientIp, objectId, organizationId, raw };
}
