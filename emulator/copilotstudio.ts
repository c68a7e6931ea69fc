/**
 * Copilot Studio's runtime as a caller of an external threat-detection provider: the admin's per-environment set-up
 * (an Entra application with a federated identity credential, the endpoint's base URL, the error behaviour), the
 * `/validate` call made when the set-up is saved, and the `/analyze-tool-execution` call made before every tool a
 * generative-orchestration agent intends to run, replayed over scripted conversations (`protectionscenarios.ts`).
 *
 * Wire facts (Microsoft Learn):
 * - https://learn.microsoft.com/microsoft-copilot-studio/external-security-webhooks-interface-developers — the two
 *   endpoints `POST {base}/validate` and `POST {base}/analyze-tool-execution` with `?api-version=2025-05-01`, the headers
 *   `Authorization: Bearer <token>`, `x-ms-correlation-id: <GUID>`, `Content-Type: application/json`, the request body
 *   (`plannerContext`, `toolDefinition`, `inputValues`, `conversationMetadata`) and the answers
 *   (`{isSuccessful, status}`, `{blockAction, reasonCode, reason, diagnostics}`, errors `{errorCode, message, httpStatus,
 *   diagnostics}`);
 * - https://learn.microsoft.com/microsoft-copilot-studio/external-security-provider — the set-up per environment in the
 *   Power Platform admin center (application ID, endpoint link, error behaviour; saving validates the endpoint), the
 *   1,000 ms answer budget, and that a block stops the agent;
 * - the federated identity credential of the application (issuer `https://login.microsoftonline.com/{tenantId}/v2.0`,
 *   subject `/eid1/c/pub/t/{tenant}/a/m1WPnYRZpEaQKq1Cceg--g/{endpoint}`, audience `api://AzureADTokenExchange`), as
 *   Microsoft's `Create-CopilotWebhookApp` script creates it; implementers report that the application's Application ID
 *   URI must equal the endpoint base URL, so the provider receives a v1 app token of the customer's tenant with
 *   `aud` = the base URL and `appid` = the application.
 *
 * The emulator signs that token itself (`TokenService.issueAppToken`): the federated exchange between Copilot Studio and
 * Entra ID is not replayed on the wire, but its preconditions are checked (the app exists in the tenant, holds a
 * credential whose issuer/subject/audience match, and its Application ID URI is the base URL — else the call fails as
 * AADSTS70021 / AADSTS500011 would, and the error behaviour applies).
 *
 * Shares no code with `src/`: it is an independent witness of the wire format.
 */
import { randomUUID } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AppRegistration, Environment, Tenant, TenantStore } from './tenant.ts';
import { findApp } from './tenant.ts';
import type { TokenService } from './tokens.ts';

/** The `api-version` Copilot Studio sends (external-security-webhooks-interface-developers). */
export const THREAT_DETECTION_API_VERSION = '2025-05-01';

/** The answer budget, ms: "the agent expects a response within 1,000 ms" (external-security-provider). */
export const ANALYZE_TIMEOUT_MS = 1000;

/** Issuer of the federated credential: the customer's tenant, v2.0 (Create-CopilotWebhookApp). */
export const federatedIssuer = (tenantId: string): string => `https://login.microsoftonline.com/${tenantId}/v2.0`;

/** Audience of the federated credential (the fixed token-exchange audience of Entra ID). */
export const FEDERATED_AUDIENCE = 'api://AzureADTokenExchange';

/** The fixed segment of the subject that names Copilot Studio (the `a/` part of the documented subject). */
const COPILOT_STUDIO_SUBJECT_APP = 'm1WPnYRZpEaQKq1Cceg--g';

/**
 * The bytes of a GUID as .NET's `Guid.ToByteArray()` orders them: the first three groups little-endian (4, 2 and 2
 * bytes reversed), the last two groups as written. Throws RangeError for a string that is not a GUID.
 */
function dotNetGuidBytes(guid: string): Buffer {
  const hex = guid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex) || !/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(guid))
    throw new RangeError(`not a GUID: '${guid}'`);
  const b = Buffer.from(hex, 'hex');
  return Buffer.concat([
    Buffer.from(b.subarray(0, 4)).reverse(),
    Buffer.from(b.subarray(4, 6)).reverse(),
    Buffer.from(b.subarray(6, 8)).reverse(),
    b.subarray(8),
  ]);
}

