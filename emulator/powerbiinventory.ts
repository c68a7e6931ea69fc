/**
 * Power BI inventory for the admin scanner APIs (reference §7): a tenant's workspaces with their reports, datasets
 * (semantic models), dashboards, dataflows and users, the data sources the datasets use, and which reports are
 * published to the web or shared through links to the whole organisation.
 *
 * This file holds the model, its seeded generator (own rng: `${seed}:powerbi-inventory`, so nothing generated before
 * changes), the ground truth a tester recomputes, the control operation that modifies a workspace, and the JSON
 * shapes the routes serve (`powerbiscanner.ts`).
 *
 * Shapes follow the Power BI REST reference: Admin - WorkspaceInfo GetScanResult
 * (learn.microsoft.com/rest/api/power-bi/admin/workspace-info-get-scan-result: workspaces[] with reports, dashboards,
 * datasets, dataflows, users; top-level datasourceInstances), Admin - WidelySharedArtifacts PublishedToWeb /
 * LinksSharedToWholeOrganization (`artifactAccessEntities` with `shareType` PublishToWeb / Link and a `sharer`).
 */
import { generatePowerBiTenantSettings, type PowerBiTenantSetting } from './powerbitenantsettings.ts';
import { randomUUID } from 'node:crypto';
import { createRng } from './prng.ts';
import type { DirectoryUser, Tenant } from './tenant.ts';

/** A principal with access to a workspace or an item (`GroupUser` / `ReportUser` / `DatasetUser` in the swagger). */
export interface PowerBiPrincipal {
  displayName: string;
  /** Users only. */
  emailAddress?: string;
  /** UPN for users, object id for groups and apps. */
  identifier: string;
  graphId: string;
  principalType: 'User' | 'Group' | 'App';
  /** Users only: `Member` or `Guest` (B2B guests are external users). */
  userType?: 'Member' | 'Guest';
  /** `Admin`, `Member`, `Contributor`, `Viewer` on workspaces; `Owner`, `Read`, `ReadWrite`, `ReadReshare`… on items. */
  accessRight: string;
}

/** A report of a workspace. */
export interface PowerBiReport {
  id: string;
  name: string;
  datasetId: string;
  reportType: 'PowerBIReport' | 'PaginatedReport';
  createdDateTime: string;
  modifiedDateTime: string;
  modifiedBy: string;
  endorsement: 'Promoted' | 'Certified' | null;
  sensitivityLabelId: string | null;
  users: PowerBiPrincipal[];
  /** Published to the web ("Publish to web" embed code) by this user, if so. */
  publishedToWebBy: DirectoryUser['id'] | null;
  /** Shared through a link to everyone in the organisation by this user, if so, with the link's access right. */
  organizationLink: { sharerId: DirectoryUser['id']; accessRight: 'Read' | 'ReadWrite' | 'ReadReshare' } | null;
}

/** A dataset (semantic model) of a workspace. */
export interface PowerBiDataset {
  id: string;
  name: string;
  configuredBy: string;
  createdDate: string;
  targetStorageMode: 'Import' | 'DirectQuery' | 'Abf';
  isEffectiveIdentityRequired: boolean;
  isEffectiveIdentityRolesRequired: boolean;
  endorsement: 'Promoted' | 'Certified' | null;
  sensitivityLabelId: string | null;
  /** Ids of {@link PowerBiDatasource}s it reads. */
  datasourceIds: string[];
  users: PowerBiPrincipal[];
}

/** A data source instance (`datasourceInstances[]` of a scan result). */
export interface PowerBiDatasource {
  datasourceId: string;
  datasourceType: string;
  connectionDetails: { server?: string; database?: string; url?: string; path?: string };
  /** On-premises data gateway, or null for cloud sources. */
  gatewayId: string | null;
}

/** A workspace (`Group` in the API). */
export interface PowerBiWorkspace {
  id: string;
  name: string;
  description: string;
  /** `Workspace` (shared) or `PersonalGroup` (My workspace). */
  type: 'Workspace' | 'PersonalGroup';
  state: 'Active' | 'Deleted';
  isOnDedicatedCapacity: boolean;
  capacityId: string | null;
  /** Last change (ISO 8601 UTC): what `workspaces/modified?modifiedSince=` compares. */
  modifiedAt: string;
  users: PowerBiPrincipal[];
  reports: PowerBiReport[];
  datasets: PowerBiDataset[];
  dashboards: { id: string; displayName: string; isReadOnly: boolean }[];
  dataflows: { objectId: string; name: string; configuredBy: string }[];
}

