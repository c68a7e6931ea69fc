import type { Caller } from '../access/index.ts';
import { scopeIntegrations } from '../access/scope.ts';
import { loadCheckMetadata } from '../checks/loader.ts';
import type { CheckMetadata } from '../checks/types.ts';
import type { ComplianceView } from '../contract/compliance.ts';
import { VigilError } from '../core/errors.ts';
import { loadDetections } from '../detections/index.ts';
import type { DetectionMetadata } from '../detections/types.ts';
import type { Executor } from '../store/db.ts';
import { checkResultCounts, openAlertCounts } from '../store/repositories/queries.ts';
import { FRAMEWORK_IDS, FRAMEWORKS, frameworkRef, peerRefs, type Framework, type FrameworkId, type ItemRef } from './catalogue.ts';

/**
 * Compliance views (issue 20, "Compliance views"): per framework of the catalogue (OWASP Top 10 for LLM Applications
 * 2025, MITRE ATLAS, MITRE ATT&CK) and per peer baseline (ScubaGear, Maester, Microsoft Sentinel), each item with the
 * checks and detections whose metadata maps to it, the status of the integrations in scope (latest check results:
 * pass / fail / not evaluated; detections: alerts not closed), and the items nothing covers with the reason when the
 * catalogue knows it. `vigil compliance` and `GET /api/v1/compliance` return this view; docs/peers.md is rendered from
 * the same mappings. Mappings are read from the metadata of every loaded check and detection, so new ones count
 * without a change here.
 */

/** A check or detection mapped to an item. */
interface Cover {
  kind: 'check' | 'detection';
  id: string;
  title: string;
  note: string | null;
}

/** Key of an item in {@link coverageIndex}. */
const itemKey = (framework: FrameworkId, itemId: string) => `${framework}\u0000${itemId}`;

/** Every catalogue reference of one check's or detection's metadata (frameworks and peers). */
function refsOf(m: Pick<CheckMetadata | DetectionMetadata, 'frameworks' | 'peers'>): ItemRef[] {
  const refs: ItemRef[] = [];
  for (const [key, entries] of Object.entries(m.frameworks)) for (const e of entries) refs.push(...[frameworkRef(key, e)].filter((r) => r !== null));
  for (const p of m.peers) refs.push(...peerRefs(p));
  return refs;
}

/** The metadata mappings as the catalogue sees them. */
export interface CoverageIndex {
  /** What covers each item (key: framework and item id). */
  covers(framework: FrameworkId, itemId: string): Cover[];
  /**
   * References to what the catalogue lacks: an id of a framework or peer with no such item, a framework name that
   * differs from the catalogue's (a sub-technique may be named alone: `T1098.003: Additional Cloud Roles`), a `peers`
   * string that starts with a catalogued peer's prefix but names none of its items.
   */
  problems: string[];
}

/** Indexes the mappings of `checks` and `detections` against the catalogue. */
export function coverageIndex(checks: Pick<CheckMetadata, 'id' | 'title' | 'frameworks' | 'peers'>[], detections: DetectionMetadata[]): CoverageIndex {
  const index = new Map<string, Cover[]>();
  const problems: string[] = [];
  const add = (kind: Cover['kind'], m: Pick<CheckMetadata, 'id' | 'title' | 'frameworks' | 'peers'>) => {
    // A peer outside the catalogue (Prowler, the CoE Starter Kit) is named freely; one of the catalogue's must name an item.
    for (const p of m.peers)
      if (FRAMEWORKS.some((f) => f.kind === 'peer' && p.startsWith(`${f.prefix} `)) && peerRefs(p).length === 0)
        problems.push(`${kind} ${m.id}: peer "${p}" names no item`);
    for (const key of Object.keys(m.frameworks))
      if (!FRAMEWORKS.some((f) => f.id === key && f.kind === 'framework')) problems.push(`${kind} ${m.id}: framework key "${key}" is not in the catalogue`);
    for (const ref of refsOf(m)) {
      const fw = FRAMEWORKS.find((f) => f.id === ref.framework)!;
      const item = fw.items.find((i) => i.id === ref.itemId);
      if (!item) problems.push(`${kind} ${m.id}: ${fw.id} has no item ${ref.itemId}`);
      else if (fw.kind === 'framework' && ref.note !== null && ref.note !== item.name && ref.note !== item.name.split(': ').at(-1))
        problems.push(`${kind} ${m.id}: ${fw.id} ${ref.itemId} is "${item.name}", not "${ref.note}"`);
      const k = itemKey(ref.framework, ref.itemId);
      const list = index.get(k) ?? [];
      if (!list.some((c) => c.kind === kind && c.id === m.id)) list.push({ kind, id: m.id, title: m.title, note: fw.kind === 'peer' ? ref.note : null });
      index.set(k, list);
    }
  };
  for (const c of checks) add('check', c);
  for (const d of detections) add('detection', d);
  return { covers: (framework, itemId) => index.get(itemKey(framework, itemId)) ?? [], problems };
}

/**
 * The state of an item from its covers and counts, worst first: `not_covered`; `fail` (a check fails or an alert is
 * open); `not_evaluated`; `pass`; `monitored` (only detections, none open); `no_results` (its checks have none yet).
 */
function stateOf(covers: Cover[], c: { pass: number; fail: number; notEvaluated: number; openAlerts: number }) {
  if (covers.length === 0) return 'not_covered' as const;
  if (c.fail > 0 || c.openAlerts > 0) return 'fail' as const;
  if (c.notEvaluated > 0) return 'not_evaluated' as const;
  if (c.pass > 0) return 'pass' as const;
  return covers.every((x) => x.kind === 'detection') ? ('monitored' as const) : ('no_results' as const);
}