/**
 * The federated credential subject Copilot Studio presents for an environment's endpoint:
 * `/eid1/c/pub/t/{base64url(tenant GUID bytes, .NET order)}/a/m1WPnYRZpEaQKq1Cceg--g/{base64url(UTF-8 base URL)}`
 * (external-security-provider; Create-CopilotWebhookApp), base64url without padding. Throws RangeError when
 * `tenantId` is not a GUID.
 */
export function federatedSubject(tenantId: string, baseUrl: string): string {
  const t = dotNetGuidBytes(tenantId).toString('base64url');
  const e = Buffer.from(baseUrl, 'utf8').toString('base64url');
  return `/eid1/c/pub/t/${t}/a/${COPILOT_STUDIO_SUBJECT_APP}/${e}`;
}

/** A federated identity credential of an application (Graph `federatedIdentityCredential`). */
export interface FederatedCredential {
  name: string;
  issuer: string;
  subject: string;
  audiences: string[];
}

/** What the admin center stores per environment ("additional threat detection"). */
export interface ThreatDetectionSettings {
  /** The Entra application (client) id entered by the admin. */
  appId: string;
  /** The endpoint link (base URL); Copilot Studio appends `/validate` and `/analyze-tool-execution`. */
  baseUrl: string;
  /** What happens on timeout, error or non-200: `allow` (the documented default) or `block`. */
  errorBehavior: 'allow' | 'block';
  /**
   * PEM of the CA that signed the provider's TLS certificate (a self-signed Vigil server in tests). Emulator only —
   * never echoed by the control API. Absent: the system's trust store. Plain `http://` URLs are accepted too.
   */
  ca?: string;
}

/** The outcome of one `/validate` call. */
export interface ValidationOutcome {
  /** 200 with `isSuccessful: true`. */
  ok: boolean;
  /** HTTP status, or null when no answer arrived (timeout, connection error, token failure). */
  status: number | null;
  latencyMs: number;
  /** The parsed JSON answer (or the raw text), null without one. */
  response: unknown;
  /** Why it failed, when it did (never a token). */
  error?: string;
  /** ISO 8601 UTC. */
  at: string;
}

/** An environment's threat-detection state as recorded by the emulator. */
export interface ThreatDetectionState {
  environmentId: string;
  /** The saved settings (without `ca`), null while nothing valid was saved. */
  settings: Omit<ThreatDetectionSettings, 'ca'> | null;
  /** The last save attempt's validation. */
  lastValidation: ValidationOutcome | null;
}

/** `previousToolsOutputs[]` entry (documented). */
export interface PreviousToolOutput {
  toolId: string;
  toolName: string;
  outputs: { name: string; value: unknown }[];
  timestamp: string;
}

/** `chatHistory[]` entry (documented). */
export interface ChatMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  timestamp: string;
}

/** A tool parameter of `toolDefinition` (documented `{name, description, type{$kind}}`). */
export interface ToolParameter {
  name: string;
  description: string;
  type: { $kind: 'String' | 'Number' | 'Boolean' | 'Record' | 'Table' };
}

/** `toolDefinition` (documented). `id` is the agent component's schema name, e.g. `cra65_otpdemo.action.SendEmail-SendEmail`. */
export interface ToolDefinition {
  id: string;
  type: string;
  name: string;
  description: string;
  inputParameters: ToolParameter[];
  outputParameters: ToolParameter[];
}

/** `conversationMetadata` (documented). */
export interface ConversationMetadata {
  agent: { id: string; tenantId: string; environmentId: string; name: string; version: string; isPublished: boolean };
  user: { id: string; tenantId: string };
  trigger: { id: string; schemaName: string };
  conversationId: string;
  messageId: string;
  channelId: string;
  planId: string;
  planStepId: string;
  parentAgentComponentId: string;
  incomingClientIp: string;
}

/**
 * The body of `POST {base}/analyze-tool-execution` (external-security-webhooks-interface-developers).
 * `previousToolsOutputs` is the documented spelling; `previousToolOutputs` is the sample's (see `ReplayOptions`).
 */
export interface AnalyzeToolExecutionRequest {
  plannerContext: {
    userMessage: string;
    thought: string;
    chatHistory: ChatMessage[];
    previousToolsOutputs?: PreviousToolOutput[];
    previousToolOutputs?: PreviousToolOutput[];
  };
  toolDefinition: ToolDefinition;
  inputValues: Record<string, unknown>;
  conversationMetadata: ConversationMetadata;
}

