import { randomUUID } from 'node:crypto';
import type { CloudProfile } from '../config/cloud.ts';
import type { DetectionInfo } from '../exports/ocsf.ts';
import { detection as postureRuntimeIssue, joinsIssue, runtimeIssueHit, type RuntimeIssueStep } from '../detections/rules/agent_posture_runtime_issue.ts';
import type { OpenFinding } from '../detections/types.ts';
import { CallerTokenRejected, TenantKeyCache, validateCallerToken } from '../platform/identity/callerToken.ts';
import type { HttpClient } from '../platform/http/client.ts';
import type { Logger } from '../platform/log/index.ts';
import type { ProtectionMetrics, ProtectionOutcome } from '../platform/metrics/index.ts';
import { deliverAfterCommit, enqueueAlerts, type Sinks } from '../sinks/index.ts';
import type { Executor } from '../store/db.ts';
import { raiseAlerts, type AlertInput } from '../store/repositories/audit.ts';
import { readOpenFindings } from '../detections/helpers.ts';
import { findIntegration } from '../store/repositories/integrations.ts';
import {
  getProtectionEndpoint,
  insertAgentSteps,
  listProtectionPolicies,
  markProtectionAnalysis,
  markProtectionValidated,
  recordProtectionAuthFailure,
  type AgentStepRow,
  type ProtectionEndpointRow,
} from '../store/repositories/protection.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
// U+0000 as U+FFFD, as the store keeps text (payloads are attacks by design and may carry it).
import { storableText } from '../store/text.ts';
import { decide } from './engine.ts';
import { protectionPolicyInputSchema, resolvePolicy } from './policy.ts';
import { parseToolExecution } from './request.ts';
import { SnapshotCache } from './snapshot.ts';
import type { Decision, EffectivePolicy, ProtectionPolicy, ToolExecution, Verdict } from './types.ts';

/**
 * The runtime-protection use case behind Copilot Studio's two webhook calls (issue 19): `validate` (the admin center's
 * check when the provider is saved) and `analyze-tool-execution` (before every tool a generative-orchestration agent
 * runs). It finds the endpoint, authenticates the caller's Entra token against the integration's tenant and the
 * endpoint's application, parses the body, decides with the organization's policy over the cached inventory snapshot,
 * stores the step (and the alerts it raises, in one transaction) before answering, and answers in the documented shapes.
 *
 * Sources: https://learn.microsoft.com/microsoft-copilot-studio/external-security-webhooks-interface-developers
 * (`POST {base}/validate` → `{"isSuccessful": true, "status": "OK"}`; `POST {base}/analyze-tool-execution` →
 * `{blockAction, reasonCode, reason, diagnostics}`; errors as non-2xx `{errorCode, message, httpStatus, diagnostics}`;
 * `x-ms-correlation-id`), https://learn.microsoft.com/microsoft-copilot-studio/external-security-provider (an answer
 * within 1,000 ms; on error or timeout the environment's error behaviour applies), ../shared/reference/threat-detection-webhook.md.
 */

