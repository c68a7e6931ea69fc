import { VigilError } from '../../../core/errors.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import { UpstreamHttpError } from '../../../platform/http/client.ts';
import type { Stream, StreamContext } from '../../stream.ts';
import {
  MAX_SCANS_IN_FLIGHT,
  MODIFIED_SINCE_MAX_AGE_MS,
  MODIFIED_SINCE_MIN_AGE_MS,
  modifiedUrl,
  modifiedWorkspaces,
  SCAN_BATCH_SIZE,
  scanWorkspaces,
  type ScanWaitOptions,
} from '../scanner.ts';
import { obj, objects, str, bool, type Json } from '../../../core/json.ts';

/**
 * `powerBiWorkspaces`: every workspace (with its reports, datasets, dashboards, dataflows and users) through the admin
 * scanner flow, incrementally (the artifacts shared widely are `powerBiSharedLinks.ts`).
 *
 * Rounds of `powerBiWorkspaces` (learn.microsoft.com/fabric/governance/metadata-scanning-run): the first reads every
 * workspace id (`workspaces/modified` without `modifiedSince`, personal workspaces included), scans them in batches of
 * 100 with up to 16 scans in flight, and ends with a delta link `workspaces/modified?modifiedSince={round start − 30
 * min}`; the next round reads only the workspaces modified since (the 30-minute overlap covers changes Power BI takes up
 * to 30 minutes to register, and keeps `modifiedSince` at least 30 minutes old as the API requires). A delta link older
 * than the API's 30-day window (or refused with 400) starts a full round through the engine's resync path. Workspaces
 * scanned in state `Deleted` come back as `removed`.
 *
 * Cursor of a round in progress (stored in the checkpoint; small): `{"v":1,"s":round start,"m":modifiedSince|null,
 * "a":last workspace id stored}`. A resumed round asks `workspaces/modified` again with the same `modifiedSince` and
 * scans the ids after `a` (ids are processed in sorted order); anything created meanwhile is newer than the round start
 * and comes in the next round.
 */

/** A principal with access to a workspace (`GroupUser` of a scan result), compacted. */
interface PowerBiPrincipalSummary {
  /** UPN for users, object id for groups and apps (`identifier`). */
  identifier: string;
  /** `emailAddress` (users), or null. */
  emailAddress: string | null;
  /** `User`, `Group`, `App`, `None`. */
  principalType: string | null;
  /** `groupUserAccessRight`: `Admin`, `Member`, `Contributor`, `Viewer`. */
  accessRight: string | null;
  /** `userType` (`Member`, `Guest`), users only; null when absent. */
  userType: string | null;
}

/** A report of a workspace, compacted. */
export interface PowerBiReportSummary {
  id: string;
  name: string | null;
  datasetId: string | null;
  /** `PowerBIReport` or `PaginatedReport`. */
  reportType: string | null;
  /** `endorsementDetails.endorsement`: `Promoted`, `Certified`, or null. */
  endorsement: string | null;
  /** `sensitivityLabel.labelId` (Microsoft Purview label GUID), or null when unlabelled. */
  sensitivityLabelId: string | null;
  /** Principals with direct access to the report (`users`, returned with `getArtifactUsers=true`). */
  userCount: number;
  /** Of those, users whose `userType` is not `Member` (B2B guests). */
  externalUserCount: number;
}

/** A dataset (semantic model) of a workspace, compacted. */
interface PowerBiDatasetSummary {
  id: string;
  name: string | null;
  /** UPN of the user who configured the dataset (its credentials owner). */
  configuredBy: string | null;
  /** `datasourceType` of each data source the dataset uses (distinct, sorted): `Sql`, `SharePointList`, `File`, `Web`, … */
  datasourceTypes: string[];
  /** On-premises data gateway ids the data sources go through (distinct, sorted); empty for cloud-only datasets. */
  gatewayIds: string[];
  /** Server hosts / URLs / paths of the data sources (`connectionDetails.server`, else `url`, else `path`; distinct, sorted). */
  servers: string[];
  /** Row-level security: an effective identity is required to query the dataset. */
  isEffectiveIdentityRequired: boolean | null;
  /** `sensitivityLabel.labelId`, or null. */
  sensitivityLabelId: string | null;
  /** `endorsementDetails.endorsement`, or null. */
  endorsement: string | null;
  userCount: number;
  externalUserCount: number;
}

