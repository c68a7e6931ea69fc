/**
 * Table types for Kysely. Timestamps are ISO 8601 UTC text; booleans are 0/1 integers; JSON is text.
 * The migrations in `migrations/` are the source of truth; these types mirror them.
 */

interface InventoryColumns {
  integration_id: string;
  raw: string;
  first_seen_at: string;
  last_seen_at: string;
  last_seen_run: string;
  deleted_at: string | null;
}

export interface IntegrationsTable {
  id: string;
  name: string;
  mode: string;
  tenant_id: string;
  client_id: string;
  sp_object_id: string | null;
  /** JSON of an AES-256-GCM envelope; never the plain secret. */
  secret_envelope: string | null;
  secret_expires_at: string | null;
  verification: string | null;
  verified_at: string | null;
  created_at: string;
  updated_at: string;
  /** `ok`, `expired` (AADSTS7000222) or `rejected` (another credential refusal). */
  credential_state: string;
  /** Why the credentials were refused, with the fix (no secret). */
  credential_error: string | null;
  secret_rotated_at: string | null;
  /** The organization that owns the integration and everything collected for it (migration 0010). */
  organization_id: string | null;
}

export interface CollectionRunsTable {
  id: string;
  integration_id: string;
  status: string;
  started_at: string;
  finished_at: string | null;
  duration_ms: number | null;
  attempts: number;
  owner_host: string | null;
  owner_pid: number | null;
  heartbeat_at: string | null;
  counts: string | null;
  errors: string | null;
  http_stats: string | null;
}

export interface CheckpointsTable {
  run_id: string;
  stream: string;
  slice_key: string;
  status: string;
  cursor: string | null;
  records: number;
  error_code: string | null;
  error_message: string | null;
  updated_at: string;
  /**
   * How the slice is (or was) read in this run: `full` or `delta` (migration 0011); null for rows written before it
   * and for slices never read (a stream skipped for a missing permission or a failed parent).
   */
  read_mode: string | null;
}

export interface DirectoryUsersTable extends InventoryColumns {
  id: string;
  display_name: string | null;
  user_principal_name: string | null;
  mail: string | null;
  account_enabled: number | null;
  user_type: string | null;
  created_date_time: string | null;
}

interface DirectoryGroupsTable extends InventoryColumns {
  id: string;
  display_name: string | null;
  mail: string | null;
  security_enabled: number | null;
  mail_enabled: number | null;
  group_types: string | null;
}

interface GroupMembershipsTable extends InventoryColumns {
  group_id: string;
  member_id: string;
  member_type: string;
}

export interface EnvironmentsTable extends InventoryColumns {
  id: string;
  display_name: string | null;
  sku: string | null;
  is_default: number;
  region: string | null;
  dataverse_url: string | null;
  state: string | null;
}

export interface DataverseUsersTable extends InventoryColumns {
  environment_id: string;
  id: string;
  full_name: string | null;
  aad_object_id: string | null;
  application_id: string | null;
  is_disabled: number | null;
}

export interface AgentsTable extends InventoryColumns {
  environment_id: string;
  id: string;
  name: string | null;
  schema_name: string | null;
  authentication_mode: number | null;
  authentication_trigger: number | null;
  access_control_policy: number | null;
  owner_id: string | null;
  published_on: string | null;
  modified_on: string | null;
  created_on: string | null;
  state_code: number | null;
  status_code: number | null;
}

/**
 * One turn of a Copilot Studio conversation transcript (migration 0017): a user message, a bot reply or a tool call.
 * `text` is redacted (secrets and personal data masked); `finding_types` and `markers` are JSON text; `injection` and
 * `jailbreak` are confidences 0–1 set with `evaluated_at` by the transcript post-processing (null until then).
 */