/** What Copilot Studio made of one analyze call. */
export interface AnalyzeOutcome {
  /** The tool does not run (and the agent stops). */
  blocked: boolean;
  /** Who decided: the provider's 200 answer, the 1,000 ms timeout, or an error (non-200, bad answer, network, token). */
  by: 'provider' | 'timeout' | 'error';
  /** HTTP status, null when none arrived in time. */
  status: number | null;
  /** From sending the request to the end of the answer (or the timeout), ms. */
  latencyMs: number;
  /** Parsed JSON answer (or the raw text), null without one. */
  response: unknown;
  /** The `x-ms-correlation-id` sent. */
  correlationId: string;
  /** The URL called (`{base}/analyze-tool-execution?api-version=2025-05-01`). */
  url: string;
  /** Why `by` is `error` (never a token). */
  error?: string;
}

/** One HTTP exchange with the provider. */
interface Exchange {
  status: number | null;
  latencyMs: number;
  response: unknown;
  timedOut: boolean;
  error?: string;
}

/** A failure of the runtime's set-up operations, with the HTTP status the control API maps it to. */
export class CopilotStudioError extends Error {
  readonly status: number;
  readonly code: string;

  /** @param status HTTP status (400, 404, 409); @param code stable machine code; @param message what is wrong. */
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'CopilotStudioError';
    this.status = status;
    this.code = code;
  }
}

/** Normalises an endpoint base URL: http(s) only, no query or fragment, no trailing slash. Throws CopilotStudioError 400. */
function normaliseBaseUrl(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new CopilotStudioError(400, 'InvalidBaseUrl', `not a URL: '${value}'`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new CopilotStudioError(400, 'InvalidBaseUrl', `base URL must be http(s): '${value}'`);
  if (u.search || u.hash) throw new CopilotStudioError(400, 'InvalidBaseUrl', `base URL must have no query or fragment: '${value}'`);
  return u.toString().replace(/\/+$/, '');
}

function nowIso(): string {
  return new Date().toISOString();
}

/** Keep-alive connection pools (one per trusted CA for HTTPS), as a long-running service reuses its connections. */
class Pools {
  readonly #http = new HttpAgent({ keepAlive: true, timeout: 4_000 });
  readonly #https = new Map<string, HttpsAgent>();

  /** The pool for a URL's scheme and CA. */
  for(protocol: string, ca: string | undefined): HttpAgent | HttpsAgent {
    if (protocol !== 'https:') return this.#http;
    const key = ca ?? '';
    let a = this.#https.get(key);
    if (!a) {
      a = new HttpsAgent({ keepAlive: true, timeout: 4_000, ...(ca ? { ca } : {}) });
      this.#https.set(key, a);
    }
    return a;
  }

  /** Closes every pooled connection. */
  destroy(): void {
    this.#http.destroy();
    for (const a of this.#https.values()) a.destroy();
    this.#https.clear();
  }
}

/**
 * Posts `body` (a string, possibly empty) to `url` with `headers` through `pools`, giving up after `timeoutMs`
 * (the request is destroyed then). Accepts `http:` and `https:` (trusting `ca` when given). Never throws: failures
 * are in the result. `latencyMs` runs from the call to the end of the answer (a new connection's handshake included).
 */
function post(pools: Pools, url: string, headers: Record<string, string>, body: string, timeoutMs: number, ca: string | undefined): Promise<Exchange> {
  const start = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (e: Omit<Exchange, 'latencyMs'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...e, latencyMs: Math.round((performance.now() - start) * 10) / 10 });
    };
    const u = new URL(url);
    const options = { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: pools.for(u.protocol, ca) };
    const onResponse = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let response: unknown = text === '' ? null : text;
        try {
          if (text !== '') response = JSON.parse(text);
        } catch {
          /* keep the text */
        }
        finish({ status: res.statusCode ?? null, response, timedOut: false });
      });
      res.on('error', (e) => finish({ status: res.statusCode ?? null, response: null, timedOut: false, error: e.message }));
    };
    const req = u.protocol === 'https:' ? httpsRequest(u, options, onResponse) : httpRequest(u, options, onResponse);
    const timer = setTimeout(() => {
      finish({ status: null, response: null, timedOut: true, error: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (e) => finish({ status: null, response: null, timedOut: false, error: e.message }));
    req.end(body);
  });
}

