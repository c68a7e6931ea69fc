import { createHash } from 'node:crypto';
import type { CheckMetadata } from '../checks/types.ts';
import type { Severity } from '../core/types.ts';
import type { FindingWithSuppression } from '../store/repositories/findings.ts';

/**
 * Findings as a SARIF 2.1.0 log (OASIS Static Analysis Results Interchange Format,
 * https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html). Pure function: no I/O.
 *
 * One run; `tool.driver` is Vigil with one rule per check (§3.49 reportingDescriptor). Findings concern tenant
 * resources, not files, so each result's location is a logical location (§3.33): the resource's type, id and name.
 * A resolved finding is a result of kind `pass` (level `none`, §3.27.9); a suppressed one carries an `external`
 * suppression (§3.35) with its justification.
 */

/** The SARIF version written. */
const SARIF_VERSION = '2.1.0';
/** `$schema` of the log: the OASIS 2.1.0 schema (errata 01). */
const SARIF_SCHEMA_URI = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';

/** Vigil severity → SARIF level (§3.27.10: error, warning, note). */
const SARIF_LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = { critical: 'error', high: 'error', medium: 'warning', low: 'note', info: 'note' };

/**
 * Vigil severity → `security-severity` (a 0–10 score string read by GitHub code scanning: ≥ 9 critical, ≥ 7 high,
 * ≥ 4 medium, > 0 low).
 */
const SECURITY_SEVERITY: Record<Severity, string> = { critical: '9.5', high: '8.0', medium: '5.5', low: '3.0', info: '0.0' };

/** Check metadata fields the mapping reads. */
export type SarifCheckInfo = Pick<CheckMetadata, 'id' | 'title' | 'area' | 'severity' | 'risk' | 'remediation' | 'references' | 'frameworks'> &
  Partial<Pick<CheckMetadata, 'peers'>>;

/** A SARIF log (the subset Vigil writes). */
export interface SarifLog {
  $schema: string;
  version: '2.1.0';
  runs: SarifRun[];
}

/** One SARIF run. */
interface SarifRun {
  tool: { driver: { name: string; version: string; informationUri?: string; rules: SarifRule[] } };
  results: SarifResult[];
  columnKind: 'unicodeCodePoints';
}

/** A reportingDescriptor for one check. */
interface SarifRule {
  id: string;
  shortDescription: { text: string };
  fullDescription: { text: string };
  help: { text: string };
  helpUri?: string;
  defaultConfiguration: { level: 'error' | 'warning' | 'note' };
  properties: {
    tags: string[];
    severity: Severity;
    'security-severity': string;
    /** The framework mappings (key → entries), as in the check's metadata. */
    frameworks: Record<string, string[]>;
    /** The peer checks matched or exceeded, as in the check's metadata. */
    peers: string[];
  };
}

/** One result (one finding). */
interface SarifResult {
  ruleId: string;
  ruleIndex?: number;
  kind: 'fail' | 'pass';
  level: 'error' | 'warning' | 'note' | 'none';
  message: { text: string };
  locations: { logicalLocations: { name: string; fullyQualifiedName: string; kind: string }[] }[];
  partialFingerprints: Record<string, string>;
  suppressions?: { kind: 'external'; status: 'accepted'; justification: string; properties: { author: string; expiresAt: string | null; createdAt: string } }[];
  properties: {
    findingId: string;
    integrationId: string;
    status: string;
    severity: string;
    firstSeenAt: string;
    lastSeenAt: string;
    resolvedAt: string | null;
    resourceType: string;
    resourceId: string;
  };
}

/**
 * A stable fingerprint of a finding: SHA-256 of (integration, check, resource), the same across evaluations and
 * exports, so a consumer matches results run to run (§3.27.17 partialFingerprints).
 */
export function findingFingerprint(f: Pick<FindingWithSuppression, 'integration_id' | 'check_id' | 'resource_id'>): string {
  return createHash('sha256').update(`${f.integration_id}\u0000${f.check_id}\u0000${f.resource_id}`).digest('hex');
}

/** One rule per check, in the order given. */
function sarifRule(c: SarifCheckInfo): SarifRule {
  const tags = ['security', c.area, ...Object.entries(c.frameworks).flatMap(([framework, ids]) => ids.map((id) => `${framework}/${id}`))];
  return {
    id: c.id,
    shortDescription: { text: c.title },
    fullDescription: { text: c.risk },
    help: { text: c.remediation },
    ...(c.references[0] ? { helpUri: c.references[0] } : {}),
    defaultConfiguration: { level: SARIF_LEVEL[c.severity] },
    properties: { tags, severity: c.severity, 'security-severity': SECURITY_SEVERITY[c.severity], frameworks: c.frameworks, peers: c.peers ?? [] },
  };
}

/**
 * Builds the SARIF log of `findings`. Every check in `checks` becomes a rule (so a consumer sees what was checked,
 * not only what failed); a finding of a check missing from `checks` still gets a result, without `ruleIndex`.
 */
export function findingsToSarif(findings: FindingWithSuppression[], checks: SarifCheckInfo[], options: { version: string; informationUri?: string }): SarifLog {
  const index = new Map(checks.map((c, i) => [c.id, i]));
  const results = findings.map((f): SarifResult => {
    const check = checks[index.get(f.check_id) ?? -1];
    const reason = f.detail ? ((JSON.parse(f.detail) as { reason?: string | null }).reason ?? null) : null;
    const resolved = f.status === 'resolved';
    return {
      ruleId: f.check_id,
      ...(index.has(f.check_id) ? { ruleIndex: index.get(f.check_id)! } : {}),
      kind: resolved ? 'pass' : 'fail',
      level: resolved ? 'none' : SARIF_LEVEL[f.severity as Severity],
      message: { text: reason ?? check?.title ?? f.check_id },
      locations: [
        { logicalLocations: [{ name: f.resource_name ?? f.resource_id, fullyQualifiedName: `${f.resource_type}/${f.resource_id}`, kind: f.resource_type }] },
      ],
      partialFingerprints: { 'vigilFinding/v1': findingFingerprint(f) },
      ...(f.suppression
        ? {
            suppressions: [
              {
                kind: 'external' as const,
                status: 'accepted' as const,
                justification: f.suppression.reason,
                properties: { author: f.suppression.author, expiresAt: f.suppression.expires_at, createdAt: f.suppression.created_at },
              },
            ],
          }
        : {}),
      properties: {
        findingId: f.id,
        integrationId: f.integration_id,
        status: f.status,
        severity: f.severity,
        firstSeenAt: f.first_seen_at,
        lastSeenAt: f.last_seen_at,
        resolvedAt: f.resolved_at,
        resourceType: f.resource_type,
        resourceId: f.resource_id,
      },
    };
  });
  return {
    $schema: SARIF_SCHEMA_URI,
    version: SARIF_VERSION,
    runs: [
      {
        tool: {
          driver: {
            name: 'Vigil',
            version: options.version,
            ...(options.informationUri ? { informationUri: options.informationUri } : {}),
            rules: checks.map(sarifRule),
          },
        },
        results,
        columnKind: 'unicodeCodePoints',
      },
    ],
  };
}