/** The Power BI inventory of a tenant (`Tenant.powerBi`). */
export interface PowerBiEstate {
  workspaces: PowerBiWorkspace[];
  datasources: PowerBiDatasource[];
  /** Test knob: the next this-many scans end Failed. @default 0 */
  failScans?: number;
  /** Test knob: entries per widely-shared-artifacts page. @default 100 */
  widelySharedPageSize?: number;
  /** Fabric tenant settings (`powerbitenantsettings.ts`); absent: an empty list. */
  tenantSettings?: PowerBiTenantSetting[];
  /** Test knob: List Tenant Settings answers this status (a refused or absent API) instead of the settings. */
  tenantSettingsStatus?: 403 | 404;
  /** Test knob: settings per List Tenant Settings page. @default all */
  tenantSettingsPageSize?: number;
}

/** Inputs of {@link generatePowerBiEstate}. */
export interface PowerBiGenerateInput {
  seed: number | string;
  /** Number of workspaces, personal ones included (about a third are personal). */
  workspaces: number;
  /** Reference instant (ms): every generated change is at least one day older. */
  nowMs: number;
  users: DirectoryUser[];
  domain: string;
}

const DAY = 86_400_000;
const LABELS = ['85b38049-4259-43a2-8feb-244e222d96c0', 'd9b9581a-0594-4c39-81c5-91ddf40baeda'];
const TOPICS = ['Sales', 'Finance', 'HR', 'Operations', 'Marketing', 'Supply Chain', 'Customer Success', 'IT', 'Legal', 'Procurement'];
const REPORT_KINDS = ['Overview', 'Pipeline', 'Forecast', 'KPIs', 'Headcount', 'Budget', 'Audit', 'Churn', 'Inventory'];
const SOURCES: { type: string; details: (topic: string, domain: string) => PowerBiDatasource['connectionDetails']; gateway: boolean }[] = [
  { type: 'Sql', details: (t, d) => ({ server: `sql-${slug(t)}.${d.split('.')[0]}.database.windows.net`, database: slug(t) }), gateway: false },
  { type: 'Sql', details: (t) => ({ server: `onprem-sql01.corp.local`, database: slug(t) }), gateway: true },
  { type: 'SharePointList', details: (t, d) => ({ url: `https://${d.split('.')[0]}.sharepoint.com/sites/${slug(t)}` }), gateway: false },
  { type: 'File', details: (t) => ({ path: `\\\\fileserver\\share\\${slug(t)}.xlsx` }), gateway: true },
  { type: 'Web', details: (t) => ({ url: `https://api.example.com/${slug(t)}` }), gateway: false },
];

