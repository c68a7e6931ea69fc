// Shapes of the Vigil REST API, as the portal uses them. Every response shape comes from web/src/api-types.ts, which
// is generated from the OpenAPI document (/api/docs/openapi.json) of the zod schemas in src/contract: never restate a
// field here; change the schema and regenerate (`node --import tsx scripts/api-types.ts`).
import type { components, paths } from './api-types.ts';

export type {
  AgentDetail,
  Alert,
  AlertDetail,
  ComplianceFramework,
  ComplianceItem,
  ComplianceView,
  Event,
  EventDetail,
  ConsentLink,
  ContainmentAction,
  ContainmentStarted,
  Dashboard,
  EnvironmentAccess,
  Finding,
  FindingDetail,
  GrantResult,
  Integration,
  IntegrationDetail,
  InventoryItem,
  LoginResult,
  ProtectionPolicies,
  Registration,
  Run,
  RunDetail,
  Session,
  Severity,
} from './api-types.ts';

type Schemas = components['schemas'];

/** The error body of every failure. */
export type ApiErrorBody = Schemas['ApiError'];
/** Mode A (customer-created app) or Mode B (operator-managed app). */
export type IntegrationMode = Schemas['Integration']['mode'];
/** One step of an integration's setup checklist. */
export type Step = Schemas['SetupStep'];
/** The states an alert can be set to. */
export type AlertStatus = NonNullable<NonNullable<paths['/api/v1/alerts']['get']['parameters']['query']>['status']>;
/** The inventory kinds of `/api/v1/inventory/{kind}`. */
export type InventoryKind = paths['/api/v1/inventory/{kind}']['get']['parameters']['path']['kind'];

/** The JSON a successful `method` on `path` answers (its 200, 201 or 202 response), as the OpenAPI document says. */
type Answer<P extends keyof paths, M extends 'get' | 'post' | 'put' | 'delete'> = paths[P][M] extends {
  responses: infer R;
}
  ? { [S in keyof R]: S extends 200 | 201 | 202 ? (R[S] extends { content: { 'application/json': infer J } } ? J : never) : never }[keyof R]
  : never;

/** `GET /integrations`: a page of integrations. */
export type IntegrationPage = Answer<'/api/v1/integrations', 'get'>;
/** `GET /findings`: a page of findings. */
export type FindingPage = Answer<'/api/v1/findings', 'get'>;
/** The orders `GET /findings` offers. */
export type FindingSort = NonNullable<NonNullable<paths['/api/v1/findings']['get']['parameters']['query']>['sort']>;
/** `POST /findings/suppression` and `/findings/suppression/lift`: the findings as they now stand and how many changed. */
export type FindingsBulkAnswer = Answer<'/api/v1/findings/suppression', 'post'>;
/** `GET /protection/{integrationId}/containment`: containment actions, newest first. */
export type ContainmentActionList = Answer<'/api/v1/protection/{integrationId}/containment', 'get'>;
/** `GET /alerts`: a page of alerts. */
export type AlertPage = Answer<'/api/v1/alerts', 'get'>;
/** The orders `GET /alerts` offers. */
export type AlertSort = NonNullable<NonNullable<paths['/api/v1/alerts']['get']['parameters']['query']>['sort']>;
/** `POST /alerts/status`: the alerts as they now stand and how many changed. */
export type AlertsBulkAnswer = Answer<'/api/v1/alerts/status', 'post'>;
/** `GET /events`: a page of audit events. */
export type EventPage = Answer<'/api/v1/events', 'get'>;
/** `GET /inventory/{kind}`: a page of inventory items. */
export type InventoryPage = Answer<'/api/v1/inventory/{kind}', 'get'>;
/** The orders `GET /inventory/{kind}` offers. */
export type InventorySort = NonNullable<NonNullable<paths['/api/v1/inventory/{kind}']['get']['parameters']['query']>['sort']>;
/** `GET /integrations/{id}/runs`: a page of runs, newest first. */
export type RunPage = Answer<'/api/v1/integrations/{id}/runs', 'get'>;
/** `GET /integrations/{id}/environments`: System Administrator access per environment. */
export type EnvironmentList = Answer<'/api/v1/integrations/{id}/environments', 'get'>;
/** `POST /integrations/{id}/environments/grant`: the outcome per environment. */
export type GrantList = Answer<'/api/v1/integrations/{id}/environments/grant', 'post'>;
/** `POST /integrations/{id}/runs`: whether a new collection was queued. */
export type RunQueued = Answer<'/api/v1/integrations/{id}/runs', 'post'>;

/** `GET /checks`: the check catalogue. */
export type CheckList = Answer<'/api/v1/checks', 'get'>;
/** One check of the catalogue. */
export type Check = Schemas['Check'];
/** `GET /organization/users`: the organization's portal users. */
export type PortalUserList = Answer<'/api/v1/organization/users', 'get'>;
/** `GET /organization/api-keys`: the organization's API keys (never the keys). */
export type ApiKeyList = Answer<'/api/v1/organization/api-keys', 'get'>;
/** `POST /organization/api-keys`: the created key, shown once. */
export type CreatedApiKey = Answer<'/api/v1/organization/api-keys', 'post'>;
/** `GET /organization/sinks`: the deployment's SIEM sinks. */
export type SinkList = Answer<'/api/v1/organization/sinks', 'get'>;
/** `POST /organization/sinks/test`: the outcome per sink. */
export type SinkTest = Answer<'/api/v1/organization/sinks/test', 'post'>;

/** `GET /protection`: the organization's integrations with their threat-detection endpoints. */
export type ProtectionList = Answer<'/api/v1/protection', 'get'>;
/** `GET /protection/{integrationId}`: the set-up report (steps, environments with analyses, problems). */
export type ProtectionSetupReport = Schemas['ProtectionSetupReport'];
/** `GET /protection/{integrationId}/steps`: a page of agent steps, newest first (or oldest first), with the total. */
export type AgentStepPage = Answer<'/api/v1/protection/{integrationId}/steps', 'get'>;
/** One agent step (a tool call Copilot Studio asked about, and Vigil's answer). */
export type AgentStep = Schemas['AgentStep'];
/** `GET /protection/{integrationId}/conversations/{conversationId}`: a conversation's steps, oldest first. */
export type ConversationTimeline = Schemas['ConversationTimeline'];
/** `GET /protection/summary`: per integration the decisions of the last 24 hours and 7 days, and the steps over time. */
export type ProtectionSummary = Schemas['ProtectionSummary'];
/** `GET /protection/{integrationId}/steps/facets`: the detectors, agents and environments the steps filter by, named. */
export type AgentStepFacets = Schemas['AgentStepFacets'];
/** The outcomes the steps list is filtered by. */
export type StepOutcome = NonNullable<NonNullable<paths['/api/v1/protection/{integrationId}/steps']['get']['parameters']['query']>['outcome']>;

/** Severities, most severe first (the order of the API's enumeration). */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const satisfies readonly Schemas['Severity'][];

/** Inventory kinds in the portal's order, with their labels. */
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
] as const satisfies readonly { id: InventoryKind; label: string }[];

// A kind the API adds without a label here fails to compile: the tuple must name every kind (and every severity).
const everyKind: Record<Exclude<InventoryKind, (typeof INVENTORY_KINDS)[number]['id']>, never> = {};
const everySeverity: Record<Exclude<Schemas['Severity'], (typeof SEVERITIES)[number]>, never> = {};
void everyKind;
void everySeverity;
