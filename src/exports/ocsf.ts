import type { CheckMetadata } from '../checks/types.ts';
import type { Severity } from '../core/types.ts';
import type { FindingWithSuppression } from '../store/repositories/findings.ts';
import { FRAMEWORKS } from '../reporting/catalogue.ts';
import type { AlertsTable } from '../store/schema.ts';

/**
 * Findings and alerts as OCSF Detection Finding events (class 2004, category Findings), schema version
 * {@link OCSF_VERSION}. Pure functions: no I/O. Timestamps are epoch milliseconds (OCSF `timestamp_t`).
 *
 * Mapping source: OCSF schema `events/findings/detection_finding.json`, `events/findings/finding.json`,
 * `events/base_event.json` and objects `finding_info`, `analytic`, `metadata`, `product`, `remediation`,
 * `resource_details`, `cloud` (https://schema.ocsf.io/1.9.0/classes/detection_finding).
 */

/** OCSF schema version the events follow (and the tests validate against). */
export const OCSF_VERSION = '1.9.0';

/** Detection Finding: class 2004 in category 2 (Findings). */
const DETECTION_FINDING_CLASS_UID = 2004;
const CATEGORY_UID = 2;

/** Finding activities: Create when first generated, Update when modified (seen again, reopened), Close when resolved. */
const OCSF_ACTIVITY = { create: 1, update: 2, close: 3 } as const;
export type OcsfActivity = keyof typeof OCSF_ACTIVITY;
const ACTIVITY_NAMES: Record<number, string> = { 1: 'Create', 2: 'Update', 3: 'Close' };

/** Finding status ids used by Vigil (OCSF `status_id`; 5 Archived and 6 Deleted are not used). */
const OCSF_STATUS = { new: 1, in_progress: 2, suppressed: 3, resolved: 4 } as const;
const STATUS_NAMES: Record<number, string> = { 1: 'New', 2: 'In Progress', 3: 'Suppressed', 4: 'Resolved' };

/** Vigil severity → OCSF `severity_id` (1 Informational … 5 Critical). */
export const OCSF_SEVERITY: Record<Severity, { id: number; name: string }> = {
  info: { id: 1, name: 'Informational' },
  low: { id: 2, name: 'Low' },
  medium: { id: 3, name: 'Medium' },
  high: { id: 4, name: 'High' },
  critical: { id: 5, name: 'Critical' },
};

/** The `metadata.product` of every event. */
export interface OcsfProduct {
  name: string;
  vendor_name: string;
  version: string;
}

/** Vigil as the OCSF product. */
export function vigilProduct(version: string): OcsfProduct {
  return { name: 'Vigil', vendor_name: 'Vigil', version };
}

/** An OCSF Detection Finding event as Vigil writes it (a subset of the class's attributes). */
export interface OcsfDetectionFinding {
  class_uid: 2004;
  class_name: 'Detection Finding';
  category_uid: 2;
  category_name: 'Findings';
  activity_id: number;
  activity_name: string;
  /** `class_uid * 100 + activity_id`. */
  type_uid: number;
  type_name: string;
  severity_id: number;
  severity: string;
  status_id: number;
  status: string;
  /** Event time, epoch ms. */
  time: number;
  message: string;
  is_alert?: boolean;
  finding_info: {
    uid: string;
    title: string;
    desc?: string;
    types: string[];
    created_time?: number;
    first_seen_time?: number;
    last_seen_time?: number;
    analytic: { uid: string; name: string; type_id: 1; type: 'Rule' };
    /** MITRE ATT&CK and ATLAS techniques the check or detection maps to. */
    attacks?: OcsfAttack[];
    /** Every framework mapping (`name`: the framework key, `values`: its entries) and the peers (`name`: `peers`). */
    tags?: { name: string; values: string[] }[];
  };
  resources?: { uid: string; name?: string; type: string }[];
  remediation?: { desc: string; references?: string[] };
  metadata: { version: string; product: OcsfProduct; profiles: string[]; uid?: string };
  cloud: { provider: 'Microsoft'; account?: { uid: string } };
}

/** One OCSF `attack` object: a technique, or a sub-technique with its technique; `version` the ATLAS matrix version. */
interface OcsfAttack {
  technique: { uid: string; name?: string };
  sub_technique?: { uid: string; name?: string };
  version?: string;
}