/**
 * A Power BI workspace (GetScanResult `workspaces[]`). `id` = workspace id; slice `*`. Raw = the scanned workspace
 * object as returned (its data sources resolved into the summaries here, not copied into raw).
 *
 * Sources: learn.microsoft.com/rest/api/power-bi/admin/workspace-info-get-scan-result (WorkspaceInfoResponse:
 * `workspaces[]` with `users[].groupUserAccessRight`, `reports[]`, `datasets[]` with `datasourceUsages`, `dashboards[]`,
 * `dataflows[]`; top-level `datasourceInstances[]`), learn.microsoft.com/fabric/governance/metadata-scanning-overview.
 * UNCONFIRMED: the `userType` values beyond `Member`/`Guest` (treated as external when not `Member`).
 */
export interface PowerBiWorkspaceAttrs {
  /** `Workspace` (shared workspace), `PersonalGroup` (My workspace), `Group` (classic), `AdminWorkspace`, … */
  type: string | null;
  /** `Active`, `Deleted`, `Removing`, `Orphaned`, `NotFound`. */
  state: string | null;
  isOnDedicatedCapacity: boolean | null;
  /** Premium / Fabric capacity id, or null on shared capacity. */
  capacityId: string | null;
  /** Workspace roles (all principals; workspaces seldom have many). */
  users: PowerBiPrincipalSummary[];
  /** Principals in workspace roles. */
  userCount: number;
  /** Users in workspace roles whose `userType` is not `Member` (guests / external). */
  externalUserCount: number;
  /** A security group or Microsoft 365 group holds a workspace role. */
  sharedWithGroup: boolean;
  reports: PowerBiReportSummary[];
  datasets: PowerBiDatasetSummary[];
  dashboardCount: number;
  dataflowCount: number;
  /** When this workspace was last scanned (ISO 8601 UTC; the scan's `createdDateTime`). */
  scannedAt: string | null;
}

/** Workspace states that mean the workspace is gone. */
const GONE_STATES = new Set(['deleted', 'removing', 'notfound']);

interface RoundCursor {
  v: 1;
  /** Round start, ISO 8601 UTC. */
  s: string;
  /** `modifiedSince` of this round, or null for a full round. */
  m: string | null;
  /** Last workspace id stored (ids are processed in sorted order), or null. */
  a: string | null;
}

function isExternal(u: Json): boolean {
  const t = str(u.userType);
  return str(u.principalType) === 'User' && t !== null && t.toLowerCase() !== 'member';
}

function principal(u: Json, rightField: string): PowerBiPrincipalSummary {
  return {
    identifier: str(u.identifier) ?? str(u.emailAddress) ?? str(u.graphId) ?? '',
    emailAddress: str(u.emailAddress),
    principalType: str(u.principalType),
    accessRight: str(u[rightField]),
    userType: str(u.userType),
  };
}

const uniqSorted = (xs: (string | null | undefined)[]): string[] => [...new Set(xs.filter((x): x is string => typeof x === 'string' && x !== ''))].sort();