function slug(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** A directory user as a Power BI principal. */
function principalOf(user: DirectoryUser, accessRight: string): PowerBiPrincipal {
  return {
    displayName: user.displayName,
    emailAddress: user.mail ?? user.userPrincipalName,
    identifier: user.userPrincipalName,
    graphId: user.id,
    principalType: 'User',
    userType: user.userType,
    accessRight,
  };
}

/**
 * Generates the Power BI inventory deterministically from its own seeded rng. With 3+ workspaces it guarantees at
 * least one workspace shared with a guest, one with a group, one report published to the web and one shared through an
 * organisation-wide link; about a third of the workspaces are personal (`PersonalGroup`). All `modifiedAt` values are
 * 1–120 days before `nowMs`.
 * Throws RangeError when `workspaces` is negative or there are workspaces but no enabled member user.
 */
export function generatePowerBiEstate(input: PowerBiGenerateInput): PowerBiEstate {
  const n = input.workspaces;
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`sizes.powerBiWorkspaces must be a non-negative integer, got ${String(n)}`);
  const rng = createRng(`${String(input.seed)}:powerbi-inventory`);
  const members = input.users.filter((u) => u.userType === 'Member' && u.accountEnabled);
  const guests = input.users.filter((u) => u.userType === 'Guest');
  if (n > 0 && members.length === 0) throw new RangeError('Power BI workspaces need at least one enabled member user');
  const estate: PowerBiEstate = { workspaces: [], datasources: [], tenantSettings: generatePowerBiTenantSettings(input.seed) };
  const personalCount = n >= 3 ? Math.floor(n / 3) : 0;
  const capacityId = rng.guid();
  const groupId = rng.guid();
  for (let i = 0; i < n; i++) {
    const personal = i >= n - personalCount;
    const owner = members[i % members.length] as DirectoryUser;
    const topic = TOPICS[i % TOPICS.length] as string;
    const modified = input.nowMs - rng.int(1, 120) * DAY - rng.int(0, DAY - 1);
    const ws: PowerBiWorkspace = {
      id: rng.guid(),
      name: personal ? `PersonalWorkspace ${owner.displayName}` : i < TOPICS.length ? topic : `${topic} ${Math.floor(i / TOPICS.length) + 1}`,
      description: personal ? '' : `${topic} reporting`,
      type: personal ? 'PersonalGroup' : 'Workspace',
      state: 'Active',
      isOnDedicatedCapacity: !personal && rng.chance(0.4),
      capacityId: null,
      modifiedAt: iso(modified),
      users: [principalOf(owner, 'Admin')],
      reports: [],
      datasets: [],
      dashboards: [],
      dataflows: [],
    };
    if (ws.isOnDedicatedCapacity) ws.capacityId = capacityId;
    if (!personal) {
      for (const u of rng.shuffle(members.filter((m) => m !== owner)).slice(0, rng.int(0, 3)))
        ws.users.push(principalOf(u, rng.pick(['Member', 'Contributor', 'Viewer'])));
      const guest = guests.length > 0 ? guests[i % guests.length] : undefined;
      if (guest && (i === 0 || rng.chance(0.25))) ws.users.push(principalOf(guest, 'Viewer'));
      if (i === 1 || rng.chance(0.3))
        ws.users.push({ displayName: `${topic} team`, identifier: groupId, graphId: groupId, principalType: 'Group', accessRight: 'Member' });
    }
    const datasetCount = personal ? rng.int(0, 1) : rng.int(1, 2);
    for (let d = 0; d < datasetCount; d++) {
      const src = SOURCES[rng.int(0, SOURCES.length - 1)] as (typeof SOURCES)[number];
      const ds: PowerBiDatasource = {
        datasourceId: rng.guid(),
        datasourceType: src.type,
        connectionDetails: src.details(topic, input.domain),
        gatewayId: src.gateway ? rng.guid() : null,
      };
      estate.datasources.push(ds);
      ws.datasets.push({
        id: rng.guid(),
        name: `${topic} model${d > 0 ? ` ${d + 1}` : ''}`,
        configuredBy: owner.userPrincipalName,
        createdDate: iso(modified - rng.int(1, 300) * DAY),
        targetStorageMode: rng.pick(['Import', 'DirectQuery', 'Abf'] as const),
        isEffectiveIdentityRequired: rng.chance(0.3),
        isEffectiveIdentityRolesRequired: rng.chance(0.2),
        endorsement: rng.pick([null, null, 'Promoted', 'Certified'] as const),
        sensitivityLabelId: rng.chance(0.5) ? rng.pick(LABELS) : null,
        datasourceIds: [ds.datasourceId],
        users: [principalOf(owner, 'ReadWriteReshareExplore')],
      });
    }
    for (const ds of ws.datasets) {
      for (let r = 0; r < rng.int(1, 2); r++)
        ws.reports.push(
          newReport(
            rng.guid(),
            `${topic} ${rng.pick(REPORT_KINDS)}`,
            ds.id,
            owner,
            iso(modified - rng.int(0, 30) * DAY),
            rng.chance(0.8) ? 'PowerBIReport' : 'PaginatedReport',
          ),
        );
    }
    for (const rep of ws.reports) {
      rep.endorsement = rng.pick([null, null, 'Promoted', 'Certified'] as const);
      rep.sensitivityLabelId = rng.chance(0.5) ? rng.pick(LABELS) : null;
      const guest = guests.length > 0 ? guests[(i + 1) % guests.length] : undefined;
      if (guest && rng.chance(0.2)) rep.users.push(principalOf(guest, 'Read'));
    }
    if (!personal) {
      for (let d = 0; d < rng.int(0, 2); d++)
        ws.dashboards.push({ id: rng.guid(), displayName: `${topic} dashboard${d > 0 ? ` ${d + 1}` : ''}`, isReadOnly: false });
      for (let d = 0; d < rng.int(0, 1); d++) ws.dataflows.push({ objectId: rng.guid(), name: `${topic} dataflow`, configuredBy: owner.userPrincipalName });
    }
    estate.workspaces.push(ws);
  }
  // Widely shared reports: a few published to the web, a few shared with the whole organisation.
  const reports = estate.workspaces.flatMap((w) => w.reports.map((r) => ({ w, r })));
  const shuffled = rng.shuffle(reports);
  const webCount = reports.length === 0 ? 0 : Math.max(1, Math.floor(reports.length / 6));
  const orgCount = reports.length === 0 ? 0 : Math.max(1, Math.floor(reports.length / 4));
  shuffled.slice(0, webCount).forEach(({ w, r }) => (r.publishedToWebBy = w.users[0]?.graphId ?? (members[0] as DirectoryUser).id));
  shuffled.slice(0, orgCount).forEach(
    ({ w, r }) =>
      (r.organizationLink = {
        sharerId: w.users[0]?.graphId ?? (members[0] as DirectoryUser).id,
        accessRight: rng.pick(['Read', 'ReadWrite', 'ReadReshare'] as const),
      }),
  );
  return estate;
}

