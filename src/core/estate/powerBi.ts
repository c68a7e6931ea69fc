/**
 * Normalised attributes of the Power BI inventory streams (`powerBiWorkspaces`, `powerBiSharedLinks`), read from the
 * Power BI admin REST API: the scanner flow (GetModifiedWorkspaces → PostWorkspaceInfo → GetScanStatus →
 * GetScanResult) and the widely-shared-artifact lists (PublishedToWeb, LinksSharedToWholeOrganization).
 *
 * Sources: learn.microsoft.com/rest/api/power-bi/admin/workspace-info-get-scan-result (WorkspaceInfoResponse:
 * `workspaces[]` with `users[].groupUserAccessRight`, `reports[]`, `datasets[]` with `datasourceUsages`,
 * `dashboards[]`, `dataflows[]`; top-level `datasourceInstances[]`), …/widely-shared-artifacts-published-to-web and
 * …/widely-shared-artifacts-links-shared-to-whole-organization (ArtifactAccessEntry: `artifactId`, `displayName`,
 * `artifactType`, `accessRight`, `shareType`, `sharer`), learn.microsoft.com/fabric/governance/metadata-scanning-overview.
 * UNCONFIRMED: the `userType` values beyond `Member`/`Guest` (treated as external when not `Member`).
 */

/** A principal with access to a workspace (`GroupUser` of a scan result), compacted. */
export interface PowerBiPrincipalSummary {
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
export interface PowerBiDatasetSummary {
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

/** Which widely-shared list an artifact came from. */
export type PowerBiShareKind = 'publishedToWeb' | 'organizationLink';

/**
 * An artifact published to the web (anyone with the link, no sign-in) or shared with a link to the whole organisation.
 * `id` = `{kind}/{artifactId}`; slice `*`.
 */
export interface PowerBiSharedLinkAttrs {
  kind: PowerBiShareKind;
  artifactId: string;
  displayName: string | null;
  /** `Report`, `Dashboard`, … */
  artifactType: string | null;
  /** `shareType`: `PublishToWeb` or `Link`. */
  shareType: string | null;
  /** The access the link grants: `None` for publish to web; `Read`, `ReadWrite`, `ReadReshare`… for links. */
  accessRight: string | null;
  /** Who created the embed code / link. */
  sharer: { emailAddress: string | null; identifier: string | null; graphId: string | null; principalType: string | null } | null;
}