export interface TranscriptTurnsTable extends InventoryColumns {
  environment_id: string;
  id: string;
  transcript_id: string;
  conversation_id: string | null;
  agent_id: string | null;
  agent_name: string | null;
  user_id: string | null;
  channel_id: string | null;
  turn_at: string | null;
  role: string;
  tool_name: string | null;
  text: string;
  text_length: number;
  secrets: number;
  personal: number;
  finding_types: string;
  transcript_modified_on: string | null;
  injection: number | null;
  jailbreak: number | null;
  markers: string | null;
  evaluated_at: string | null;
}

export interface CheckResultsTable {
  integration_id: string;
  check_id: string;
  resource_type: string;
  resource_id: string;
  resource_name: string | null;
  status: string;
  reason: string | null;
  run_id: string | null;
  evaluated_at: string;
}

/** One integration's result counts on one day (UTC), from the day's last evaluation (migration 0018). */
interface PostureDaysTable {
  integration_id: string;
  /** YYYY-MM-DD (UTC). */
  day: string;
  passed: number;
  failed: number;
  not_evaluated: number;
  evaluated_at: string;
}

export interface FindingsTable {
  id: string;
  integration_id: string;
  check_id: string;
  severity: string;
  resource_type: string;
  resource_id: string;
  resource_name: string | null;
  status: string;
  detail: string | null;
  first_seen_at: string;
  last_seen_at: string;
  resolved_at: string | null;
}

/** A finding hidden from the open list until it expires (or is lifted), with who decided it and why. */
export interface FindingSuppressionsTable {
  finding_id: string;
  reason: string;
  author: string;
  /** ISO 8601 UTC; null = until lifted. */
  expires_at: string | null;
  created_at: string;
}

/** One step of a finding's lifecycle. */
export interface FindingHistoryTable {
  id: string;
  finding_id: string;
  /** ISO 8601 UTC. */
  at: string;
  /** `opened`, `resolved`, `reopened`, `suppressed`, `unsuppressed`, `suppression_expired`. */
  event: string;
  /** JSON: the reason, author, expiry or check reason of the step. */
  detail: string | null;
}

/**
 * One object of the estate streams (migration 0008): `stream` names the kind, `slice_key` the parent it was read
 * under (environment name, user id or `*`), `attrs` the JSON of its normalised fields.
 */
interface EstateObjectsTable extends InventoryColumns {
  stream: string;
  id: string;
  slice_key: string;
  name: string | null;
  attrs: string;
}

/** The delta link a delta-capable stream slice resumes from in its next round. */
interface StreamStatesTable {
  integration_id: string;
  stream: string;
  slice_key: string;
  /** Absolute `@odata.deltaLink` (holds a state token, no credential). */
  delta_link: string;
  /** The run whose complete round issued it. */
  run_id: string | null;
  updated_at: string;
}

export interface CollectionSchedulesTable {
  integration_id: string;
  /** Random offset added to every cron slot of this integration, seconds. */
  jitter_seconds: number;
  next_due_at: string;
  last_enqueued_at: string | null;
}

interface UpstreamBudgetsTable {
  /** The tenant the limit applies to, or `*` for a limit per app across all tenants. */
  tenant_id: string;
  /** The budget's name (`graphIdentity`, `graphTeams`, `dataverse:{host hash}`, …). */
  api: string;
  /** Tokens left in the bucket (resource units or requests). */
  tokens: number;
  /** When `tokens` was computed, milliseconds since the Unix epoch. */
  updated_ms: number | string;
  /** No request before this instant (after a 429 seen by any worker), milliseconds since the Unix epoch. */
  blocked_until_ms: number | string;
  /** Share of the documented rate currently allowed, 1/16–1: halved by a 429, recovering additively (migration 0013). */
  rate_factor: number;
}

