/**
 * Vigil's local Microsoft cloud: Entra ID token endpoint, Microsoft Graph, the Power Platform admin API (BAP) and
 * Dataverse, served over real HTTPS on 127.0.0.1 by one Fastify server on one port, from a plain-data tenant model.
 *
 * It is an independent witness of Microsoft's wire format (shared/reference/microsoft-apis.md): it imports nothing
 * from `src/`. Layout on `https://127.0.0.1:PORT`:
 * - `/{tenant}/…` identity (MSAL authority `https://127.0.0.1:PORT/{tenant}`): client credentials, password,
 *   device-code and refresh-token grants, `/devicecode`, `/adminconsent` (v1 and v2), `/devicelogin`;
 * - `/graph/v1.0/…`, `/bap/providers/Microsoft.BusinessAppPlatform/…`, `/dataverse/{uniqueName}/api/data/v9.2/…`;
 * - `/powerapps/providers/Microsoft.PowerApps/…`, `/flow/providers/Microsoft.ProcessSimple/…` and the governance paths
 *   under `/bap` (Power Platform inventory, `powerplatform.ts`);
 * - `/manage/api/v1.0/{tenantId}/activity/feed/…` (Office 365 Management Activity API over a deterministic audit feed
 *   on an emulated clock) and `/powerbi/v1.0/myorg/admin/activityevents` (Power BI activity events);
 * - `/arm/subscriptions…` Azure Resource Manager: subscriptions and Cognitive Services (Foundry) accounts (`arm.ts`);
 * - `/_emulator/…` control API, including Copilot Studio's runtime as a caller of an external threat-detection
 *   provider (`/_emulator/copilot-studio/…`, `copilotstudio.ts`).
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { armNotFound, registerArm } from './arm.ts';
import { bapNotFound, registerBap } from './bap.ts';
import { EmulatedClock } from './clock.ts';
import { newId, serviceOf, type EmulatorContext, type RouteService, type ServiceName } from './common.ts';
import { RESOURCES } from './constants.ts';
import { EmulatorControl, registerControl } from './control.ts';
import { dataverseNotFound, registerDataverse } from './dataverse.ts';
import { DirectoryChanges } from './delta.ts';
import { FaultInjector, faultBody, type FaultConfig, type FaultKind } from './faults.ts';
import { FeedStore } from './feed.ts';
import { ForeignLinks } from './foreignlinks.ts';
import { isBatchInner, registerGraphEstate } from './graphestate.ts';
import { authenticate as graphAuthenticate, graphNotFound, registerGraph, sendError as graphSendError } from './graph.ts';
import { registerCopilot, registerCopilotControl } from './copilot.ts';
import { aadError, registerIdentity } from './identity.ts';
import { generateSigningMaterial, generateTlsMaterial } from './keys.ts';
import { redactPath, RequestLog, type RequestLogEntry } from './log.ts';
import { af429Body, manageNotFound, publisherIdentifierOf, registerManage } from './manage.ts';
import type { ManagedApp } from './managed.ts';
import { powerBiNotFound, registerPowerBi } from './powerbi.ts';
import { registerFlow, registerPowerApps, registerPowerPlatformGovernance } from './powerplatform.ts';
import { registerPowerBiScanner } from './powerbiscanner.ts';
import { registerPowerBiTenantSettings } from './powerbitenantsettings.ts';
import { powerPlatformNotFound, registerQuarantine } from './quarantine.ts';
import { registerOrganization } from './organization.ts';
import { SignInState } from './signin.ts';
import { TenantStore, type Tenant } from './tenant.ts';
import { isRefusal, refusalResponse, Throttler, tokenIdentity, type ThrottlingConfig } from './throttling.ts';
import { DEFAULT_TOKEN_LIFETIME_SECONDS, TokenService } from './tokens.ts';

export { AGENT_RISK_RATES, DEFAULT_SIZES, generateTenant, groundTruth, agentRiskFlags, permissionsToGrantedRoles, tenantAccounts } from './generate.ts';
export type { AgentRiskCounts, AgentRiskFlags, GenerateOptions, GroundTruth, SignInAccount, TenantAccounts, TenantSizes } from './generate.ts';
export { agentComponentsGroundTruth, componentKind, COMPONENT_KINDS, PLANTED_SECRET_PREFIX } from './agentcomponents.ts';
export type { AgentComponentsGroundTruth, BotComponent, ComponentKind } from './agentcomponents.ts';
export { PLANTED_CARD, transcriptsGroundTruth, turnsOf } from './transcripts.ts';
export type { ConversationTranscript, PlantedCase, TranscriptsGroundTruth } from './transcripts.ts';
export { foundryGroundTruth, READ_ROLES } from './arm.ts';
export { generateOrganizationSettings, organizationSettingsGroundTruth, ORGANIZATION_COLUMNS } from './organization.ts';
export type { OrganizationRow, OrganizationSettingsGroundTruth, OrganizationSettingsModel } from './organization.ts';
export type { AzureEstate, AzureRoleAssignment, AzureSubscription, CognitiveAccount, FoundryGroundTruth } from './arm.ts';
export { ConsentError, consentServicePrincipal, generateManagedApp, revokeServicePrincipalRoles } from './managed.ts';
export type { ManagedApp, ManagedAppOptions } from './managed.ts';
export { CONSENT_BEHAVIORS } from './signin.ts';
export type { ConsentBehavior, DeviceCodeEntry, DeviceCodeSettings } from './signin.ts';
export type * from './tenant.ts';
export { TenantStore } from './tenant.ts';
export { ControlError, EmulatorControl, MODEL_KINDS } from './control.ts';
export type { EnvironmentFlags, LogLeak, MintTokenRequest, ModelKind, PowerBiGroundTruth, ScenarioScore } from './control.ts';
export { DELTA_COLLECTIONS, DirectoryChanges } from './delta.ts';
export {
  BATCH_MAX_REQUESTS,
  EXTERNAL_CONNECTION_ROLES,
  INSTALLED_APPS_PAGE_SIZE,
  INSTALLED_APPS_ROLES,
  generateGraphEstate,
  graphEstateGroundTruth,
  installationId,
} from './graphestate.ts';
export type { ExternalConnection, GraphEstate, GraphEstateGroundTruth, GraphEstateSizes, TeamsCatalogApp } from './graphestate.ts';
export type { DeltaCollection, DirectoryChange } from './delta.ts';
export { FAULT_KINDS } from './faults.ts';
export type { FaultConfig, FaultCounters, FaultKind } from './faults.ts';
export type { ForeignLinkCounters, ForeignLinkRule } from './foreignlinks.ts';
export type { RequestLogEntry } from './log.ts';
export type { ServiceName } from './common.ts';
export type { AccessTokenClaims } from './tokens.ts';
export { PERMISSION_SETS, RESOURCES, SYSTEM_ADMINISTRATOR, DORMANT_DAYS, DIRECTORY_ROLES, PUBLIC_CLIENT_IDS, DATAVERSE_ROLE_NAMES } from './constants.ts';
export { emulatorClient } from './client.ts';
export { EmulatedClock, parseUtc } from './clock.ts';
export type { ClockState } from './clock.ts';
export { CONTENT_TYPES, RECORD_KINDS, isContentType } from './auditrecords.ts';
export type { AuditCatalog, ContentType, FeedUser, KindSpec, RecordKind, RecordVariant } from './auditrecords.ts';
export { CONTENT_RETENTION_MS, DEFAULT_FEED_SETTINGS, DEFAULT_POWER_BI_SETTINGS, FeedStore, TenantFeed, parseFeedTime } from './feed.ts';
export type {
  ActivityTruth,
  AddedContent,
  AuditGroundTruth,
  AuditGroundTruthOptions,
  ContentTypeTruth,
  FeedBlob,
  FeedSettings,
  FeedSettingsPatch,
  FeedSubscription,
  FeedWebhook,
  PowerBiSettings,
  PublisherStats,
} from './feed.ts';
export { ACTIVITY_FEED_READ, DLP_SENSITIVE_TYPES, af429Body, feedMethodName, publisherIdentifierOf } from './manage.ts';
export { FABRIC_ADMINISTRATOR_ROLE, powerBiNotAuthorized } from './powerbi.ts';
export {
  DLP_BUILT_IN_CONNECTORS,
  HTTP_CONNECTORS,
  POWER_PLATFORM_RISK_RATES,
  STANDARD_CONNECTORS,
  dlpApplies,
  emptyPowerPlatform,
  generatePowerPlatform,
  httpSteps,
  isExternalUrl,
  powerPlatformGroundTruth,
} from './powerplatform.ts';
export type {
  ConnectionModel,
  CustomConnectorModel,
  DlpPolicyModel,
  FlowModel,
  FlowStepModel,
  PowerAppModel,
  PowerPlatformGroundTruth,
  PowerPlatformModel,
  PowerPlatformSizes,
  TenantIsolationModel,
} from './powerplatform.ts';
export { changePowerBiWorkspace, generatePowerBiEstate, powerBiInventoryGroundTruth, PowerBiChangeError } from './powerbiinventory.ts';
export { powerBiTenantSettingsGroundTruth } from './powerbitenantsettings.ts';
export type { PowerBiTenantSetting } from './powerbitenantsettings.ts';
export type {
  PowerBiDataset,
  PowerBiDatasource,
  PowerBiEstate,
  PowerBiInventoryTruth,
  PowerBiPrincipal,
  PowerBiReport,
  PowerBiWorkspace,
  PowerBiWorkspaceChange,
} from './powerbiinventory.ts';
export { SCAN_MAX_CONCURRENT, SCAN_MAX_WORKSPACES, SCAN_RESULT_TTL_MS } from './powerbiscanner.ts';
export {
  AI_INTERACTION_ROLE,
  APP_CLASSES,
  COPILOT_SKU_ID,
  addCopilotInteractions,
  copilotGroundTruth,
  generateCopilot,
  parseInteractionFilter,
} from './copilot.ts';
export type { CopilotGroundTruth, CopilotModel, CopilotSizes, PlantedContent, StoredInteraction } from './copilot.ts';
export type { EmulatorClient, EmulatorRequestOptions, EmulatorResponse } from './client.ts';
export {
  ANALYZE_TIMEOUT_MS,
  CopilotStudioError,
  FEDERATED_AUDIENCE,
  THREAT_DETECTION_API_VERSION,
  federatedIssuer,
  federatedSubject,
} from './copilotstudio.ts';
export type {
  AnalyzeOptions,
  AnalyzeOutcome,
  AnalyzeToolExecutionRequest,
  ChatMessage,
  ConversationMetadata,
  FederatedCredential,
  PreviousToolOutput,
  ProtectionScenario,
  ReplayOptions,
  ReplayResult,
  ReplayStep,
  ScenarioDetector,
  ScenarioStep,
  ThreatDetectionSettings,
  ThreatDetectionState,
  ToolDefinition,
  ToolParameter,
  ValidationOutcome,
} from './copilotstudio.ts';
export { UNAPPROVED_MCP_SERVER, installProtectionTools, protectionScenarios } from './protectionscenarios.ts';
export type { ProtectionScenarioOptions, ProtectionScenarioSet, ProtectionToolKey } from './protectionscenarios.ts';

/**
 * The custom cloud profile a client reads from `VIGIL_ENDPOINTS_FILE`: every base URL points at the emulator; each
 * `resource` is the real token audience (scope = `{resource}/.default`). `caFile` is the absolute path of the
 * emulator CA in a written file, null in memory.
 */