function newReport(id: string, name: string, datasetId: string, owner: DirectoryUser, at: string, reportType: PowerBiReport['reportType']): PowerBiReport {
  return {
    id,
    name,
    datasetId,
    reportType,
    createdDateTime: at,
    modifiedDateTime: at,
    modifiedBy: owner.userPrincipalName,
    endorsement: null,
    sensitivityLabelId: null,
    users: [principalOf(owner, 'Owner')],
    publishedToWebBy: null,
    organizationLink: null,
  };
}

/** Expected results of a complete Power BI inventory collection. */
export interface PowerBiInventoryTruth {
  /** Workspaces not in state `Deleted` (personal ones included). */
  workspaces: number;
  personalWorkspaces: number;
  deletedWorkspaces: number;
  /** Over live workspaces. */
  reports: number;
  datasets: number;
  dashboards: number;
  dataflows: number;
  /** Live workspaces with at least one `Guest` user. */
  workspacesWithGuests: number;
  /** Live workspaces with a `Group` principal. */
  workspacesSharedWithGroups: number;
  /** Reports of live workspaces published to the web / shared with the whole organisation. */
  publishedToWeb: number;
  organizationLinks: number;
}

/** Recomputes the Power BI ground truth from the tenant data alone (zeros when the tenant has no Power BI model). */
export function powerBiInventoryGroundTruth(tenant: Tenant): PowerBiInventoryTruth {
  const all = tenant.powerBi?.workspaces ?? [];
  const live = all.filter((w) => w.state !== 'Deleted');
  const reports = live.flatMap((w) => w.reports);
  return {
    workspaces: live.length,
    personalWorkspaces: live.filter((w) => w.type === 'PersonalGroup').length,
    deletedWorkspaces: all.length - live.length,
    reports: reports.length,
    datasets: live.reduce((n, w) => n + w.datasets.length, 0),
    dashboards: live.reduce((n, w) => n + w.dashboards.length, 0),
    dataflows: live.reduce((n, w) => n + w.dataflows.length, 0),
    workspacesWithGuests: live.filter((w) => w.users.some((u) => u.userType === 'Guest')).length,
    workspacesSharedWithGroups: live.filter((w) => w.users.some((u) => u.principalType === 'Group')).length,
    publishedToWeb: reports.filter((r) => r.publishedToWebBy !== null).length,
    organizationLinks: reports.filter((r) => r.organizationLink !== null).length,
  };
}

/**
 * A change to a Power BI workspace, applied by {@link changePowerBiWorkspace}:
 * - `addReport`: a new report (on the workspace's first dataset, or a new one), optionally published to the web;
 * - `shareExternally`: adds a guest user (`userType: Guest`) with the given e-mail as a workspace Viewer;
 * - `delete`: the workspace goes to state `Deleted` (still listed by `modified`, returned as Deleted by scans);
 * - `rename`: a new display name.
 */
export type PowerBiWorkspaceChange =
  | { kind: 'addReport'; name?: string; publishToWeb?: boolean }
  | { kind: 'shareExternally'; email: string }
  | { kind: 'delete' }
  | { kind: 'rename'; name: string };

/** Thrown by {@link changePowerBiWorkspace} for an unknown workspace (404) or a malformed change (400). */
export class PowerBiChangeError extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Applies a change to a workspace and bumps its `modifiedAt` to `nowMs` (so the next `workspaces/modified` with an
 * earlier `modifiedSince` lists it). Returns the workspace. Throws {@link PowerBiChangeError}.
 */