export interface AuditEventsTable {
  integration_id: string;
  /** The record's `Id` (GUID): the identity that drops duplicates. */
  id: string;
  content_type: string;
  record_type: number | null;
  /** `CreationTime` as ISO 8601 UTC. */
  creation_time: string;
  operation: string | null;
  workload: string | null;
  user_id: string | null;
  user_type: number | null;
  client_ip: string | null;
  object_id: string | null;
  organization_id: string | null;
  /** The segment holding the raw record, and the record's position in it (see `audit_raw_segments`). */
  raw_segment_id: string;
  raw_index: number;
  ingested_at: string;
}

/** Raw audit records: one content blob's text as received (a JSON array), compressed (src/store/segments.ts). */
interface AuditRawSegmentsTable {
  integration_id: string;
  id: string;
  content_type: string;
  /** The Management Activity `contentId` the records came in (null for rows migrated from 0004). */
  content_id: string | null;
  /** `br` (Brotli). */
  codec: string;
  /** Records in the segment, duplicates and malformed ones included. */
  records: number;
  data: Buffer;
  stored_at: string;
}

/** The client IPs a user's audited activity came from (detections: "an IP never seen for the user"). */
export interface AuditUserIpsTable {
  integration_id: string;
  /** Lower-cased `UserId`. */
  user_key: string;
  client_ip: string;
  /** ISO 8601 UTC `CreationTime` of the first and last events seen from this IP. */
  first_seen: string;
  last_seen: string;
}

/** How far the detections have evaluated an integration's events. */
interface DetectionWatermarksTable {
  integration_id: string;
  /** Events with `ingested_at` at or before this instant (ISO 8601 UTC) have been evaluated. */
  evaluated_through: string;
  updated_at: string;
}

export interface AuditCursorsTable {
  integration_id: string;
  content_type: string;
  /** Content created before this instant has been stored (ISO 8601 UTC). Never moves backwards. */
  cursor_time: string;
  /** `enabled`, or why the content type is unavailable. */
  subscription: string | null;
  last_error: string | null;
  updated_at: string;
}

export interface AlertsTable {
  id: string;
  integration_id: string;
  rule_id: string;
  severity: string;
  /** `new`, `acknowledged` or `closed`. */
  status: string;
  title: string;
  /** Identifies the same alert across runs (e.g. content type + window). */
  dedupe_key: string;
  detail: string | null;
  window_start: string | null;
  window_end: string | null;
  created_at: string;
  updated_at: string;
}

interface AlertEventsTable {
  alert_id: string;
  event_id: string;
}

/** One status change of an alert (migration 0016). */
interface AlertHistoryTable {
  id: string;
  alert_id: string;
  /** ISO 8601 UTC. */
  at: string;
  from_status: string;
  to_status: string;
  /** Who changed it (the person or API key named to Vigil); null when no caller made it. */
  actor: string | null;
}

/** One event waiting for (or delivered to) one SIEM sink (migration 0009). */
export interface SinkOutboxTable {
  id: string;
  /** `webhook` or `syslog`. */
  sink: string;
  integration_id: string;
  /** `finding.opened`, `finding.reopened`, `finding.resolved`, `alert.raised`. */
  event_type: string;
  /** The finding or alert id. */
  subject_id: string;
  severity: string;
  /** OCSF Detection Finding JSON. */
  payload: string;
  created_at: string;
  /** Delivery attempts so far (each may include the sink's own bounded retries). */
  attempts: number;
  last_attempt_at: string | null;
  last_error: string | null;
  /** When the sink accepted it; null while pending. */
  delivered_at: string | null;
}

