// Shapes of the Vigil REST API (docs/api.md; the OpenAPI document at /api/docs/openapi.json is the reference).

export type Role = 'admin' | 'viewer';
export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'info';
export const SEVERITIES: Severity[] = ['critical', 'high', 'medium', 'low', 'info'];

export interface User {
  id: string;
  email: string;
  displayName: string | null;
  role: Role;
}
export interface Organization {
  id: string;
  name: string;
}
export interface Session {
  /** null when the caller is an API key (never in the portal, which signs in with a session cookie). */
  user: User | null;
  organization: Organization;
}
export interface LoginResult {
  user: User;
  organization: Organization;
  csrfToken: string;
}

export interface ApiErrorBody {
  error: { code: string; message: string; field?: string; remediation?: string };
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface Run {
  id: string;
  integrationId: string;
  status: string;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  counts: Record<string, unknown> | null;
  errors: unknown[] | null;
}

export type IntegrationMode = 'customer-app' | 'managed-app';

export interface Integration {
  id: string;
  name: string;
  mode: IntegrationMode;
  tenantId: string;
  clientId: string | null;
  servicePrincipalObjectId: string | null;
  secretExpiresAt: string | null;
  secretDaysLeft: number | null;
  createdAt: string;
  verifiedAt: string | null;
  credentialState: string | null;
  credentialError: string | null;
  secretWarning: string | null;
  lastRun: { id: string; status: string; startedAt: string | null; finishedAt: string | null } | null;
}

export interface Capability {
  id: string;
  title: string;
  api: string;
  status: 'granted' | 'missing';
  grantedBy?: string | string[] | null;
  add?: string | string[] | null;
  /** For a capability judged by the API's answer (Power BI): what it answered and the fix. */
  detail?: string | null;
}

export interface EnvironmentAccess {
  id: string;
  name: string | null;
  dataverse: boolean | string | null;
  agentsReadable: boolean | null;
  reason?: string | null;
}

export interface Verification {
  verified: boolean;
  permissionList: unknown;
  capabilities: Capability[];
  missingPermissions: { api: string; permission: string; capability: string }[];
  managementApp: { registered: boolean | null; detail: string };
  environments: EnvironmentAccess[];
  warnings: string[];
  checkedAt: string;
}

export type StepState = 'done' | 'incomplete' | 'missing' | 'info';
export interface Step {
  order: number;
  title: string;
  state: StepState;
  observed: string;
  fix?: string | null;
}

export interface IntegrationDetail {
  integration: Integration;
  verification: Verification | null;
  steps: Step[];
  safelist: { region: string; name: string; egressIps: string[] };
}

export interface ConsentLink {
  url: string;
  tenantId: string;
  clientId: string;
  redirectUri: string;
  expiresAt: string;
  instructions: string[];
}

export interface Registration {
  registered: boolean | null;
  detail: string;
  applicationId: string;
  powershell: string[];
  api: { method: string; url: string; body?: unknown; note?: string };
}

export interface GrantResult {
  environmentId: string;
  name: string | null;
  result: string;
  via?: string | null;
  reason?: string | null;
  fix?: string | null;
}

export interface Progress {
  done: number;
  errored: number;
  records: number;
  streams?: Record<string, { done: number; errored: number; records: number }>;
}
/** Data of the `progress` event (the server names the counters `progress`; `checkpoints` is accepted too). */
export interface LiveProgress {
  run: Run;
  progress?: Progress;
  checkpoints?: Progress;
}

export interface InventoryItem {
  integrationId: string;
  id: string;
  name: string | null;
  environmentId: string | null;
  attributes: Record<string, unknown>;
  firstSeenAt: string;
  lastSeenAt: string;
}

export const INVENTORY_KINDS = [
  { id: 'agents', label: 'Agents' },
  { id: 'apps', label: 'Apps' },
  { id: 'flows', label: 'Flows' },
  { id: 'connectors', label: 'Connectors' },
  { id: 'connections', label: 'Connections' },
  { id: 'environments', label: 'Environments' },
  { id: 'users', label: 'Users' },
  { id: 'groups', label: 'Groups' },
  { id: 'powerbi-workspaces', label: 'Power BI workspaces' },
  { id: 'foundry-projects', label: 'Foundry projects' },
] as const;
export type InventoryKind = (typeof INVENTORY_KINDS)[number]['id'];

export interface Suppression {
  reason: string;
  author: string | null;
  expiresAt: string | null;
  createdAt: string;
}

export interface Finding {
  id: string;
  integrationId: string;
  checkId: string;
  title: string | null;
  severity: Severity;
  resourceType: string;
  resourceId: string;
  resourceName: string | null;
  status: string;
  detail: Record<string, unknown> | null;
  firstSeenAt: string;
  lastSeenAt: string;
  resolvedAt: string | null;
  suppression: Suppression | null;
}

export interface FindingDetail extends Finding {
  history: { event: string; at: string; detail: unknown }[];
  check: { title: string; risk: string; remediation: string; references: string[] } | null;
}

export interface AgentDetail {
  agent: {
    id: string;
    name: string | null;
    environmentId: string;
    schemaName: string | null;
    authenticationMode: number | string | null;
    authenticationTrigger: number | string | null;
    accessControlPolicy: number | string | null;
    publishedOn: string | null;
    modifiedOn: string | null;
    createdOn: string | null;
    stateCode: number | null;
    statusCode: number | null;
    raw: Record<string, unknown> | null;
  };
  environment: { id: string; name: string | null } | null;
  owner: { id: string; name: string | null } | null;
  settings: Record<string, unknown> | null;
  components: { id: string; name: string | null; attributes: Record<string, unknown> }[];
  findings: Finding[];
  events: { id: string; creationTime: string; operation: string | null; userId: string | null; clientIp: string | null }[];
}

export interface Dashboard {
  severityOverTime: ({ date: string } & Record<Severity, number>)[];
  riskiestAgents: {
    integrationId: string;
    agentId: string;
    environmentId: string | null;
    name: string | null;
    openFindings: number;
    score?: number;
    reach?: string;
    reasons?: string[];
    highestSeverity?: Severity | null;
  }[];
  /** What was not evaluated and why: per integration, check and reason; `resources` are the first (≤ 10) by name. */
  coverage: {
    integrationId: string;
    integrationName: string;
    checkId: string;
    title: string;
    notEvaluated: number;
    reason: string | null;
    resources: { resourceType: string; resourceId: string; resourceName: string | null }[];
  }[];
  lastCollections: { integrationId: string; name: string; run: Run | null }[];
}

export type AlertStatus = 'new' | 'acknowledged' | 'closed';
export interface Alert {
  id: string;
  integrationId: string;
  ruleId: string;
  severity: Severity | string;
  status: AlertStatus;
  title: string;
  detail: unknown;
  windowStart: string | null;
  windowEnd: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Region {
  id: string;
  name: string;
  egressIps: string[];
  apiUrl: string;
  portalUrl: string;
}