/** Check metadata fields the mapping reads (the mappings, when given, become `finding_info.attacks` and `tags`). */
export type CheckInfo = Pick<CheckMetadata, 'id' | 'title' | 'severity' | 'risk' | 'remediation' | 'references'> &
  Partial<Pick<CheckMetadata, 'frameworks' | 'peers'>>;

/**
 * `finding_info.attacks` and `finding_info.tags` of a check's or detection's mappings. ATT&CK (`mitre-attack`) and
 * ATLAS (`mitre-atlas`) entries (`"T1098.003: Additional Cloud Roles"`) become attack objects, a sub-technique with
 * its parent technique, named as the framework catalogue (src/reporting/catalogue.ts) names them (the entry's own
 * text when the catalogue lacks the id); ATLAS ones carry the catalogue's ATLAS version. Every framework entry and
 * every peer also becomes a tag. OCSF 1.9.0 objects `attack`, `technique`, `sub_technique`, `key_value_object`.
 */
function mappingsOf(m: {
  frameworks?: Record<string, string[]> | undefined;
  peers?: string[] | undefined;
}): Pick<OcsfDetectionFinding['finding_info'], 'attacks' | 'tags'> {
  const attacks: OcsfAttack[] = [];
  for (const key of ['mitre-attack', 'mitre-atlas'] as const) {
    const fw = FRAMEWORKS.find((f) => f.id === key)!;
    for (const entry of m.frameworks?.[key] ?? []) {
      const at = entry.indexOf(':');
      const uid = (at < 0 ? entry : entry.slice(0, at)).trim();
      const own = at < 0 ? undefined : entry.slice(at + 1).trim();
      const named = (id: string, fallback?: string) => {
        const name = fw.items.find((i) => i.id === id)?.name ?? fallback;
        return name ? { uid: id, name } : { uid: id };
      };
      const parent = /^(.+)\.\d{3}$/.exec(uid)?.[1];
      const version = key === 'mitre-atlas' && fw.version ? { version: fw.version } : {};
      attacks.push(parent ? { technique: named(parent), sub_technique: named(uid, own), ...version } : { technique: named(uid, own), ...version });
    }
  }
  const tags = [
    ...Object.entries(m.frameworks ?? {})
      .filter(([, v]) => v.length > 0)
      .map(([name, values]) => ({ name, values })),
    ...(m.peers?.length ? [{ name: 'peers', values: m.peers }] : []),
  ];
  return { ...(attacks.length > 0 ? { attacks } : {}), ...(tags.length > 0 ? { tags } : {}) };
}

/** Options shared by the mappers. */
export interface OcsfOptions {
  product: OcsfProduct;
  /** The Microsoft Entra tenant id of the finding's integration (`cloud.account.uid`), when known. */
  tenantId?: string | undefined;
}

const ms = (iso: string | null | undefined): number | undefined => (iso ? Date.parse(iso) : undefined);

function classification(activity: number, severity: Severity) {
  return {
    class_uid: DETECTION_FINDING_CLASS_UID,
    class_name: 'Detection Finding',
    category_uid: CATEGORY_UID,
    category_name: 'Findings',
    activity_id: activity,
    activity_name: ACTIVITY_NAMES[activity]!,
    type_uid: DETECTION_FINDING_CLASS_UID * 100 + activity,
    type_name: `Detection Finding: ${ACTIVITY_NAMES[activity]!}`,
    severity_id: OCSF_SEVERITY[severity].id,
    severity: OCSF_SEVERITY[severity].name,
  } as const;
}

/** The OCSF status of a finding: Suppressed under an active suppression, else Resolved or New. */
function findingStatusId(f: Pick<FindingWithSuppression, 'status' | 'suppression'>): number {
  if (f.suppression) return OCSF_STATUS.suppressed;
  return f.status === 'resolved' ? OCSF_STATUS.resolved : OCSF_STATUS.new;
}

/**
 * One finding as a Detection Finding event.
 * @param activity what happened: `create` (opened), `update` (seen again or reopened), `close` (resolved). Default:
 *   `close` for a resolved finding, `create` when first and last seen are equal, else `update`.
 * @param at the event time (ISO 8601 UTC). Default: resolved_at for a resolved finding, else last_seen_at.
 */