export function changePowerBiWorkspace(tenant: Tenant, workspaceId: string, change: PowerBiWorkspaceChange, nowMs: number): PowerBiWorkspace {
  const ws = tenant.powerBi?.workspaces.find((w) => w.id === workspaceId);
  if (!ws) throw new PowerBiChangeError(404, `no Power BI workspace '${workspaceId}' in tenant ${tenant.id}`);
  const at = iso(nowMs);
  const owner = tenant.users.find((u) => u.id === ws.users[0]?.graphId) ?? tenant.users.find((u) => u.userType === 'Member');
  switch (change?.kind) {
    case 'addReport': {
      if (!owner) throw new PowerBiChangeError(400, 'the tenant has no member user to own the report');
      let dataset = ws.datasets[0];
      if (!dataset) {
        dataset = {
          id: randomUUID(),
          name: `${ws.name} model`,
          configuredBy: owner.userPrincipalName,
          createdDate: at,
          targetStorageMode: 'Import',
          isEffectiveIdentityRequired: false,
          isEffectiveIdentityRolesRequired: false,
          endorsement: null,
          sensitivityLabelId: null,
          datasourceIds: [],
          users: [principalOf(owner, 'ReadWriteReshareExplore')],
        };
        ws.datasets.push(dataset);
      }
      const report = newReport(randomUUID(), change.name ?? `${ws.name} report ${ws.reports.length + 1}`, dataset.id, owner, at, 'PowerBIReport');
      if (change.publishToWeb) report.publishedToWebBy = owner.id;
      ws.reports.push(report);
      break;
    }
    case 'shareExternally': {
      if (typeof change.email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(change.email)) throw new PowerBiChangeError(400, "shareExternally needs an 'email'");
      const id = randomUUID();
      ws.users.push({
        displayName: change.email,
        emailAddress: change.email,
        identifier: `${change.email.replace('@', '_')}#EXT#@${tenant.domains[0] ?? 'tenant.onmicrosoft.com'}`,
        graphId: id,
        principalType: 'User',
        userType: 'Guest',
        accessRight: 'Viewer',
      });
      break;
    }
    case 'delete':
      ws.state = 'Deleted';
      break;
    case 'rename':
      if (typeof change.name !== 'string' || change.name === '') throw new PowerBiChangeError(400, "rename needs a 'name'");
      ws.name = change.name;
      break;
    default:
      throw new PowerBiChangeError(400, "change.kind must be one of 'addReport', 'shareExternally', 'delete', 'rename'");
  }
  ws.modifiedAt = at;
  return ws;
}

function principalJson(p: PowerBiPrincipal, rightField: string): Record<string, unknown> {
  return {
    displayName: p.displayName,
    ...(p.emailAddress !== undefined ? { emailAddress: p.emailAddress } : {}),
    [rightField]: p.accessRight,
    identifier: p.identifier,
    graphId: p.graphId,
    principalType: p.principalType,
    ...(p.userType ? { userType: p.userType } : {}),
  };
}

/** Options of {@link scanResultJson}: the `getInfo` query flags. */
export interface ScanOptions {
  lineage: boolean;
  datasourceDetails: boolean;
  getArtifactUsers: boolean;
}

/**
 * The GetScanResult body for the given workspaces (ids not in the model are left out, as Power BI does for unknown
 * ids): `{workspaces:[…], datasourceInstances:[…]}`. Deleted workspaces come back with `state: "Deleted"` and no items.
 */