/** The database. */
export interface Database {
  integrations: IntegrationsTable;
  collection_runs: CollectionRunsTable;
  checkpoints: CheckpointsTable;
  directory_users: DirectoryUsersTable;
  directory_groups: DirectoryGroupsTable;
  group_memberships: GroupMembershipsTable;
  environments: EnvironmentsTable;
  dataverse_users: DataverseUsersTable;
  agents: AgentsTable;
  estate_objects: EstateObjectsTable;
  check_results: CheckResultsTable;
  posture_days: PostureDaysTable;
  findings: FindingsTable;
  stream_states: StreamStatesTable;
  finding_suppressions: FindingSuppressionsTable;
  finding_history: FindingHistoryTable;
  collection_schedules: CollectionSchedulesTable;
  upstream_budgets: UpstreamBudgetsTable;
  audit_events: AuditEventsTable;
  audit_raw_segments: AuditRawSegmentsTable;
  audit_user_ips: AuditUserIpsTable;
  detection_watermarks: DetectionWatermarksTable;
  audit_cursors: AuditCursorsTable;
  alerts: AlertsTable;
  alert_events: AlertEventsTable;
  alert_history: AlertHistoryTable;
  sink_outbox: SinkOutboxTable;
  organizations: OrganizationsTable;
  portal_users: PortalUsersTable;
  portal_sessions: PortalSessionsTable;
  api_keys: ApiKeysTable;
  tenant_bindings: TenantBindingsTable;
  consent_flows: ConsentFlowsTable;
  protection_endpoints: ProtectionEndpointsTable;
  protection_policies: ProtectionPoliciesTable;
  agent_steps: AgentStepsTable;
  containment_actions: ContainmentActionsTable;
  transcript_turns: TranscriptTurnsTable;
}

/** A customer organization: owns integrations, portal users and API keys (migration 0010). */
export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: string;
}

/** A person who signs in to the portal. */
export interface PortalUsersTable {
  id: string;
  organization_id: string;
  /** Lower-cased; the sign-in name. */
  email: string;
  display_name: string | null;
  /** `admin` or `viewer`. */
  role: string;
  /** `scrypt$N$r$p$salt$hash` (base64url); never the password. */
  password_hash: string;
  /** Failed sign-ins since the last success (reset on success). */
  failed_logins: number;
  /** ISO 8601 UTC until which sign-in is refused after too many failures, or null. */
  locked_until: string | null;
  last_login_at: string | null;
  created_at: string;
  disabled_at: string | null;
}

/** A signed-in portal session. The cookie holds the token; the row holds its SHA-256 (hex) as `id`. */
export interface PortalSessionsTable {
  id: string;
  user_id: string;
  /** SHA-256 (hex) of the session's CSRF token, sent back in the `x-csrf-token` header on every change. */
  csrf_hash: string;
  created_at: string;
  /** Last request: the idle timeout counts from here. */
  last_seen_at: string;
  /** Absolute end of the session, whatever the activity. */
  expires_at: string;
}