/** Dependencies of `CopilotStudioRuntime`: the served tenants and the token signer. */
export interface CopilotStudioDeps {
  store: TenantStore;
  tokens: TokenService;
}

/** Options of `CopilotStudioRuntime.analyzeToolExecution`. */
export interface AnalyzeOptions {
  /** The `x-ms-correlation-id` (default: a fresh GUID). */
  correlationId?: string;
  /** Overrides the environment's CA (PEM). */
  ca?: string;
  /** Overrides the 1,000 ms budget (benchmarks only; Copilot Studio's is fixed). */
  timeoutMs?: number;
}

/**
 * Copilot Studio's threat-detection caller for the served tenants. State (registered apps' credentials are on the
 * tenant's `apps`; per-environment settings and validations here) lives as long as the emulator.
 */
export class CopilotStudioRuntime {
  readonly #d: CopilotStudioDeps;
  /** `{tenantId}/{environmentId}` → settings (with ca). */
  readonly #settings = new Map<string, ThreatDetectionSettings>();
  readonly #validations = new Map<string, ValidationOutcome>();
  readonly #pools = new Pools();

  /** @param deps the running emulator's tenant store and token service. */
  constructor(deps: CopilotStudioDeps) {
    this.#d = deps;
  }

  #tenant(tenantIdOrDomain: string): Tenant {
    const t = this.#d.store.resolve(tenantIdOrDomain);
    if (!t) throw new CopilotStudioError(404, 'TenantNotFound', `no served tenant '${tenantIdOrDomain}'`);
    return t;
  }

  #environment(t: Tenant, ref: string): Environment {
    const lower = ref.toLowerCase();
    const env = t.environments.find(
      (e) => e.name.toLowerCase() === lower || e.displayName.toLowerCase() === lower || e.dataverse?.uniqueName.toLowerCase() === lower,
    );
    if (!env) throw new CopilotStudioError(404, 'EnvironmentNotFound', `no environment '${ref}' in tenant ${t.id}`);
    return env;
  }

  /**
   * Registers the single-tenant application an admin creates for a provider (as `Create-CopilotWebhookApp` does): the
   * app (with its service principal) joins `tenant.apps`, with Application ID URI = the base URL and one federated
   * credential (issuer, subject for the base URL, audience `api://AzureADTokenExchange`). Returns the app id and the
   * credential. Throws CopilotStudioError 404 (tenant) or 400 (base URL).
   */
  registerThreatDetectionApp(
    tenantIdOrDomain: string,
    options: { baseUrl: string; displayName?: string },
  ): { appId: string; federatedCredential: FederatedCredential } {
    const t = this.#tenant(tenantIdOrDomain);
    const baseUrl = normaliseBaseUrl(options.baseUrl);
    const federatedCredential: FederatedCredential = {
      name: 'CopilotStudioThreatDetection',
      issuer: federatedIssuer(t.id),
      subject: federatedSubject(t.id, baseUrl),
      audiences: [FEDERATED_AUDIENCE],
    };
    const app: AppRegistration = {
      appId: randomUUID(),
      displayName: options.displayName ?? 'Copilot Studio threat detection',
      servicePrincipalObjectId: randomUUID(),
      secrets: [],
      grantedRoles: {},
      isManagementApp: false,
      signInAudience: 'AzureADMyOrg',
      identifierUris: [baseUrl],
      federatedIdentityCredentials: [federatedCredential],
    };
    t.apps.push(app);
    return { appId: app.appId, federatedCredential };
  }

  /**
   * Issues the token Copilot Studio sends for an environment's settings, after the checks Entra ID makes in the
   * federated exchange. Returns the token or the reason it could not be issued (AADSTS code and text).
   */
  async #token(t: Tenant, s: ThreatDetectionSettings): Promise<{ token: string } | { error: string }> {
    const app = findApp(t, s.appId);
    if (!app) return { error: `AADSTS700016: application '${s.appId}' was not found in tenant ${t.id}` };
    const subject = federatedSubject(t.id, s.baseUrl);
    const fic = (app.federatedIdentityCredentials ?? []).find(
      (f) => f.issuer === federatedIssuer(t.id) && f.subject === subject && f.audiences.includes(FEDERATED_AUDIENCE),
    );
    if (!fic) return { error: `AADSTS70021: no federated identity credential of app ${s.appId} matches the presented assertion (subject for ${s.baseUrl})` };
    if (!(app.identifierUris ?? []).some((u) => u.replace(/\/+$/, '') === s.baseUrl))
      return { error: `AADSTS500011: the resource principal named ${s.baseUrl} was not found in tenant ${t.id}` };
    const r = await this.#d.tokens.issueAppToken(t, app, { resource: s.baseUrl });
    return { token: r.token };
  }

  /**
   * Saves an environment's threat-detection settings as the Power Platform admin center does: calls
   * `POST {base}/validate?api-version=2025-05-01` (empty body, bearer token; no documented budget, 10 s here); the settings are saved only when the
   * answer is 200 with `isSuccessful: true` (otherwise the previous settings stay). The outcome is recorded either way.
   * Throws CopilotStudioError 404 (tenant, environment) or 400 (settings).
   */
  async setThreatDetection(
    tenantIdOrDomain: string,
    environment: string,
    settings: ThreatDetectionSettings,
  ): Promise<ThreatDetectionState & { saved: boolean }> {
    const t = this.#tenant(tenantIdOrDomain);
    const env = this.#environment(t, environment);
    if (typeof settings.appId !== 'string' || settings.appId === '') throw new CopilotStudioError(400, 'InvalidSettings', 'appId is required');
    if (settings.errorBehavior !== 'allow' && settings.errorBehavior !== 'block')
      throw new CopilotStudioError(400, 'InvalidSettings', `errorBehavior must be 'allow' or 'block', got '${String(settings.errorBehavior)}'`);
    const s: ThreatDetectionSettings = {
      appId: settings.appId,
      baseUrl: normaliseBaseUrl(settings.baseUrl),
      errorBehavior: settings.errorBehavior,
      ...(settings.ca ? { ca: settings.ca } : {}),
    };
    const key = `${t.id}/${env.name}`;
    const validation = await this.#validate(t, s);
    this.#validations.set(key, validation);
    if (validation.ok) this.#settings.set(key, s);
    return { ...this.threatDetection(t.id, env.name), saved: validation.ok };
  }

  async #validate(t: Tenant, s: ThreatDetectionSettings): Promise<ValidationOutcome> {
    const at = nowIso();
    const token = await this.#token(t, s);
    if ('error' in token) return { ok: false, status: null, latencyMs: 0, response: null, error: token.error, at };
    const x = await post(
      this.#pools,
      `${s.baseUrl}/validate?api-version=${THREAT_DETECTION_API_VERSION}`,
      this.#headers(token.token, randomUUID()),
      '',
      ANALYZE_TIMEOUT_MS * 10,
      s.ca,
    );
    const body = x.response as { isSuccessful?: unknown } | null;
    const ok = x.status === 200 && body !== null && typeof body === 'object' && body.isSuccessful === true;
    return {
      ok,
      status: x.status,
      latencyMs: x.latencyMs,
      response: x.response,
      ...(x.error ? { error: x.error } : !ok ? { error: x.status === 200 ? 'the answer lacks isSuccessful: true' : `HTTP ${String(x.status)}` } : {}),
      at,
    };
  }

  #headers(token: string, correlationId: string): Record<string, string> {
    return { authorization: `Bearer ${token}`, 'x-ms-correlation-id': correlationId, 'content-type': 'application/json' };
  }

  /** Closes the pooled connections to providers (the emulator's `close`). */
  close(): void {
    this.#pools.destroy();
  }

  /** An environment's recorded state. Throws CopilotStudioError 404 (tenant, environment). */
  threatDetection(tenantIdOrDomain: string, environment: string): ThreatDetectionState {
    const t = this.#tenant(tenantIdOrDomain);
    const env = this.#environment(t, environment);
    const key = `${t.id}/${env.name}`;
    const s = this.#settings.get(key);
    return {
      environmentId: env.name,
      settings: s ? { appId: s.appId, baseUrl: s.baseUrl, errorBehavior: s.errorBehavior } : null,
      lastValidation: this.#validations.get(key) ?? null,
    };
  }

  /** Removes an environment's settings (threat detection off). Throws CopilotStudioError 404 (tenant, environment). */
  clearThreatDetection(tenantIdOrDomain: string, environment: string): void {
    const t = this.#tenant(tenantIdOrDomain);
    const env = this.#environment(t, environment);
    this.#settings.delete(`${t.id}/${env.name}`);
    this.#validations.delete(`${t.id}/${env.name}`);
  }

  /**
   * Calls `POST {base}/analyze-tool-execution?api-version=2025-05-01` once for `body` with a fresh app token
   * (aud = base URL), and applies Copilot Studio's rules: a 200 with a boolean `blockAction` decides (`by: 'provider'`);
   * no answer within 1,000 ms → `by: 'timeout'`; a non-200, an answer without a boolean `blockAction`, a network or
   * token failure → `by: 'error'`; in both latter cases the environment's error behaviour decides `blocked`.
   * Throws CopilotStudioError 404 (tenant, environment) or 409 (threat detection not set up in the environment).
   */
  async analyzeToolExecution(
    tenantIdOrDomain: string,
    environment: string,
    body: AnalyzeToolExecutionRequest,
    options: AnalyzeOptions = {},
  ): Promise<AnalyzeOutcome> {
    const t = this.#tenant(tenantIdOrDomain);
    const env = this.#environment(t, environment);
    const s = this.#settings.get(`${t.id}/${env.name}`);
    if (!s) throw new CopilotStudioError(409, 'ThreatDetectionNotConfigured', `threat detection is not set up in environment ${env.name}`);
    const correlationId = options.correlationId ?? randomUUID();
    const onError = s.errorBehavior === 'block';
    const url = `${s.baseUrl}/analyze-tool-execution?api-version=${THREAT_DETECTION_API_VERSION}`;
    const token = await this.#token(t, s);
    if ('error' in token) return { blocked: onError, by: 'error', status: null, latencyMs: 0, response: null, correlationId, url, error: token.error };
    const x = await post(
      this.#pools,
      url,
      this.#headers(token.token, correlationId),
      JSON.stringify(body),
      options.timeoutMs ?? ANALYZE_TIMEOUT_MS,
      options.ca ?? s.ca,
    );
    const base = { status: x.status, latencyMs: x.latencyMs, response: x.response, correlationId, url };
    if (x.timedOut) return { ...base, blocked: onError, by: 'timeout', ...(x.error ? { error: x.error } : {}) };
    if (x.status !== 200) return { ...base, blocked: onError, by: 'error', error: x.error ?? `HTTP ${String(x.status)}` };
    const answer = x.response as { blockAction?: unknown } | null;
    if (answer === null || typeof answer !== 'object' || typeof answer.blockAction !== 'boolean')
      return { ...base, blocked: onError, by: 'error', error: 'the answer has no boolean blockAction' };
    return { ...base, blocked: answer.blockAction, by: 'provider' };
  }

  /**
   * Replays a scripted conversation (`ProtectionScenario`) in the environment: for each planned tool step, builds the
   * documented request (the user's message, the orchestrator's thought, the chat history so far, the outputs of the
   * tools already run), calls analyze; an allowed tool "runs" (its scripted output joins `previousToolsOutputs` and
   * the history), a blocked one stops the conversation. Throws as `analyzeToolExecution` does.
   */
  async replayConversation(tenantIdOrDomain: string, environment: string, scenario: ProtectionScenario, options: ReplayOptions = {}): Promise<ReplayResult> {
    const t = this.#tenant(tenantIdOrDomain);
    const env = this.#environment(t, environment);
    const outputsField = options.toolOutputsField ?? 'previousToolsOutputs';
    const started = Date.now();
    let tick = 0;
    const stamp = (): string => new Date(started + 1000 * tick++).toISOString();
    const conversationId = options.conversationId ?? randomUUID();
    const planId = randomUUID();
    const messageId = randomUUID();
    const history: ChatMessage[] = scenario.history.map((m) => ({ id: randomUUID(), role: m.role, content: m.content, timestamp: stamp() }));
    history.push({ id: messageId, role: 'user', content: scenario.userMessage, timestamp: stamp() });
    const previous: PreviousToolOutput[] = [];
    const steps: ReplayStep[] = [];
    let stoppedAt: number | null = null;
    for (const [i, step] of scenario.steps.entries()) {
      const body: AnalyzeToolExecutionRequest = {
        plannerContext: {
          userMessage: scenario.userMessage,
          thought: step.thought,
          chatHistory: history.map((m) => ({ ...m })),
          [outputsField]: previous.map((p) => ({ ...p, outputs: p.outputs.map((o) => ({ ...o })) })),
        },
        toolDefinition: step.tool,
        inputValues: step.inputValues,
        conversationMetadata: {
          agent: { ...scenario.agent, tenantId: t.id, environmentId: env.name },
          user: { id: scenario.user.id, tenantId: t.id },
          trigger: scenario.trigger,
          conversationId,
          messageId,
          channelId: scenario.channelId,
          planId,
          planStepId: randomUUID(),
          parentAgentComponentId: scenario.parentAgentComponentId,
          incomingClientIp: scenario.incomingClientIp,
        },
      };
      const outcome = await this.analyzeToolExecution(t.id, env.name, body, { ...(options.ca ? { ca: options.ca } : {}) });
      steps.push({ index: i, toolId: step.tool.id, request: body, outcome, ran: !outcome.blocked });
      if (outcome.blocked) {
        stoppedAt = i;
        break;
      }
      previous.push({ toolId: step.tool.id, toolName: step.tool.name, outputs: step.output, timestamp: stamp() });
      if (step.assistantMessage) history.push({ id: randomUUID(), role: 'assistant', content: step.assistantMessage, timestamp: stamp() });
    }
    return { scenarioId: scenario.id, label: scenario.label, detector: scenario.detector, conversationId, steps, stoppedAt, blocked: stoppedAt !== null };
  }
}