/** Maps a scanned workspace (GetScanResult `workspaces[]`) to its estate object; `sources` = datasourceInstances by id. */
export function toWorkspace(w: Json, sources: Map<string, Json>, scannedAt: string | null): EstateObject<PowerBiWorkspaceAttrs> {
  const users = objects(w.users);
  const reports: PowerBiReportSummary[] = objects(w.reports).map((r) => {
    const ru = objects(r.users);
    return {
      id: String(r.id),
      name: str(r.name),
      datasetId: str(r.datasetId),
      reportType: str(r.reportType),
      endorsement: str(obj(r.endorsementDetails).endorsement),
      sensitivityLabelId: str(obj(r.sensitivityLabel).labelId),
      userCount: ru.length,
      externalUserCount: ru.filter(isExternal).length,
    };
  });
  const datasets: PowerBiDatasetSummary[] = objects(w.datasets).map((d) => {
    const du = objects(d.users);
    const used = objects(d.datasourceUsages)
      .map((u) => sources.get(String(u.datasourceInstanceId).toLowerCase()))
      .filter((s): s is Json => s !== undefined);
    return {
      id: String(d.id),
      name: str(d.name),
      configuredBy: str(d.configuredBy),
      datasourceTypes: uniqSorted(used.map((s) => str(s.datasourceType))),
      gatewayIds: uniqSorted(used.map((s) => str(s.gatewayId))),
      servers: uniqSorted(used.map((s) => str(obj(s.connectionDetails).server) ?? str(obj(s.connectionDetails).url) ?? str(obj(s.connectionDetails).path))),
      isEffectiveIdentityRequired: bool(d.isEffectiveIdentityRequired),
      sensitivityLabelId: str(obj(d.sensitivityLabel).labelId),
      endorsement: str(obj(d.endorsementDetails).endorsement),
      userCount: du.length,
      externalUserCount: du.filter(isExternal).length,
    };
  });
  return {
    sliceKey: '*',
    id: String(w.id).toLowerCase(),
    name: str(w.name),
    attrs: {
      type: str(w.type),
      state: str(w.state),
      isOnDedicatedCapacity: bool(w.isOnDedicatedCapacity),
      capacityId: str(w.capacityId),
      users: users.map((u) => principal(u, 'groupUserAccessRight')),
      userCount: users.length,
      externalUserCount: users.filter(isExternal).length,
      sharedWithGroup: users.some((u) => str(u.principalType) === 'Group'),
      reports,
      datasets,
      dashboardCount: objects(w.dashboards).length,
      dataflowCount: objects(w.dataflows).length,
      scannedAt,
    },
    raw: w,
  };
}

function encodeCursor(c: RoundCursor): string {
  return JSON.stringify(c);
}

function decodeCursor(text: string): RoundCursor {
  try {
    const c = JSON.parse(text) as RoundCursor;
    if (c.v === 1 && typeof c.s === 'string' && (c.m === null || typeof c.m === 'string') && (c.a === null || typeof c.a === 'string')) return c;
  } catch {
    // fall through
  }
  throw new VigilError('POWER_BI_CURSOR', 'The stored Power BI scan cursor is not understood; the round restarts.', { field: 'cursor' });
}

/** Forces a full round through the engine's delta-resync path (it clears the link and reads from the start). */
function resync(url: string, why: string): UpstreamHttpError {
  return new UpstreamHttpError('powerBi', 'GET', url, 410, 'resyncRequired', why);
}

/** The round a cursor stands for: null → full round; a delta link → an incremental round; JSON → a resumed round. */
function roundOf(ctx: StreamContext, cursor: string | null, nowMs: number): RoundCursor {
  if (cursor === null) return { v: 1, s: new Date(nowMs).toISOString(), m: null, a: null };
  if (!cursor.startsWith('{')) {
    // A stored delta link is rebuilt from the profile, never followed; one off the Power BI hosts was tampered with.
    ctx.http.links.check('powerBi', cursor, 'the stored delta link');
    let since: string | null = null;
    try {
      since = new URL(cursor).searchParams.get('modifiedSince');
    } catch {
      since = null;
    }
    const sinceMs = since ? Date.parse(since) : NaN;
    // A margin of an hour keeps a round that takes a while inside the window.
    if (Number.isNaN(sinceMs) || sinceMs < nowMs - MODIFIED_SINCE_MAX_AGE_MS + 3_600_000) {
      throw resync(cursor, 'The previous Power BI round is older than the 30 days GetModifiedWorkspaces accepts; reading every workspace.');
    }
    return { v: 1, s: new Date(nowMs).toISOString(), m: new Date(sinceMs).toISOString(), a: null };
  }
  return decodeCursor(cursor);
}