/** An API key: shown once at creation, stored as the SHA-256 (hex) of the key. */
export interface ApiKeysTable {
  id: string;
  organization_id: string;
  name: string;
  key_hash: string;
  /** `admin` or `viewer`. */
  role: string;
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** Names of the inventory tables. */
export type InventoryTable =
  'directory_users' | 'directory_groups' | 'group_memberships' | 'environments' | 'dataverse_users' | 'agents' | 'estate_objects' | 'transcript_turns';

/** How a tenant was proven to belong to an organization (migration 0012). */
export type BindingMethod = 'oidc-admin' | 'mode-a-secret' | 'operator';

/**
 * The organization a Microsoft Entra tenant belongs to: one row per tenant (migration 0012). `proven_by` is the
 * administrator's UPN (`preferred_username`) for `oidc-admin`, the client id for `mode-a-secret`, free text for `operator`.
 */
export interface TenantBindingsTable {
  /** Tenant id (GUID, lower case). */
  tenant_id: string;
  organization_id: string;
  method: BindingMethod;
  proven_by: string | null;
  /** Object ID (`oid`) of the administrator who signed in (`oidc-admin`). */
  proven_by_oid: string | null;
  /** ISO 8601 UTC. */
  proven_at: string;
}

/**
 * A consent link in flight (migration 0012). `stage`: `consent` (link issued), `signin` (consent answered, the
 * administrator's OpenID Connect sign-in pending), `done` (consumed). `nonce` is the OIDC nonce sent to the authorize
 * endpoint; `verifier_envelope` the PKCE code verifier as an AES-256-GCM envelope (JSON) bound to the flow id.
 */
export interface ConsentFlowsTable {
  id: string;
  organization_id: string;
  /** Who asked for the link: `user:<id>`, `api-key:<name>` or `operator`. */
  initiated_by: string | null;
  tenant_id: string;
  stage: 'consent' | 'signin' | 'done';
  nonce: string | null;
  verifier_envelope: string | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** A Copilot Studio threat-detection endpoint of an integration (migration 0014); `id` is public (in its URL). */
export interface ProtectionEndpointsTable {
  id: string;
  organization_id: string;
  integration_id: string;
  /** The customer's Entra application (client) id whose tokens may call the endpoint; null until the administrator has created it (every call is refused meanwhile). */
  app_id: string | null;
  /** JSON array of the accepted token audiences (`aud`); empty = the defaults, computed from the app id and the base URL when a call is checked. */
  audiences: string;
  created_at: string;
  updated_at: string;
  /** Last successful `validate` call (ISO 8601 UTC), or null. */
  validated_at: string | null;
  first_analysis_at: string | null;
  last_analysis_at: string | null;
  /** Calls refused for their token since the endpoint was created. */
  auth_failures: number;
  last_auth_failure_at: string | null;
  /** Why the last refused call was refused (`signature`, `tenant`, `audience`, …), never the token. */
  last_auth_failure_reason: string | null;
}

/** A runtime-protection policy (migration 0014): scope columns plus the JSON text of its editable fields. */
export interface ProtectionPoliciesTable {
  id: string;
  organization_id: string;
  integration_id: string | null;
  environment_id: string | null;
  agent_id: string | null;
  /** JSON object: `mode`, `detectors`, `allow`, `deadlineMs`, `onTimeout` (each optional). */
  policy: string;
  updated_by: string | null;
  updated_at: string;
}

/** One `analyze-tool-execution` call answered (migration 0014). Booleans 0/1; JSON as text; never a token or body. */
export interface AgentStepsTable {
  id: string;
  organization_id: string;
  integration_id: string;
  endpoint_id: string;
  received_at: string;
  correlation_id: string | null;
  environment_id: string | null;
  agent_id: string | null;
  agent_name: string | null;
  user_id: string | null;
  conversation_id: string | null;
  message_id: string | null;
  plan_id: string | null;
  plan_step_id: string | null;
  channel_id: string | null;
  tool_id: string | null;
  tool_name: string | null;
  tool_type: string | null;
  block_action: number;
  would_block: number;
  mode: string;
  reason_code: number;
  reason: string;
  decided_by: string | null;
  /** JSON array of the detectors' verdicts (redacted evidence only). */
  verdicts: string;
  /** JSON array of the ids of the policies that applied, most specific first. */
  policy_ids: string;
  /** Whole handling of the call, milliseconds. */
  latency_ms: number;
  /** The engine's share, milliseconds. */
  engine_ms: number;
  timed_out: number;
  client_ip: string | null;
}

/** One quarantine or release of a Copilot Studio agent attempted (migration 0015). Never a token. */
export interface ContainmentActionsTable {
  id: string;
  organization_id: string | null;
  integration_id: string;
  /** `contain` or `release`. */
  action: string;
  environment_id: string;
  /** The Copilot Studio bot id. */
  agent_id: string;
  alert_id: string | null;
  step_id: string | null;
  /** Who asked Vigil (the person named, or the portal user). */
  requested_by: string;
  /** The administrator whose delegated token made the call (UPN), null when the sign-in did not finish. */
  signed_in_as: string | null;
  requested_at: string;
  /** `succeeded`, `refused` or `failed`. */
  outcome: string;
  /** The state answered after the call, 0/1; null when unknown. */
  quarantined: number | null;
  error_code: string | null;
  error_message: string | null;
}