export interface EndpointsProfile {
  name: 'custom';
  authorityHost: string;
  graph: { baseUrl: string; resource: string };
  bap: { baseUrl: string; resource: string };
  powerApps: { baseUrl: string; resource: string };
  flow: { baseUrl: string; resource: string };
  powerPlatform: { baseUrl: string; resource: string };
  managementActivity: { baseUrl: string; resource: string };
  powerBi: { baseUrl: string; resource: string };
  arm: { baseUrl: string; resource: string };
  dataverseUrlPrefixes: string[];
  caFile: string | null;
}

/** Options of `startEmulator`. */
export interface StartEmulatorOptions {
  /** TCP port; 0 or absent picks a free one. */
  port?: number;
  /** Listen address. Only 127.0.0.1 is supported (the certificate's SAN). @default '127.0.0.1' */
  host?: '127.0.0.1';
  /** Tenants served from the start (more can be added through `control`). Ids and domains must be unique. */
  tenants: Tenant[];
  /**
   * Multi-tenant managed applications (`generateManagedApp`): their operator tenants are served too (an operator
   * tenant already in `tenants`, as the same object, is not added twice).
   */
  managedApps?: ManagedApp[];
  /** Fault injection from the start (see `FaultConfig`). */
  faults?: FaultConfig;
  /** Enforce the documented limits from the start (see `ThrottlingConfig`, `throttling.ts`). @default off */
  throttling?: ThrottlingConfig;
  /** Initial token lifetime, seconds. @default 3599 */
  tokenLifetimeSeconds?: number;
  /** Request-log capacity (entries). @default 10000 */
  logLimit?: number;
  /**
   * Keep each request's JSON body in the log (`RequestLogEntry.body`), for benchmarks that replay Vigil's requests
   * with a plain client. Never the token endpoint's form body (identity is never logged with a body). @default false
   */
  logBodies?: boolean;
}