/** What the HTTP layer sends: a status and a JSON body in the webhook's shapes. */
export interface WebhookAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * `errorCode` values of the error answers (the interface documents an integer; these are Vigil's, stable):
 * the HTTP status times 10 plus a variant.
 */
export const WEBHOOK_ERROR_CODES = {
  badRequest: 4000,
  unsupportedMediaType: 4150,
  unauthenticated: 4010,
  notFound: 4040,
  tooLarge: 4130,
  internal: 5000,
} as const;

/** An error answer in the webhook's documented shape. */
export function webhookError(status: number, errorCode: number, message: string, diagnostics = ''): WebhookAnswer {
  return { status, body: { errorCode, message, httpStatus: status, diagnostics } };
}

/** Dependencies of {@link ProtectionService}. */
export interface ProtectionDeps {
  db: Kysely<Database>;
  cloud: CloudProfile;
  http: HttpClient;
  logger: Logger;
  metrics?: ProtectionMetrics | undefined;
  sinks?: Sinks | undefined;
  /** The deployment's public API URL (`VIGIL_API_URL`): endpoints' base URLs are `{apiUrl}/protection/{id}`. */
  apiUrl: string | null;
  /** Tenant keys (default: a cache over the profile's authority through `http`). */
  keys?: TenantKeyCache;
  /** Snapshots (default: a 60 s stale-while-revalidate cache over the store). */
  snapshots?: SnapshotCache;
  /** How long endpoints and policies are cached, milliseconds. @default 10000 */
  cacheMs?: number;
  /** The decision engine's clock, milliseconds (@default `performance.now`): the internal budget is measured with it. */
  clock?: () => number;
}

/** Options of one `analyze` call. */
export interface AnalyzeOptions {
  /** The caller's address as the server saw it (behind a trusted proxy, the forwarded one). */
  clientIp?: string | undefined;
  /** When the request arrived (`performance.now()`), to count the whole handling; default: when `analyze` was called. */
  startedAt?: number;
}

/** Refused calls are written and logged at most this often per endpoint, milliseconds. */
const REFUSAL_RECORD_MS = 1000;

/** Steps written per transaction at most (a multi-row insert of 30 columns stays under SQLite's 32,766 parameters). */
const STEP_BATCH_MAX = 200;
/**
 * How often an endpoint's last-analysis time is written, milliseconds: the set-up doctor shows it to the minute, and a
 * row updated on every call would be written a thousand times a second under load.
 */
const ANALYSIS_MARK_MS = 10_000;

/** The posture-runtime issue a step may raise: the agent and what runtime protection detected on it. */
interface IssueCandidate {
  integrationId: string;
  agentId: string;
  agentName: string | null;
  environmentId: string | null;
  steps: RuntimeIssueStep[];
}

/** A step waiting to be written, and its caller. */
interface PendingStep {
  step: AgentStepRow;
  alerts: { input: AlertInput; info: DetectionInfo }[];
  /** Set when a protection alert fired on an agent: joined with its open findings when the step is written. */
  issue: IssueCandidate | null;
  tenantId: string;
  at: string;
  resolve(delivered: boolean): void;
  reject(e: unknown): void;
}

interface EndpointEntry {
  endpoint: ProtectionEndpointRow;
  tenantId: string;
  audiences: string[];
  at: number;
}

/** The default audiences of an endpoint: the application id, `api://{appId}` and, when known, the base URL. */
function defaultAudiences(appId: string | null, baseUrl: string | null): string[] {
  return [...(appId ? [appId, `api://${appId}`] : []), ...(baseUrl ? [baseUrl] : [])];
}

/**
 * The audiences an endpoint accepts: those configured (a JSON array), or {@link defaultAudiences} when none are (the
 * base URL is the application's ID URI, so Copilot Studio's token names it as `aud`).
 */
export function effectiveAudiences(endpoint: { id: string; app_id: string | null; audiences: string }, apiUrl: string | null): string[] {
  let configured: string[] = [];
  try {
    configured = (JSON.parse(endpoint.audiences) as unknown[]).filter((a): a is string => typeof a === 'string');
  } catch {
    configured = [];
  }
  return configured.length ? configured : defaultAudiences(endpoint.app_id, endpointBaseUrl(apiUrl, endpoint.id));
}

/** The base URL Copilot Studio is given for an endpoint, or null when the deployment's API URL is not configured. */
export function endpointBaseUrl(apiUrl: string | null, endpointId: string): string | null {
  return apiUrl ? `${apiUrl.replace(/\/+$/, '')}/protection/${endpointId}` : null;
}

const orNull = (s: string, max = 256): string | null => (s ? storableText(s).slice(0, max) : null);

/** A policy row's stored JSON as the shared policy shape; a row that does not parse is skipped (logged). */
function toPolicy(
  row: { id: string; organization_id: string; integration_id: string | null; environment_id: string | null; agent_id: string | null; policy: string },
  logger: Logger,
): ProtectionPolicy | null {
  try {
    const fields = protectionPolicyInputSchema.parse(JSON.parse(row.policy)) as Partial<ProtectionPolicy>;
    return {
      ...fields,
      id: row.id,
      organizationId: row.organization_id,
      integrationId: row.integration_id,
      environmentId: row.environment_id,
      agentId: row.agent_id,
    };
  } catch (e) {
    logger.error({ policyId: row.id, err: { message: (e as Error).message } }, 'protection policy does not parse; it is ignored');
    return null;
  }
}

/** The metric outcome of a decision. */
function outcomeOf(d: Decision): ProtectionOutcome {
  if (d.timedOut) return 'timeout';
  if (d.blockAction) return 'block';
  return d.wouldBlock ? 'monitor' : 'allow';
}

/** The decision when the engine throws: the policy's `onTimeout` answer, reason code 901. */
function errorDecision(policy: EffectivePolicy, elapsedMs: number): Decision {
  const block = policy.onTimeout === 'block';
  return {
    blockAction: block && policy.mode === 'block',
    wouldBlock: block && policy.mode === 'monitor',
    reasonCode: 901,
    reason: `Vigil could not complete its checks; the policy's default (${policy.onTimeout}) applied.`,
    decidedBy: null,
    verdicts: [],
    policyIds: policy.policyIds,
    mode: policy.mode,
    timedOut: false,
    skipped: [],
    elapsedMs,
  };
}

/** Copilot Studio's runtime-protection calls, for one process (caches are per instance). */
export class ProtectionService {
  readonly #deps: ProtectionDeps;
  readonly #keys: TenantKeyCache;
  readonly #snapshots: SnapshotCache;
  readonly #cacheMs: number;
  /** Steps waiting for the next write ({@link ProtectionService.#store}). */
  readonly #pending: PendingStep[] = [];
  #writing = false;
  /** Refused calls per endpoint not yet written ({@link ProtectionService.#refused}). */
  readonly #refusals = new Map<
    string,
    { count: number; reason: string; at: string; correlationId: string; flushedAt: number; timer: ReturnType<typeof setTimeout> | undefined }
  >();
  /** When each endpoint's analysis time was last written (Date.now()). */
  readonly #analysisMarked = new Map<string, number>();
  readonly #endpoints = new Map<string, EndpointEntry>();
  readonly #policies = new Map<string, { policies: ProtectionPolicy[]; at: number }>();
  /** Open issue-making findings per `integrationId|agentId` (empty = none), cached for `cacheMs`. */
  readonly #agentFindings = new Map<string, { findings: OpenFinding[]; at: number }>();

  constructor(deps: ProtectionDeps) {
    this.#deps = deps;
    this.#keys = deps.keys ?? TenantKeyCache.forCloud(deps.cloud, deps.http);
    this.#snapshots = deps.snapshots ?? new SnapshotCache(deps.db, { logger: deps.logger });
    this.#cacheMs = deps.cacheMs ?? 10_000;
  }

  /** The endpoint and its integration's tenant, cached briefly; undefined when unknown (or its integration is gone). */
  async #endpoint(id: string, maxAgeMs = this.#cacheMs): Promise<EndpointEntry | undefined> {
    const cached = this.#endpoints.get(id);
    if (cached && Date.now() - cached.at < maxAgeMs) return cached;
    if (!/^[A-Za-z0-9_-]{8,64}$/.test(id)) return undefined;
    const endpoint = await getProtectionEndpoint(this.#deps.db, id);
    const integration = endpoint ? await findIntegration(this.#deps.db, endpoint.integration_id) : undefined;
    if (!endpoint || !integration) {
      this.#endpoints.delete(id);
      return undefined;
    }
    const audiences = effectiveAudiences(endpoint, this.#deps.apiUrl);
    const entry = { endpoint, tenantId: integration.tenant_id.toLowerCase(), audiences, at: Date.now() };
    this.#endpoints.set(id, entry);
    return entry;
  }

  /** The organization's policies, cached briefly. */
  async #policiesOf(organizationId: string): Promise<ProtectionPolicy[]> {
    const cached = this.#policies.get(organizationId);
    if (cached && Date.now() - cached.at < this.#cacheMs) return cached.policies;
    const rows = await listProtectionPolicies(this.#deps.db, organizationId);
    const policies = rows.map((r) => toPolicy(r, this.#deps.logger)).filter((p): p is ProtectionPolicy => p !== null);
    this.#policies.set(organizationId, { policies, at: Date.now() });
    return policies;
  }

  /**
   * Counts a refused call on its endpoint (for the set-up doctor) and logs it — at most once a second per endpoint,
   * the calls refused meanwhile added up: whoever knows an endpoint's address must not turn a flood of bad tokens
   * into a flood of writes and log lines.
   */
  #refused(endpointId: string, reason: string, correlationId: string): void {
    const now = Date.now();
    const r = this.#refusals.get(endpointId) ?? { count: 0, reason, at: '', correlationId, flushedAt: 0, timer: undefined };
    r.count++;
    r.reason = reason;
    r.at = new Date(now).toISOString();
    r.correlationId = correlationId;
    this.#refusals.set(endpointId, r);
    if (r.timer) return;
    const flush = () => {
      r.timer = undefined;
      if (r.count === 0) return;
      const { count, reason: last, at } = r;
      r.count = 0;
      r.flushedAt = Date.now();
      this.#deps.logger.warn({ endpointId, correlationId: r.correlationId, reason: last, refused: count }, 'protection call refused: token');
      void recordProtectionAuthFailure(this.#deps.db, endpointId, last, at, count).catch((err: unknown) =>
        this.#deps.logger.error({ endpointId, err: { message: (err as Error).message } }, 'protection auth failure not recorded'),
      );
    };
    const wait = r.flushedAt + REFUSAL_RECORD_MS - now;
    if (wait <= 0) flush();
    else (r.timer = setTimeout(flush, wait)).unref();
  }

  /** Finds the endpoint and authenticates the caller; an error answer when either fails. */
  async #authenticate(endpointId: string, authorization: string | undefined, correlationId: string): Promise<EndpointEntry | WebhookAnswer> {
    let entry = await this.#endpoint(endpointId);
    // The same answer for an id that never existed and one of another organization: nothing to learn from it.
    if (!entry) return webhookError(404, WEBHOOK_ERROR_CODES.notFound, 'No protection endpoint at this address.', `correlationId=${correlationId}`);
    const check = async (e: EndpointEntry): Promise<void> => {
      const appId = e.endpoint.app_id;
      if (!appId) throw new CallerTokenRejected('app', 'No application is configured for this endpoint yet.');
      await validateCallerToken({ cloud: this.#deps.cloud, keys: this.#keys, authorization, tenantId: e.tenantId, appId, audiences: e.audiences });
    };
    try {
      try {
        await check(entry);
      } catch (e) {
        // The administrator may just have given the application or audiences (`vigil protection enable`, another
        // process): before refusing for those, read the endpoint again when the cached one is older than a second.
        if (!(e instanceof CallerTokenRejected && (e.reason === 'app' || e.reason === 'audience'))) throw e;
        const fresh = await this.#endpoint(endpointId, 1000);
        if (!fresh || fresh === entry) throw e;
        entry = fresh;
        await check(entry);
      }
      return entry;
    } catch (e) {
      const reason = e instanceof CallerTokenRejected ? e.reason : 'signature';
      const message = e instanceof CallerTokenRejected ? e.message : 'The token could not be validated.';
      this.#deps.metrics?.protectionAuthFailure(reason);
      this.#refused(endpointId, reason, correlationId);
      return webhookError(401, WEBHOOK_ERROR_CODES.unauthenticated, message, `reason=${reason}; correlationId=${correlationId}`);
    }
  }

  /**
   * `POST {base}/validate`: 200 `{"isSuccessful": true, "status": "OK"}` for an authenticated caller (and the endpoint's
   * `validated_at` set), else 404 / 401 in the error shape.
   */
  async validate(endpointId: string, authorization: string | undefined, correlationId: string): Promise<WebhookAnswer> {
    const auth = await this.#authenticate(endpointId, authorization, correlationId);
    if ('status' in auth) return auth;
    await markProtectionValidated(this.#deps.db, endpointId, new Date().toISOString());
    // Analyses follow a validation: the integration's snapshot is built now, off their path (errors are logged there).
    this.#snapshots
      .get(auth.endpoint.integration_id)
      .catch((e: unknown) => this.#deps.logger.warn({ endpointId, err: { message: (e as Error).message } }, 'protection snapshot not built'));
    this.#deps.logger.info({ endpointId, correlationId }, 'protection endpoint validated by Copilot Studio');
    return { status: 200, body: { isSuccessful: true, status: 'OK' } };
  }

  /**
   * `POST {base}/analyze-tool-execution`: 200 `{blockAction, reasonCode, reason, diagnostics}`, the step (and its
   * alerts) stored first; 404 / 401 / 400 in the error shape. `body` is the request body as text (JSON).
   */
  async analyze(
    endpointId: string,
    authorization: string | undefined,
    correlationId: string,
    body: string,
    options: AnalyzeOptions = {},
  ): Promise<WebhookAnswer> {
    const started = options.startedAt ?? performance.now();
    const receivedAt = new Date().toISOString();
    const auth = await this.#authenticate(endpointId, authorization, correlationId);
    if ('status' in auth) return auth;
    const { endpoint, tenantId } = auth;
    let exec: ToolExecution;
    try {
      exec = parseToolExecution(JSON.parse(body) as unknown);
    } catch (e) {
      const message = e instanceof SyntaxError ? 'The body is not valid JSON.' : e instanceof Error ? e.message : 'The body is not a tool execution.';
      return webhookError(400, WEBHOOK_ERROR_CODES.badRequest, storableText(message).slice(0, 300), `correlationId=${correlationId}`);
    }
    // The organization and integration come from the endpoint the token was checked against; environment and agent
    // from the request only narrow which of that organization's policies apply.
    const scope = {
      organizationId: endpoint.organization_id,
      integrationId: endpoint.integration_id,
      environmentId: exec.meta.environmentId || null,
      agentId: exec.meta.agentId || null,
    };
    const [snapshot, policies] = await Promise.all([this.#snapshots.get(endpoint.integration_id), this.#policiesOf(endpoint.organization_id)]);
    const policy = resolvePolicy(policies, scope);
    const engineStarted = performance.now();
    let decision: Decision;
    try {
      decision = decide(exec, { snapshot, policy, ...(this.#deps.clock ? { clock: this.#deps.clock } : {}) });
    } catch (e) {
      this.#deps.logger.error({ endpointId, correlationId, err: { message: (e as Error).message } }, 'protection engine failed; the policy default answers');
      decision = errorDecision(policy, performance.now() - engineStarted);
    }
    const stepId = `stp_${randomUUID().replaceAll('-', '')}`;
    const alerts = this.#alerts(exec, decision, policy, endpoint, stepId, receivedAt);
    const issue = this.#issueCandidate(exec, decision, policy, endpoint, stepId, alerts.length > 0);
    const step: AgentStepRow = {
      id: stepId,
      organization_id: endpoint.organization_id,
      integration_id: endpoint.integration_id,
      endpoint_id: endpoint.id,
      received_at: receivedAt,
      correlation_id: orNull(correlationId, 128),
      environment_id: orNull(exec.meta.environmentId, 64),
      agent_id: orNull(exec.meta.agentId.toLowerCase(), 64),
      agent_name: orNull(exec.meta.agentName, 512),
      user_id: orNull(exec.meta.userId, 128),
      conversation_id: orNull(exec.meta.conversationId),
      message_id: orNull(exec.meta.messageId),
      plan_id: orNull(exec.meta.planId),
      plan_step_id: orNull(exec.meta.planStepId),
      channel_id: orNull(exec.meta.channelId, 128),
      tool_id: orNull(exec.tool.id, 1024),
      tool_name: orNull(exec.tool.name, 1024),
      tool_type: orNull(exec.tool.type, 128),
      block_action: decision.blockAction ? 1 : 0,
      would_block: decision.wouldBlock ? 1 : 0,
      mode: decision.mode,
      reason_code: decision.reasonCode,
      reason: storableText(decision.reason),
      decided_by: decision.decidedBy,
      verdicts: JSON.stringify(decision.verdicts.map(storedVerdict)),
      policy_ids: JSON.stringify(decision.policyIds),
      latency_ms: 0,
      engine_ms: decision.elapsedMs,
      timed_out: decision.timedOut ? 1 : 0,
      client_ip: options.clientIp ? storableText(options.clientIp).slice(0, 64) : null,
    };
    step.latency_ms = performance.now() - started;
    let delivered = false;
    try {
      delivered = await this.#store(step, alerts, issue, tenantId, receivedAt);
    } catch (e) {
      // The decision is answered even so: a store failure must not turn a block into the environment's default.
      this.#deps.logger.error({ endpointId, correlationId, stepId, err: { message: (e as Error).message } }, 'protection step not stored');
    }
    if (delivered) void deliverAfterCommit(this.#deps.sinks, this.#deps.db, this.#deps.logger);
    const seconds = (performance.now() - started) / 1000;
    this.#deps.metrics?.protectionDecision(outcomeOf(decision), seconds);
    return {
      status: 200,
      body: {
        blockAction: decision.blockAction,
        reasonCode: decision.reasonCode,
        reason: storableText(decision.reason),
        diagnostics: JSON.stringify({ stepId, correlationId, mode: decision.mode, wouldBlock: decision.wouldBlock, timedOut: decision.timedOut }),
      },
    };
  }

  /**
   * Stores the step and its alerts, and (at most every {@link ANALYSIS_MARK_MS}) the endpoint's analysis time, before
   * the call is answered: nothing answered is lost. Calls arriving while a write is in progress are written together
   * in the next transaction (group commit: one commit for many steps under load, none waiting behind a timer); a batch
   * that fails is written again one step per transaction, so one bad step fails only its own call.
   * @returns true when alerts were queued for sinks.
   */
  #store(
    step: AgentStepRow,
    alerts: { input: AlertInput; info: DetectionInfo }[],
    issue: IssueCandidate | null,
    tenantId: string,
    at: string,
  ): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ step, alerts, issue, tenantId, at, resolve, reject });
      // After the current turn of the event loop: every call whose request was read in it joins the same transaction.
      if (!this.#writing) {
        this.#writing = true;
        setImmediate(() => void this.#writeLoop());
      }
    });
  }

  /** Writes the pending steps, batch after batch, until none is left. */
  async #writeLoop(): Promise<void> {
    try {
      while (this.#pending.length) {
        const batch = this.#pending.splice(0, STEP_BATCH_MAX);
        try {
          const delivered = await this.#deps.db.transaction().execute((trx: Executor) => this.#writeBatch(trx, batch));
          batch.forEach((p, i) => p.resolve(delivered[i]!));
        } catch (e) {
          if (batch.length === 1) {
            batch[0]!.reject(e);
            continue;
          }
          for (const p of batch) {
            try {
              const [delivered] = await this.#deps.db.transaction().execute((trx: Executor) => this.#writeBatch(trx, [p]));
              p.resolve(delivered!);
            } catch (err) {
              p.reject(err);
            }
          }
        }
      }
    } finally {
      this.#writing = false;
    }
  }

  /** One transaction's writes: the steps (one statement), the endpoints' analysis times when due, the alerts. */
  async #writeBatch(trx: Executor, batch: PendingStep[]): Promise<boolean[]> {
    await insertAgentSteps(
      this.#deps.db,
      trx,
      batch.map((p) => p.step),
    );
    const now = Date.now();
    for (const [endpointId, at] of new Map(batch.map((p) => [p.step.endpoint_id, p.at]))) {
      if (now - (this.#analysisMarked.get(endpointId) ?? 0) < ANALYSIS_MARK_MS) continue;
      await markProtectionAnalysis(trx, endpointId, at);
      this.#analysisMarked.set(endpointId, now);
    }
    const sinks = this.#deps.sinks;
    const delivered: boolean[] = [];
    for (const p of batch) {
      const alerts = p.issue ? [...p.alerts, ...(await this.#issueAlert(trx, p.issue, p.at))] : p.alerts;
      if (alerts.length === 0) {
        delivered.push(false);
        continue;
      }
      const rows = await raiseAlerts(
        trx,
        alerts.map((a) => a.input),
        () => p.at,
      );
      const created = rows.flatMap((alert, i) => (alert ? [{ alert, detection: alerts[i]!.info }] : []));
      if (sinks && created.length) await enqueueAlerts(trx, created, { sinks: sinks.names, product: sinks.product, tenantId: p.tenantId });
      delivered.push(created.length > 0 && sinks !== undefined);
    }
    return delivered;
  }

  /**
   * The alerts of a decision: each detection at or above its detector's threshold whose action is `block` or `alert`
   * (high for a block, answered or that block mode would have answered; medium otherwise), one per conversation and
   * detector (the dedupe key), as other alerts are deduplicated.
   */
  #alerts(exec: ToolExecution, d: Decision, policy: EffectivePolicy, endpoint: ProtectionEndpointRow, stepId: string, at: string) {
    const out: { input: AlertInput; info: DetectionInfo }[] = [];
    for (const { v, setting, outcome } of alerting(d, policy)) {
      const agent = exec.meta.agentName || exec.meta.agentId || 'an agent';
      const ruleId = `protection_${v.detector}`;
      out.push({
        input: {
          integrationId: endpoint.integration_id,
          ruleId,
          severity: setting.action === 'block' ? 'high' : 'medium',
          title: storableText(`Runtime protection: ${v.detector.replaceAll('_', ' ')} ${outcome} in ${agent}, tool ${exec.tool.name || exec.tool.id}`).slice(
            0,
            500,
          ),
          dedupeKey: storableText(`${exec.meta.conversationId || stepId}|${v.detector}`),
          detail: {
            stepId,
            conversationId: exec.meta.conversationId,
            agentId: exec.meta.agentId,
            agentName: exec.meta.agentName,
            environmentId: exec.meta.environmentId,
            userId: exec.meta.userId,
            toolId: exec.tool.id,
            toolName: exec.tool.name,
            blockAction: d.blockAction,
            wouldBlock: d.wouldBlock,
            mode: d.mode,
            reasonCode: d.reasonCode,
            verdict: storedVerdict(v),
            policyIds: d.policyIds,
          },
          windowStart: at,
          windowEnd: at,
        },
        info: {
          id: ruleId,
          title: `Runtime protection: ${v.detector.replaceAll('_', ' ')}`,
          description: v.summary,
          response: "Review the conversation's timeline of tool calls and the agent; quarantine the agent if it is compromised.",
          references: ['https://learn.microsoft.com/microsoft-copilot-studio/external-security-provider'],
        },
      });
    }
    return out;
  }

  /**
   * What a step contributes to the `agent_posture_runtime_issue` alert: null unless a protection alert fired and the
   * call names an agent. The detectors listed are those {@link ProtectionService.#alerts} raised on.
   */
  #issueCandidate(
    exec: ToolExecution,
    d: Decision,
    policy: EffectivePolicy,
    endpoint: ProtectionEndpointRow,
    stepId: string,
    alerted: boolean,
  ): IssueCandidate | null {
    if (!alerted || !exec.meta.agentId) return null;
    const steps: RuntimeIssueStep[] = alerting(d, policy).map(({ v, outcome }) => ({
      stepId,
      detector: v.detector,
      decision: outcome,
      conversationId: storableText(exec.meta.conversationId).slice(0, 256),
    }));
    return {
      integrationId: endpoint.integration_id,
      agentId: storableText(exec.meta.agentId).slice(0, 64),
      agentName: orNull(exec.meta.agentName, 512),
      environmentId: orNull(exec.meta.environmentId, 64),
      steps,
    };
  }

  /**
   * The issue alert of a step whose detection fired on an agent with open posture findings (medium or worse, not
   * suppressed; agents are findings' `resource_id`, the botid — looked up as sent and in lower case), or none. The
   * findings are read in the step's transaction only when a detector fired, and cached per agent for `cacheMs`.
   */
  async #issueAlert(trx: Executor, issue: IssueCandidate, at: string): Promise<{ input: AlertInput; info: DetectionInfo }[]> {
    const key = `${issue.integrationId}|${issue.agentId.toLowerCase()}`;
    let cached = this.#agentFindings.get(key);
    if (!cached || Date.now() - cached.at >= this.#cacheMs) {
      const findings = (await readOpenFindings(trx, issue.integrationId, [issue.agentId, issue.agentId.toLowerCase()], at)).filter(joinsIssue);
      cached = { findings, at: Date.now() };
      this.#agentFindings.set(key, cached);
      // Bounded: entries of agents not seen again go when the map grows.
      if (this.#agentFindings.size > 10_000) for (const [k, v] of this.#agentFindings) if (Date.now() - v.at >= this.#cacheMs) this.#agentFindings.delete(k);
    }
    if (cached.findings.length === 0) return [];
    // The findings' own spelling of the agent's id, so the key is the audit side's (its records name the botid).
    const agentId = cached.findings[0]!.resourceId;
    const hit = runtimeIssueHit(
      { id: agentId, name: issue.agentName, environmentId: issue.environmentId },
      cached.findings.filter((f) => f.resourceId === agentId),
      issue.steps,
      at,
    );
    if (!hit) return [];
    const m = postureRuntimeIssue.metadata;
    return [
      {
        input: {
          integrationId: issue.integrationId,
          ruleId: m.id,
          severity: m.severity,
          title: storableText(hit.title).slice(0, 500),
          dedupeKey: storableText(hit.dedupeKey),
          detail: hit.detail,
          windowStart: at,
          windowEnd: at,
        },
        info: m,
      },
    ];
  }

  /** Waits for background snapshot rebuilds (tests, shutdown). */
  async settle(): Promise<void> {
    await this.#snapshots.settle();
  }
}

/**
 * The verdicts that raise an alert: detected at or above the detector's threshold with action `block` or `alert`, with
 * what became of the call (`blocked`, `would have been blocked (monitor mode)` when it decided, else `detected`).
 */
function alerting(d: Decision, policy: EffectivePolicy) {
  return d.verdicts.flatMap((v) => {
    const setting = policy.detectors[v.detector];
    if (!v.detected || !setting || (setting.action !== 'block' && setting.action !== 'alert') || v.confidence < setting.threshold) return [];
    const decisive = d.decidedBy === v.detector && (d.blockAction || d.wouldBlock);
    const outcome = decisive ? (d.blockAction ? 'blocked' : 'would have been blocked (monitor mode)') : 'detected';
    return [{ v, setting, outcome }];
  });
}

/** A verdict as stored: the detector's redacted evidence only (excerpts capped at 160 characters, U+0000 replaced). */
function storedVerdict(v: Verdict) {
  return {
    detector: v.detector,
    detected: v.detected,
    confidence: v.confidence,
    summary: storableText(v.summary).slice(0, 300),
    evidence: v.evidence
      .slice(0, 10)
      .map((e) => ({ field: storableText(e.field).slice(0, 200), match: storableText(e.match).slice(0, 100), excerpt: storableText(e.excerpt).slice(0, 160) })),
  };
}