/**
 * The compliance view of the caller's organization, or of one of its integrations.
 * @param filter.framework only this framework or peer baseline (one of {@link FRAMEWORK_IDS}).
 * @throws VigilError `not-found` for another organization's integration; `invalid-input` (`UNKNOWN_FRAMEWORK`) for a
 *   framework the catalogue lacks.
 */
export async function complianceView(
  db: Executor,
  caller: Caller,
  filter: { integrationId?: string | undefined; framework?: string | undefined },
): Promise<ComplianceView> {
  const frameworks = selectFrameworks(filter.framework);
  const integrationIds = await scopeIntegrations(db, caller, filter.integrationId);
  const index = coverageIndex(
    await loadCheckMetadata(),
    loadDetections().map((d) => d.metadata),
  );
  const results = new Map<string, { pass: number; fail: number; notEvaluated: number }>();
  for (const r of await checkResultCounts(db, integrationIds)) {
    const entry = results.get(r.checkId) ?? { pass: 0, fail: 0, notEvaluated: 0 };
    if (r.status === 'pass') entry.pass += r.n;
    else if (r.status === 'fail') entry.fail += r.n;
    else if (r.status === 'not_evaluated') entry.notEvaluated += r.n;
    results.set(r.checkId, entry);
  }
  const alerts = new Map((await openAlertCounts(db, integrationIds)).map((a) => [a.ruleId, a.n]));
  return {
    integrationIds,
    frameworks: frameworks.map((fw) => {
      const items = fw.items.map((item) => {
        const covers = index.covers(fw.id, item.id);
        const counts = { pass: 0, fail: 0, notEvaluated: 0, openAlerts: 0 };
        for (const c of covers) {
          if (c.kind === 'detection') {
            counts.openAlerts += alerts.get(c.id) ?? 0;
            continue;
          }
          const r = results.get(c.id);
          if (!r) continue;
          counts.pass += r.pass;
          counts.fail += r.fail;
          counts.notEvaluated += r.notEvaluated;
        }
        return {
          id: item.id,
          name: item.name,
          covers,
          notCoveredReason: covers.length === 0 ? (item.notCovered ?? null) : null,
          ...counts,
          state: stateOf(covers, counts),
        };
      });
      return {
        id: fw.id,
        name: fw.name,
        shortName: fw.shortName,
        kind: fw.kind,
        version: fw.version,
        source: fw.source,
        covered: items.filter((i) => i.covers.length > 0).length,
        items,
      };
    }),
  };
}

/**
 * The frameworks `id` selects: all when absent.
 * @throws VigilError `UNKNOWN_FRAMEWORK` naming the field `framework` and the known ids.
 */
function selectFrameworks(id: string | undefined): readonly Framework[] {
  if (id === undefined) return FRAMEWORKS;
  const fw = FRAMEWORKS.find((f) => f.id === id);
  if (!fw)
    throw new VigilError('UNKNOWN_FRAMEWORK', `No framework "${id}".`, {
      field: 'framework',
      remediation: `Use one of: ${FRAMEWORK_IDS.join(', ')}.`,
    });
  return [fw];
}

/**
 * Renders `docs/peers.md`: every ScubaGear, Maester and Microsoft Sentinel item → the Vigil checks and detections that
 * match or exceed it (with what the mapping says), or "not covered" with the reason when the catalogue knows it; then
 * the same for the frameworks (OWASP LLM 2025, MITRE ATLAS, MITRE ATT&CK). Generated with the other reference docs by
 * `npx tsx scripts/docs.ts`; test/unit/compliance.test.ts keeps the file in step.
 */
export function renderPeersMarkdown(checks: Pick<CheckMetadata, 'id' | 'title' | 'frameworks' | 'peers'>[], detections: DetectionMetadata[]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const index = coverageIndex(checks, detections);
  const lines = [
    '# Peers and frameworks',
    '',
    "<!-- Generated from src/reporting/catalogue.ts and the checks' and detections' metadata by `npx tsx scripts/docs.ts`. Do not edit by hand. -->",
    '',
    "Every item of the open-source peers' baselines (CISA ScubaGear's Power BI and Power Platform policies, Maester's AI",
    "agent tests, Microsoft Sentinel's Power Platform and Copilot analytic rules) and of the frameworks Vigil maps to, with",
    'the Vigil check or detection that matches or exceeds it, or why none does. `vigil compliance` and',
    "`GET /api/v1/compliance` show the same items with a tenant's status.",
    '',
  ];
  const section = (fw: Framework) => {
    const covered = fw.items.filter((i) => index.covers(fw.id, i.id).length > 0).length;
    lines.push(`## ${fw.name}`, '', `Source: ${fw.source}${fw.version ? ` (version ${fw.version})` : ''}. ${covered} of ${fw.items.length} items covered.`, '');
    lines.push(`| ${fw.kind === 'peer' ? 'Peer item' : 'Item'} | Name | Vigil |`, '|---|---|---|');
    for (const item of fw.items) {
      const covers = index.covers(fw.id, item.id);
      const vigil = covers.length > 0 ? covers.map((c) => `${c.kind} \`${c.id}\`${c.note ? ` ${c.note}` : ''}`).join('; ') : (item.notCovered ?? 'not covered');
      lines.push(`| \`${item.id}\` | ${esc(item.name)} | ${esc(vigil)} |`);
    }
    lines.push('');
  };
  for (const fw of FRAMEWORKS.filter((f) => f.kind === 'peer')) section(fw);
  for (const fw of FRAMEWORKS.filter((f) => f.kind === 'framework')) section(fw);
  return `${lines.join('\n').trimEnd()}\n`;
}
