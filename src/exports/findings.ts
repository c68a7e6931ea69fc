import { stringify } from 'csv-stringify/sync';
import type { CheckMetadata } from '../checks/types.ts';
import type { FindingWithSuppression } from '../store/repositories/findings.ts';
import { findingToOcsf, vigilProduct } from './ocsf.ts';
import { findingsToSarif } from './sarif.ts';

/** Formats findings can be exported in. */
export const FINDING_EXPORT_FORMATS = ['json', 'csv', 'sarif', 'ocsf', 'ocsf-ndjson'] as const;
/** One of {@link FINDING_EXPORT_FORMATS}. */
export type FindingExportFormat = (typeof FINDING_EXPORT_FORMATS)[number];

/** A finding as the CLI and exports show it (camelCase, the check's reason, the active suppression). */
export function findingExportView(f: FindingWithSuppression) {
  return {
    id: f.id,
    integrationId: f.integration_id,
    checkId: f.check_id,
    severity: f.severity,
    status: f.status,
    resourceType: f.resource_type,
    resourceId: f.resource_id,
    resourceName: f.resource_name,
    reason: f.detail ? ((JSON.parse(f.detail) as { reason?: string }).reason ?? null) : null,
    firstSeenAt: f.first_seen_at,
    lastSeenAt: f.last_seen_at,
    resolvedAt: f.resolved_at,
    suppression: f.suppression
      ? { reason: f.suppression.reason, author: f.suppression.author, expiresAt: f.suppression.expires_at, createdAt: f.suppression.created_at }
      : null,
  };
}

/** CSV columns, in order (one row per finding). */
const CSV_COLUMNS = [
  'id',
  'integrationId',
  'checkId',
  'severity',
  'status',
  'resourceType',
  'resourceId',
  'resourceName',
  'reason',
  'firstSeenAt',
  'lastSeenAt',
  'resolvedAt',
  'suppressed',
  'suppressionReason',
  'suppressionAuthor',
  'suppressionExpiresAt',
  'frameworks',
  'peers',
];

/**
 * Characters that make a spreadsheet (Excel, LibreOffice Calc, Google Sheets) read a CSV cell as a formula when they
 * open the cell: `=`, `+`, `-`, `@`, tab (0x09) and carriage return (0x0D) per OWASP "CSV Injection"
 * (https://owasp.org/www-community/attacks/CSV_Injection), and NUL (0x00) per OWASP ASVS 4.0 requirement 1.2.10 (5.0: 1.2.10).
 */
const FORMULA_START = /^[=+\-@\t\r\0]/;

/**
 * One CSV cell made inert for spreadsheets, as OWASP advises: a cell that starts with a formula character is
 * prefixed with a single quote (`'=1+1`, shown by spreadsheets as the text `=1+1`). Every such cell is prefixed,
 * whatever follows: a resource named `-dev` exports as `'-dev`. The findings CSV has no numeric column (ids, names,
 * ISO 8601 times, `true`/`false`), so no real number is ever prefixed; a consumer that reads the file as data strips one
 * leading `'` before any of these characters. Quoting and doubling of embedded quotes (RFC 4180) is csv-stringify's.
 */
function neutraliseCsvCell(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** Media type and file extension of each format. */
export const FINDING_EXPORT_MEDIA: Record<FindingExportFormat, { contentType: string; extension: string }> = {
  json: { contentType: 'application/json', extension: 'json' },
  csv: { contentType: 'text/csv; charset=utf-8', extension: 'csv' },
  sarif: { contentType: 'application/sarif+json', extension: 'sarif' },
  ocsf: { contentType: 'application/json', extension: 'ocsf.json' },
  'ocsf-ndjson': { contentType: 'application/x-ndjson', extension: 'ocsf.ndjson' },
};

/**
 * The mappings of a check as CSV cells: `frameworks` as `<key>/<entry>` (the SARIF tags' form, e.g.
 * `owasp-llm-2025/LLM06: Excessive Agency`) and `peers` as written in the metadata, each list joined by ` | `; empty for
 * a check the catalogue lacks.
 */
function csvMappings(check: CheckMetadata | undefined): { frameworks: string; peers: string } {
  if (!check) return { frameworks: '', peers: '' };
  return {
    frameworks: Object.entries(check.frameworks)
      .flatMap(([key, entries]) => entries.map((e) => `${key}/${e}`))
      .join(' | '),
    peers: check.peers.join(' | '),
  };
}

/**
 * Renders findings in one export format: `json` (an array of {@link findingExportView}), `csv` (RFC 4180, header
 * row, the check's framework mappings and peers in the last two columns, cells neutralised against formula injection
 * by {@link neutraliseCsvCell}), `sarif` (SARIF 2.1.0 log), `ocsf` (OCSF Detection Finding events, a JSON array) or `ocsf-ndjson` (one per
 * line).
 * @param context.checks the check catalogue (rules of SARIF, titles of OCSF); `tenants` the tenant id per integration.
 */
export function renderFindings(
  rows: FindingWithSuppression[],
  format: FindingExportFormat,
  context: { checks: CheckMetadata[]; tenants: Map<string, string>; version: string },
): string {
  if (format === 'sarif') return `${JSON.stringify(findingsToSarif(rows, context.checks, { version: context.version }), null, 2)}\n`;
  if (format === 'ocsf' || format === 'ocsf-ndjson') {
    const byId = new Map(context.checks.map((c) => [c.id, c]));
    const events = rows.map((f) =>
      findingToOcsf(f, byId.get(f.check_id), { product: vigilProduct(context.version), tenantId: context.tenants.get(f.integration_id) }),
    );
    return format === 'ocsf-ndjson' ? events.map((e) => `${JSON.stringify(e)}\n`).join('') : `${JSON.stringify(events, null, 2)}\n`;
  }
  const list = rows.map(findingExportView);
  if (format === 'json') return `${JSON.stringify(list, null, 2)}\n`;
  const byId = new Map(context.checks.map((c) => [c.id, c]));
  return stringify(
    list.map((f) => ({
      ...f,
      ...csvMappings(byId.get(f.checkId)),
      suppression: undefined,
      suppressed: f.suppression !== null,
      suppressionReason: f.suppression?.reason ?? '',
      suppressionAuthor: f.suppression?.author ?? '',
      suppressionExpiresAt: f.suppression?.expiresAt ?? '',
    })),
    { header: true, columns: CSV_COLUMNS, cast: { boolean: (b) => (b ? 'true' : 'false'), string: neutraliseCsvCell } },
  );
}
