// Shapes of the Vigil REST API, as the portal uses them. Every response shape comes from web/src/api-types.ts, which
// is generated from the OpenAPI document (/api/docs/openapi.json) of the zod schemas in src/contract: never restate a
// field here; change the schema and regenerate (`node --import tsx scripts/api-types.ts`).
import type { components, paths } from './api-types.ts';

export type {
  AgentDetail,
  Alert,
  ConsentLink,
  Dashboard,
  EnvironmentAccess,
  Finding,
  FindingDetail,
  GrantResult,
  Integration,
  IntegrationDetail,
  InventoryItem,
  LoginResult,
  Registration,
  Run,
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

/** A page of a list: the items and the cursor of the next page (null on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

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

/**
 * Data of the `progress` event of `/api/v1/integrations/{id}/runs/live` (server-sent events, described in the
 * OpenAPI document's text but not as a schema): the run and its counters.
 */
export interface LiveProgress {
  run: Schemas['Run'];
  progress?: Schemas['RunProgress'];
  /** Older name of `progress`, still accepted. */
  checkpoints?: Schemas['RunProgress'];
}