/** A running emulator. */
export interface RunningEmulator {
  /** `https://127.0.0.1:PORT` (no trailing slash). */
  url: string;
  port: number;
  /** PEM of the self-signed server certificate: the only CA a client needs to trust. */
  caPem: string;
  /** The custom cloud profile (with `caFile: null`). */
  endpoints: EndpointsProfile;
  /** In-process control (the same operations are served under `/_emulator/`). */
  control: EmulatorControl;
  /**
   * Writes `ca.pem` and `endpoints.json` (with `caFile` = absolute path of ca.pem) into `dir` (created if needed);
   * returns the absolute path of endpoints.json.
   */
  writeEndpointsFile(dir: string): string;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** Builds the endpoints profile for an emulator base URL. */
export function endpointsFor(url: string): EndpointsProfile {
  return {
    name: 'custom',
    authorityHost: url,
    graph: { baseUrl: `${url}/graph`, resource: RESOURCES.graph },
    bap: { baseUrl: `${url}/bap`, resource: RESOURCES.bap },
    powerApps: { baseUrl: `${url}/powerapps`, resource: RESOURCES.bap },
    flow: { baseUrl: `${url}/flow`, resource: RESOURCES.flow },
    powerPlatform: { baseUrl: `${url}/powerplatform`, resource: RESOURCES.powerPlatform },
    managementActivity: { baseUrl: `${url}/manage`, resource: RESOURCES.managementActivity },
    powerBi: { baseUrl: `${url}/powerbi`, resource: RESOURCES.powerBi },
    arm: { baseUrl: `${url}/arm`, resource: RESOURCES.arm },
    dataverseUrlPrefixes: [`${url}/dataverse/`],
    caFile: null,
  };
}

/**
 * Writes `ca.pem` and `endpoints.json` for a running emulator into `dir` (created, mode 0700); returns the absolute
 * path of endpoints.json. The JSON is `emulator.endpoints` with `caFile` set to the absolute ca.pem path.
 */
export function writeEndpointsFile(emulator: Pick<RunningEmulator, 'caPem' | 'endpoints'>, dir: string): string {
  const abs = resolve(dir);
  mkdirSync(abs, { recursive: true, mode: 0o700 });
  const caFile = join(abs, 'ca.pem');
  writeFileSync(caFile, emulator.caPem);
  const file = join(abs, 'endpoints.json');
  writeFileSync(file, `${JSON.stringify({ ...emulator.endpoints, caFile }, null, 2)}\n`);
  return file;
}

/** The parts of a request a replaying client needs besides its path: JSON body and the headers that shape the answer. */
function replayable(req: FastifyRequest): Pick<RequestLogEntry, 'body' | 'headers'> {
  const headers: Record<string, string> = {};
  for (const name of ['prefer', 'consistencylevel', 'content-type']) {
    const v = req.headers[name];
    if (typeof v === 'string') headers[name] = v;
  }
  return { ...(req.method !== 'GET' && req.body !== undefined ? { body: JSON.stringify(req.body) } : {}), headers };
}

interface RequestState {
  service: RouteService;
  start: number;
  fault?: FaultKind;
  /** Answered 429/AF429 by the enforced limits. */
  throttled?: boolean;
  logged?: boolean;
}

const STATE = Symbol('emulatorRequestState');
type WithState = FastifyRequest & { [STATE]?: RequestState };

function stateOf(req: FastifyRequest): RequestState {
  const r = req as WithState;
  let s = r[STATE];
  if (!s) {
    s = { service: serviceOf(req.url), start: performance.now() };
    r[STATE] = s;
  }
  return s;
}

/**
 * Starts the emulator: generates the TLS certificate and the token-signing key, listens on 127.0.0.1, and serves
 * the given tenants. Rejects when the port is taken or when two tenants share an id or a domain.
 */
export async function startEmulator(options: StartEmulatorOptions): Promise<RunningEmulator> {
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1') throw new RangeError(`host must be 127.0.0.1, got ${String(host)}`);
  const [tls, signing] = await Promise.all([generateTlsMaterial(), generateSigningMaterial()]);
  const store = new TenantStore(options.tenants);
  const served = new Set<Tenant>(options.tenants);
  for (const m of options.managedApps ?? []) {
    if (served.has(m.tenant)) continue;
    served.add(m.tenant);
    store.add(m.tenant);
  }
  const tokens = new TokenService(signing, options.tokenLifetimeSeconds ?? DEFAULT_TOKEN_LIFETIME_SECONDS);
  const faults = new FaultInjector(options.faults);
  const throttling = new Throttler((tid) => store.get(tid)?.users.length);
  if (options.throttling) throttling.set(options.throttling);
  const foreignLinks = new ForeignLinks();
  const log = new RequestLog(options.logLimit);
  const signIn = new SignInState();
  const clock = new EmulatedClock();
  const feeds = new FeedStore(store, clock);
  const changes = new DirectoryChanges();
  let baseUrl = '';
  const control = new EmulatorControl({ store, tokens, faults, throttling, log, signIn, feeds, changes, foreignLinks, baseUrl: () => baseUrl });

  const ctx: EmulatorContext = { store, tokens, signIn, baseUrl: () => baseUrl };
  const feedCtx = { ...ctx, feeds };
  const publisherOf = (service: RouteService, url: string): { publisherIdentifier?: string | null } =>
    service === 'managementActivity' ? { publisherIdentifier: publisherIdentifierOf(url) ?? null } : {};

  const app: FastifyInstance = Fastify({
    https: { key: tls.key, cert: tls.cert },
    logger: false,
    forceCloseConnections: true,
    keepAliveTimeout: 5_000,
    bodyLimit: 16 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
  });

  // Form bodies for the token endpoint; JSON bodies may be empty (TF sends PUT adminApplications with no body).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch {
      const err = new Error('The request body is not valid JSON.') as Error & { statusCode: number };
      err.statusCode = 400;
      done(err, undefined);
    }
  });

  app.addHook('onRequest', async (req) => {
    stateOf(req);
  });

  // The documented limits (throttling.ts), before random faults: a throttled request is answered here.
  app.addHook('preHandler', async (req, reply) => {
    const state = stateOf(req);
    if (state.service === 'control' || !throttling.enabled || isBatchInner(req)) return;
    const service = state.service;
    const verdict = throttling.admit({ service, method: req.method, url: req.url, claims: tokenIdentity(req) });
    if (!verdict) return;
    if (!isRefusal(verdict)) {
      for (const [k, v] of Object.entries(verdict.headers)) reply.header(k, v);
      if (verdict.release) reply.raw.once('close', verdict.release);
      return;
    }
    state.throttled = true;
    const requestId = (reply.getHeader('request-id') as string | undefined) ?? newId();
    const answer = refusalResponse(service, verdict, req.url, requestId);
    for (const [k, v] of Object.entries(answer.headers)) reply.header(k, v);
    await reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
    return reply;
  });

  app.addHook('preHandler', async (req, reply) => {
    const state = stateOf(req);
    if (state.service === 'control' || state.throttled || isBatchInner(req)) return;
    const decision = faults.decide(state.service, req.url.split('?')[0] ?? req.url);
    if (!decision) return;
    state.fault = decision.kind;
    if (decision.kind === 'reset') {
      state.logged = true;
      log.add({
        time: new Date().toISOString(),
        method: req.method,
        service: state.service,
        path: redactPath(req.url),
        status: 0,
        fault: 'reset',
        durationMs: performance.now() - state.start,
        ...publisherOf(state.service, req.url),
      });
      reply.hijack();
      req.raw.socket.destroy();
      return;
    }
    if (decision.kind === 'truncate') return; // the real response is produced, then cut in onSend
    if (decision.kind === 'af429' && state.service === 'managementActivity') {
      await reply.code(403).type('application/json; charset=utf-8').send(af429Body(req.url));
      return reply;
    }
    const status = decision.kind === '503' ? 503 : 429;
    const requestId = newId();
    if (decision.retryAfter !== undefined) reply.header('retry-after', decision.retryAfter);
    if (state.service === 'graph') reply.header('request-id', requestId);
    await reply
      .code(status)
      .type('application/json')
      .send(faultBody(state.service, status, requestId));
    return reply;
  });

  // Foreign links (control `setForeignLinks`): rewritten before a truncate fault cuts the body.
  app.addHook('onSend', async (req, reply, payload) => {
    const state = stateOf(req);
    if (state.service === 'control') return payload;
    const rules = foreignLinks.matching(state.service, req.url.split('?')[0] ?? req.url);
    if (rules.length === 0) return payload;
    const out = foreignLinks.apply(rules, baseUrl, payload, { get: (name) => reply.getHeader(name), set: (name, value) => void reply.header(name, value) });
    if (out !== payload && typeof out === 'string' && reply.getHeader('content-length') !== undefined)
      reply.header('content-length', String(Buffer.byteLength(out)));
    return out;
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const state = stateOf(req);
    if (state.fault !== 'truncate') return payload;
    let buf: Buffer;
    if (typeof payload === 'string') buf = Buffer.from(payload);
    else if (Buffer.isBuffer(payload)) buf = payload;
    else return payload; // streams are not truncated
    reply.header('content-length', String(buf.length));
    // The response never finishes, so onResponse may not run: log here.
    state.logged = true;
    log.add({
      time: new Date().toISOString(),
      method: req.method,
      service: state.service as ServiceName,
      path: redactPath(req.url),
      status: reply.statusCode,
      fault: 'truncate',
      durationMs: performance.now() - state.start,
      ...publisherOf(state.service, req.url),
    });
    const half = buf.subarray(0, Math.floor(buf.length / 2));
    let pushed = false;
    return new Readable({
      read() {
        if (pushed) return;
        pushed = true;
        this.push(half);
        setTimeout(() => this.destroy(new Error('emulator truncate fault')), 20);
      },
    });
  });

  app.addHook('onResponse', async (req, reply) => {
    const state = stateOf(req);
    if (state.service === 'control' || state.logged || isBatchInner(req)) return;
    state.logged = true;
    log.add({
      time: new Date().toISOString(),
      method: req.method,
      service: state.service,
      path: redactPath(req.url),
      status: reply.statusCode,
      ...(state.fault ? { fault: state.fault } : {}),
      ...(options.logBodies && state.service !== 'identity' ? replayable(req) : {}),
      ...(state.throttled ? { throttled: true as const } : {}),
      durationMs: performance.now() - state.start,
      ...publisherOf(state.service, req.url),
    });
  });

  app.setErrorHandler(async (err: Error & { statusCode?: number }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (serviceOf(req.url) === 'identity') return reply.code(status).send(aadError(ctx, req, 900144, 'invalid_request', err.message));
    return reply.code(status).send({ error: { code: status === 500 ? 'InternalServerError' : 'BadRequest', message: err.message } });
  });

  app.setNotFoundHandler(async (req: FastifyRequest, reply: FastifyReply) => {
    switch (serviceOf(req.url)) {
      case 'graph':
        return graphNotFound(req, reply);
      case 'bap':
      case 'powerApps':
      case 'flow':
        return bapNotFound(req, reply);
      case 'powerPlatform':
        return powerPlatformNotFound(req, reply);
      case 'dataverse':
        return dataverseNotFound(req, reply);
      case 'managementActivity':
        return manageNotFound(req, reply);
      case 'powerBi':
        return powerBiNotFound(req, reply);
      case 'arm':
        return armNotFound(req, reply);
      case 'identity':
        return reply.code(404).send({ error: 'not_found', error_description: `The emulator does not serve ${req.method} ${req.url.split('?')[0] ?? ''}.` });
      case 'control':
        return reply.code(404).send({ error: { code: 'NotFound', message: `no control route ${req.method} ${req.url.split('?')[0] ?? ''}` } });
      default:
        return reply.code(404).send({ error: { code: 'NotImplemented', message: `The emulator does not serve ${serviceOf(req.url)} yet.` } });
    }
  });

  registerIdentity(app, ctx);
  await app.register(
    async (scope) => {
      registerGraph(scope, { ...ctx, changes, faults, throttling });
      registerGraphEstate(scope, { ...ctx, changes, faults, throttling });
    },
    { prefix: '/graph' },
  );
  await app.register(
    async (scope) => registerCopilot(scope, ctx, { authenticate: (req, reply) => graphAuthenticate(ctx, req, reply), sendError: graphSendError }),
    { prefix: '/graph' },
  );
  await app.register(async (scope) => registerCopilotControl(scope, ctx), { prefix: '/_emulator' });
  await app.register(async (scope) => registerBap(scope, ctx), { prefix: '/bap' });
  await app.register(async (scope) => registerPowerPlatformGovernance(scope, ctx), { prefix: '/bap' });
  await app.register(async (scope) => registerPowerApps(scope, ctx), { prefix: '/powerapps' });
  await app.register(async (scope) => registerFlow(scope, ctx), { prefix: '/flow' });
  await app.register(async (scope) => registerQuarantine(scope, ctx), { prefix: '/powerplatform' });
  await app.register(async (scope) => registerDataverse(scope, feedCtx), { prefix: '/dataverse' });
  await app.register(async (scope) => registerOrganization(scope, ctx), { prefix: '/dataverse' });
  await app.register(async (scope) => registerArm(scope, ctx), { prefix: '/arm' });
  await app.register(async (scope) => registerManage(scope, feedCtx), { prefix: '/manage' });
  await app.register(async (scope) => registerPowerBi(scope, feedCtx), { prefix: '/powerbi' });
  await app.register(async (scope) => registerPowerBiScanner(scope, feedCtx), { prefix: '/powerbi' });
  await app.register(async (scope) => registerPowerBiTenantSettings(scope, feedCtx), { prefix: '/powerbi' });
  let endpoints = endpointsFor('https://127.0.0.1:0');
  await app.register(async (scope) => registerControl(scope, control, { endpoints: () => endpoints, caPem: () => tls.cert }), { prefix: '/_emulator' });

  await app.listen({ port: options.port ?? 0, host });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('emulator: no TCP address after listen');
  const port = address.port;
  baseUrl = `https://127.0.0.1:${port}`;
  endpoints = endpointsFor(baseUrl);

  const running: RunningEmulator = {
    url: baseUrl,
    port,
    caPem: tls.cert,
    endpoints,
    control,
    writeEndpointsFile: (dir: string) => writeEndpointsFile(running, dir),
    close: async () => {
      control.close();
      await app.close();
    },
  };
  return running;
}

/** Services that may be named in `FaultConfig.services`. */
export const SERVICES: readonly ServiceName[] = [
  'identity',
  'graph',
  'bap',
  'powerApps',
  'flow',
  'powerPlatform',
  'dataverse',
  'managementActivity',
  'powerBi',
  'arm',
];