export function scanResultJson(estate: PowerBiEstate, workspaceIds: string[], options: ScanOptions): Record<string, unknown> {
  const wanted = new Set(workspaceIds.map((id) => id.toLowerCase()));
  const workspaces = estate.workspaces.filter((w) => wanted.has(w.id));
  const usedSources = new Set<string>();
  const out = workspaces.map((w) => {
    if (w.state === 'Deleted') return { id: w.id, name: w.name, type: w.type, state: w.state, isOnDedicatedCapacity: w.isOnDedicatedCapacity };
    const users = (list: PowerBiPrincipal[], field: string) => (options.getArtifactUsers ? { users: list.map((p) => principalJson(p, field)) } : {});
    return {
      id: w.id,
      name: w.name,
      ...(w.description ? { description: w.description } : {}),
      type: w.type,
      state: w.state,
      isOnDedicatedCapacity: w.isOnDedicatedCapacity,
      ...(w.capacityId ? { capacityId: w.capacityId } : {}),
      defaultDatasetStorageFormat: 'Small',
      reports: w.reports.map((r) => ({
        id: r.id,
        name: r.name,
        datasetId: r.datasetId,
        createdDateTime: r.createdDateTime,
        modifiedDateTime: r.modifiedDateTime,
        modifiedBy: r.modifiedBy,
        reportType: r.reportType,
        ...(r.endorsement
          ? { endorsementDetails: { endorsement: r.endorsement, ...(r.endorsement === 'Certified' ? { certifiedBy: r.modifiedBy } : {}) } }
          : {}),
        ...(r.sensitivityLabelId ? { sensitivityLabel: { labelId: r.sensitivityLabelId } } : {}),
        ...users(r.users, 'reportUserAccessRight'),
      })),
      dashboards: w.dashboards.map((d) => ({ id: d.id, displayName: d.displayName, isReadOnly: d.isReadOnly, tiles: [] })),
      datasets: w.datasets.map((d) => {
        if (options.datasourceDetails) d.datasourceIds.forEach((id) => usedSources.add(id));
        return {
          id: d.id,
          name: d.name,
          configuredBy: d.configuredBy,
          createdDate: d.createdDate,
          targetStorageMode: d.targetStorageMode,
          isEffectiveIdentityRequired: d.isEffectiveIdentityRequired,
          isEffectiveIdentityRolesRequired: d.isEffectiveIdentityRolesRequired,
          ...(d.endorsement ? { endorsementDetails: { endorsement: d.endorsement } } : {}),
          ...(d.sensitivityLabelId ? { sensitivityLabel: { labelId: d.sensitivityLabelId } } : {}),
          ...(options.datasourceDetails ? { datasourceUsages: d.datasourceIds.map((id) => ({ datasourceInstanceId: id })) } : {}),
          ...(options.lineage ? { upstreamDataflows: [] } : {}),
          ...users(d.users, 'datasetUserAccessRight'),
        };
      }),
      dataflows: w.dataflows.map((f) => ({ objectId: f.objectId, name: f.name, configuredBy: f.configuredBy })),
      datamarts: [],
      ...users(w.users, 'groupUserAccessRight'),
    };
  });
  const datasourceInstances = estate.datasources
    .filter((d) => usedSources.has(d.datasourceId))
    .map((d) => ({
      datasourceType: d.datasourceType,
      connectionDetails: d.connectionDetails,
      datasourceId: d.datasourceId,
      ...(d.gatewayId ? { gatewayId: d.gatewayId } : {}),
    }));
  return { workspaces: out, datasourceInstances, misconfiguredDatasourceInstances: [] };
}

/**
 * The artifact access entries of one widely-shared kind over live workspaces, ordered by report id:
 * `{artifactId, displayName, artifactType: "Report", accessRight, shareType: "PublishToWeb"|"Link", sharer}`.
 */
export function widelySharedEntries(tenant: Tenant, kind: 'publishedToWeb' | 'linksSharedToWholeOrganization'): Record<string, unknown>[] {
  const byId = new Map(tenant.users.map((u) => [u.id, u]));
  const out: Record<string, unknown>[] = [];
  for (const w of tenant.powerBi?.workspaces ?? []) {
    if (w.state === 'Deleted') continue;
    for (const r of w.reports) {
      const sharerId = kind === 'publishedToWeb' ? r.publishedToWebBy : r.organizationLink?.sharerId;
      if (!sharerId) continue;
      const u = byId.get(sharerId);
      out.push({
        artifactId: r.id,
        displayName: r.name,
        artifactType: 'Report',
        accessRight: kind === 'publishedToWeb' ? 'None' : (r.organizationLink?.accessRight ?? 'Read'),
        shareType: kind === 'publishedToWeb' ? 'PublishToWeb' : 'Link',
        sharer: u
          ? { displayName: u.displayName, emailAddress: u.mail ?? u.userPrincipalName, identifier: u.userPrincipalName, graphId: u.id, principalType: 'User' }
          : { displayName: 'Unknown', identifier: sharerId, graphId: sharerId, principalType: 'None' },
      });
    }
  }
  return out.sort((a, b) => String(a.artifactId).localeCompare(String(b.artifactId)));
}