export function findingToOcsf(
  f: FindingWithSuppression,
  check: CheckInfo | undefined,
  options: OcsfOptions & { activity?: OcsfActivity; at?: string },
): OcsfDetectionFinding {
  const activity = options.activity ?? (f.status === 'resolved' ? 'close' : f.first_seen_at === f.last_seen_at ? 'create' : 'update');
  const status = findingStatusId(f);
  const reason = f.detail ? ((JSON.parse(f.detail) as { reason?: string | null }).reason ?? null) : null;
  const title = check?.title ?? f.check_id;
  return {
    ...classification(OCSF_ACTIVITY[activity], f.severity as Severity),
    status_id: status,
    status: STATUS_NAMES[status]!,
    time: Date.parse(options.at ?? (f.status === 'resolved' ? (f.resolved_at ?? f.last_seen_at) : f.last_seen_at)),
    message: reason ?? title,
    finding_info: {
      uid: f.id,
      title,
      ...(check ? { desc: check.risk } : {}),
      types: ['Posture'],
      created_time: ms(f.first_seen_at)!,
      first_seen_time: ms(f.first_seen_at)!,
      last_seen_time: ms(f.last_seen_at)!,
      analytic: { uid: f.check_id, name: f.check_id, type_id: 1, type: 'Rule' },
      ...(check ? mappingsOf(check) : {}),
    },
    resources: [{ uid: f.resource_id, ...(f.resource_name ? { name: f.resource_name } : {}), type: f.resource_type }],
    ...(check ? { remediation: { desc: check.remediation, references: check.references } } : {}),
    metadata: {
      version: OCSF_VERSION,
      product: options.product,
      profiles: ['cloud'],
      uid: `${f.id}:${OCSF_ACTIVITY[activity]}:${options.at ?? f.last_seen_at}`,
    },
    cloud: { provider: 'Microsoft', ...(options.tenantId ? { account: { uid: options.tenantId } } : {}) },
  };
}

/** Detection metadata fields the alert mapping reads. */
export interface DetectionInfo {
  id: string;
  title: string;
  description: string;
  response: string;
  references: string[];
  /** The detection's mappings, when given: `finding_info.attacks` and `tags`. */
  frameworks?: Record<string, string[]>;
  peers?: string[];
}

/** OCSF status of an alert: new → New, acknowledged → In Progress, closed → Resolved. */
function alertStatusId(status: string): number {
  return status === 'closed' ? OCSF_STATUS.resolved : status === 'acknowledged' ? OCSF_STATUS.in_progress : OCSF_STATUS.new;
}

/** An alert (a detection's hit) as a Detection Finding event with `is_alert: true`; Create when raised. */
export function alertToOcsf(a: AlertsTable, detection: DetectionInfo | undefined, options: OcsfOptions & { activity?: OcsfActivity }): OcsfDetectionFinding {
  const activity = options.activity ?? (a.status === 'closed' ? 'close' : a.created_at === a.updated_at ? 'create' : 'update');
  const status = alertStatusId(a.status);
  return {
    ...classification(OCSF_ACTIVITY[activity], a.severity as Severity),
    status_id: status,
    status: STATUS_NAMES[status]!,
    time: Date.parse(a.updated_at),
    message: a.title,
    is_alert: true,
    finding_info: {
      uid: a.id,
      title: a.title,
      ...(detection ? { desc: detection.description } : {}),
      types: ['Detection'],
      created_time: Date.parse(a.created_at),
      ...(a.window_start ? { first_seen_time: Date.parse(a.window_start) } : {}),
      ...(a.window_end ? { last_seen_time: Date.parse(a.window_end) } : {}),
      analytic: { uid: a.rule_id, name: detection?.title ?? a.rule_id, type_id: 1, type: 'Rule' },
      ...(detection ? mappingsOf(detection) : {}),
    },
    ...(detection ? { remediation: { desc: detection.response, references: detection.references } } : {}),
    metadata: { version: OCSF_VERSION, product: options.product, profiles: ['cloud'], uid: `${a.id}:${OCSF_ACTIVITY[activity]}` },
    cloud: { provider: 'Microsoft', ...(options.tenantId ? { account: { uid: options.tenantId } } : {}) },
  };
}