/** Every Power BI workspace with its items, through the scanner APIs; incremental by `modifiedSince`. */
export const powerBiWorkspacesStream: Stream<'powerBiWorkspaces', EstateObject<PowerBiWorkspaceAttrs>, 'powerbi-workspaces'> = {
  name: 'powerBiWorkspaces',
  inventory: { kind: 'powerbi-workspaces', position: 90 },
  capability: 'powerBi.tenant',
  primaryKey: ['id'],
  delta: true,
  resource: (ctx) => ctx.cloud.powerBi.resource,
  async *read(ctx, _slice, cursor) {
    const round = roundOf(ctx, cursor, Date.now());
    const listUrl = modifiedUrl(ctx, round.m);
    let ids: string[];
    try {
      ids = await modifiedWorkspaces(ctx, listUrl);
    } catch (e) {
      if (round.m !== null && e instanceof UpstreamHttpError && e.status === 400)
        throw resync(listUrl, `Power BI refused modifiedSince=${round.m} (${e.message}); reading every workspace.`);
      throw e;
    }
    if (round.a !== null) ids = ids.filter((id) => id > (round.a as string));
    const deltaLink = modifiedUrl(ctx, new Date(Date.parse(round.s) - MODIFIED_SINCE_MIN_AGE_MS).toISOString());
    const batches: string[][] = [];
    for (let i = 0; i < ids.length; i += SCAN_BATCH_SIZE) batches.push(ids.slice(i, i + SCAN_BATCH_SIZE));
    if (batches.length === 0) {
      yield { records: [], nextCursor: null, deltaLink };
      return;
    }
    let cancelled = false;
    const options: ScanWaitOptions = { cancelled: () => cancelled };
    const jobs: Promise<Awaited<ReturnType<typeof scanWorkspaces>>>[] = [];
    const launch = (i: number) => {
      const job = scanWorkspaces(ctx, batches[i] as string[], options);
      job.catch(() => undefined); // awaited in order below; this only keeps an early failure from being unhandled
      jobs[i] = job;
    };
    try {
      // Up to 16 scans ahead; pages are yielded in batch order so the cursor's "last id stored" stays exact.
      for (let i = 0; i < Math.min(MAX_SCANS_IN_FLIGHT, batches.length); i++) launch(i);
      for (let i = 0; i < batches.length; i++) {
        const { result, scannedAt } = await (jobs[i] as Promise<Awaited<ReturnType<typeof scanWorkspaces>>>);
        if (i + MAX_SCANS_IN_FLIGHT < batches.length) launch(i + MAX_SCANS_IN_FLIGHT);
        const sources = new Map(
          objects(result.datasourceInstances)
            .concat(objects(result.misconfiguredDatasourceInstances))
            .map((s) => [String(s.datasourceId).toLowerCase(), s]),
        );
        const records: EstateObject<PowerBiWorkspaceAttrs>[] = [];
        const removed: string[] = [];
        for (const w of objects(result.workspaces)) {
          if (typeof w.id !== 'string') continue;
          if (GONE_STATES.has(String(w.state ?? '').toLowerCase())) removed.push(w.id.toLowerCase());
          else records.push(toWorkspace(w, sources, scannedAt));
        }
        const last = i === batches.length - 1;
        const batch = batches[i] as string[];
        yield {
          records,
          ...(removed.length ? { removed } : {}),
          nextCursor: last ? null : encodeCursor({ ...round, a: batch[batch.length - 1] as string }),
          ...(last ? { deltaLink } : {}),
        };
      }
    } finally {
      cancelled = true;
    }
  },
};