/** Options of `replayConversation`. */
export interface ReplayOptions {
  /** The field that carries the outputs of tools already run: the documented `previousToolsOutputs` (default) or the sample's `previousToolOutputs`. */
  toolOutputsField?: 'previousToolsOutputs' | 'previousToolOutputs';
  /** Overrides the environment's CA (PEM). */
  ca?: string;
  /** The conversation id (default: a fresh GUID). */
  conversationId?: string;
}

/** One replayed step: the request sent (no token in it) and what Copilot Studio made of the answer. */
export interface ReplayStep {
  index: number;
  toolId: string;
  request: AnalyzeToolExecutionRequest;
  outcome: AnalyzeOutcome;
  /** The tool ran (allowed). */
  ran: boolean;
}

/** The result of `replayConversation`. */
export interface ReplayResult {
  scenarioId: string;
  label: 'benign' | 'attack';
  detector: ScenarioDetector | null;
  conversationId: string;
  steps: ReplayStep[];
  /** Index of the blocked step (the agent stopped there), null when every step ran. */
  stoppedAt: number | null;
  blocked: boolean;
}

/**
 * The detector expected to catch an attack scenario. The same words as Vigil's detector ids, written here on their
 * own (the emulator imports nothing from `src/`).
 */
export type ScenarioDetector = 'prompt_injection' | 'jailbreak' | 'sensitive_data_egress' | 'external_recipient' | 'unapproved_tool' | 'changed_agent';

/** A planned tool step of a scenario. */
export interface ScenarioStep {
  /** The orchestrator's reason for calling the tool (`plannerContext.thought`). */
  thought: string;
  tool: ToolDefinition;
  /** The values the model proposes (`inputValues`). */
  inputValues: Record<string, unknown>;
  /** The tool's scripted output, given to later steps in `previousToolsOutputs` when it runs. */
  output: { name: string; value: unknown }[];
  /** What the agent says to the user after the tool ran (joins `chatHistory`), if anything. */
  assistantMessage?: string;
}

/** A scripted conversation of one agent with tool calls (built by `protectionScenarios`). */
export interface ProtectionScenario {
  id: string;
  title: string;
  label: 'benign' | 'attack';
  /** The detector that should catch it (null for benign ones). */
  detector: ScenarioDetector | null;
  /** Index of the step that should be blocked (null for benign ones). */
  attackStep: number | null;
  /** What the scenario exercises, in a sentence or two. */
  exercises: string;
  /** `conversationMetadata.agent` without tenant/environment (the replay fills those). */
  agent: { id: string; name: string; version: string; isPublished: boolean };
  /** The Entra user who talks to the agent. */
  user: { id: string; userPrincipalName: string };
  trigger: { id: string; schemaName: string };
  channelId: string;
  parentAgentComponentId: string;
  incomingClientIp: string;
  /** Earlier turns of the conversation, oldest first. */
  history: { role: 'user' | 'assistant'; content: string }[];
  userMessage: string;
  steps: ScenarioStep[];
}
