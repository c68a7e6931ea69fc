/**
 * The emulated Copilot Studio runtime as a caller of an external threat-detection provider (issue 19, point 6),
 * against an in-test stub provider (HTTPS with its own self-signed certificate, and plain HTTP).
 */
import { createLocalJWKSet, jwtVerify } from 'jose';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient, type EmulatorClient } from '../../emulator/client.ts';
import { federatedSubject, type AnalyzeToolExecutionRequest } from '../../emulator/copilotstudio.ts';
import { generateTenant } from '../../emulator/generate.ts';
import { ControlError, startEmulator, type RunningEmulator, type Tenant } from '../../emulator/index.ts';
import { generateTlsMaterial } from '../../emulator/keys.ts';
import { protectionScenarios } from '../../emulator/protectionscenarios.ts';

/** One request the stub provider received. */
interface Received {
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  text: string;
  body: AnalyzeToolExecutionRequest | null;
}

/** What the stub answers: status, JSON body and a delay (ms). */
type Answer = { status: number; body: unknown; delayMs?: number };

/** A stub provider: records requests, answers with `answer(received)`. */
class StubProvider {
  readonly received: Received[] = [];
  answer: (r: Received) => Answer = (r) => (r.path.endsWith('/validate') ? { status: 200, body: { isSuccessful: true, status: 'OK' } } : allow());
  server!: Server;
  base = '';

  async start(kind: 'https' | 'http'): Promise<this> {
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const text = Buffer.concat(chunks).toString('utf8');
        const r: Received = {
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          text,
          body: text ? (JSON.parse(text) as AnalyzeToolExecutionRequest) : null,
        };
        this.received.push(r);
        const a = this.answer(r);
        const send = (): void => {
          if (res.destroyed) return;
          res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
        };
        if (a.delayMs) setTimeout(send, a.delayMs);
        else send();
      });
    };
    if (kind === 'https') {
      this.tls = await generateTlsMaterial();
      this.server = createHttpsServer({ key: this.tls.key, cert: this.tls.cert }, handler);
    } else this.server = createHttpServer(handler);
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `${kind}://127.0.0.1:${(this.server.address() as AddressInfo).port}/protection/ep-1`;
    return this;
  }

  tls: { key: string; cert: string } | null = null;

  analyzed(): Received[] {
    return this.received.filter((r) => r.path.endsWith('/analyze-tool-execution'));
  }

  reset(): void {
    this.received.length = 0;
    this.answer = (r) => (r.path.endsWith('/validate') ? { status: 200, body: { isSuccessful: true, status: 'OK' } } : allow());
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const allow = (): Answer => ({ status: 200, body: { blockAction: false, reasonCode: 0, reason: 'allowed', diagnostics: '' } });
const block = (): Answer => ({ status: 200, body: { blockAction: true, reasonCode: 112, reason: 'blocked by policy', diagnostics: 'stub' } });
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let emu: RunningEmulator;
let http: EmulatorClient;
let tenant: Tenant;
let stub: StubProvider;
let plain: StubProvider;
let envId: string;
let appId: string;

beforeAll(async () => {
  tenant = generateTenant({ seed: 'copilot-studio-protection', sizes: { users: 12, groups: 2, environments: 2, agents: 4 } });
  emu = await startEmulator({ tenants: [tenant] });
  http = emulatorClient(emu);
  [stub, plain] = await Promise.all([new StubProvider().start('https'), new StubProvider().start('http')]);
  envId = tenant.environments.find((e) => (e.dataverse?.bots.length ?? 0) > 0)!.name;
  appId = emu.control.registerThreatDetectionApp(tenant.id, { baseUrl: stub.base }).appId;
  const saved = await emu.control.setThreatDetection(tenant.id, envId, { appId, baseUrl: stub.base, errorBehavior: 'allow', ca: stub.tls!.cert });
  expect(saved.saved).toBe(true);
});

afterEach(() => {
  stub.reset();
  plain.reset();
});

afterAll(async () => {
  await http.close();
  await emu.close();
  await Promise.all([stub.close(), plain.close()]);
});

/** Sets the environment's error behaviour (saving validates again). */
async function errorBehavior(value: 'allow' | 'block'): Promise<void> {
  stub.reset();
  const r = await emu.control.setThreatDetection(tenant.id, envId, { appId, baseUrl: stub.base, errorBehavior: value, ca: stub.tls!.cert });
  expect(r.saved).toBe(true);
  stub.reset();
}

describe('threat-detection app and federated credential', () => {
  it('computes the documented subject (tenant GUID bytes in .NET order, base64url; base URL UTF-8 base64url)', () => {
    // Expected values computed independently with Python: uuid.UUID(g).bytes_le and base64.urlsafe_b64encode.
    expect(federatedSubject('00112233-4455-6677-8899-aabbccddeeff', 'https://vigil.example.com/protection/ep1')).toBe(
      '/eid1/c/pub/t/MyIRAFVEd2aImaq7zN3u_w/a/m1WPnYRZpEaQKq1Cceg--g/aHR0cHM6Ly92aWdpbC5leGFtcGxlLmNvbS9wcm90ZWN0aW9uL2VwMQ',
    );
    expect(() => federatedSubject('not-a-guid', 'https://x')).toThrow(RangeError);
  });

  it('registers a single-tenant app with Application ID URI = base URL and the credential', () => {
    const r = emu.control.registerThreatDetectionApp(tenant.id, { baseUrl: 'https://vigil.example.com/protection/ep9/', displayName: 'Vigil protection' });
    expect(r.federatedCredential).toEqual({
      name: 'CopilotStudioThreatDetection',
      issuer: `https://login.microsoftonline.com/${tenant.id}/v2.0`,
      subject: federatedSubject(tenant.id, 'https://vigil.example.com/protection/ep9'),
      audiences: ['api://AzureADTokenExchange'],
    });
    const app = tenant.apps.find((a) => a.appId === r.appId)!;
    expect(app).toMatchObject({
      displayName: 'Vigil protection',
      signInAudience: 'AzureADMyOrg',
      identifierUris: ['https://vigil.example.com/protection/ep9'],
    });
    expect(() => emu.control.registerThreatDetectionApp(tenant.id, { baseUrl: 'ftp://x' })).toThrow(ControlError);
  });
});

describe('set-up validates the endpoint', () => {
  it('POSTs {base}/validate?api-version=2025-05-01 with an empty body and a bearer token, and records the outcome', async () => {
    await errorBehavior('allow');
    const r = await emu.control.setThreatDetection(tenant.id, envId, { appId, baseUrl: stub.base, errorBehavior: 'allow', ca: stub.tls!.cert });
    expect(stub.received).toHaveLength(1);
    const v = stub.received[0]!;
    expect(v.path).toBe('/protection/ep-1/validate');
    expect(v.query.get('api-version')).toBe('2025-05-01');
    expect(v.text).toBe('');
    expect(v.headers.authorization).toMatch(/^Bearer ey/);
    expect(v.headers['x-ms-correlation-id']).toMatch(GUID);
    expect(r).toMatchObject({ saved: true, settings: { appId, baseUrl: stub.base, errorBehavior: 'allow' }, lastValidation: { ok: true, status: 200 } });
    expect(JSON.stringify(r)).not.toContain('BEGIN CERTIFICATE');
  });

  it('does not save settings whose validation fails, and says why', async () => {
    stub.answer = () => ({ status: 401, body: { errorCode: 401, message: 'bad token', httpStatus: 401, diagnostics: '' } });
    const r = await emu.control.setThreatDetection(tenant.id, envId, { appId, baseUrl: stub.base, errorBehavior: 'block', ca: stub.tls!.cert });
    expect(r.saved).toBe(false);
    expect(r.lastValidation).toMatchObject({ ok: false, status: 401 });
    expect(r.settings?.errorBehavior).toBe('allow'); // the previous settings stay
    // An app whose credential does not name this endpoint gets no token: nothing is sent.
    stub.reset();
    const other = emu.control.registerThreatDetectionApp(tenant.id, { baseUrl: 'https://elsewhere.example.com/p' }).appId;
    const r2 = await emu.control.setThreatDetection(tenant.id, envId, { appId: other, baseUrl: stub.base, errorBehavior: 'allow', ca: stub.tls!.cert });
    expect(r2.saved).toBe(false);
    expect(r2.lastValidation?.error).toMatch(/^AADSTS70021/);
    expect(stub.received).toHaveLength(0);
  });
});

describe('analyze-tool-execution', () => {
  it('sends the documented request with a token of the tenant for the app (aud = base URL), and the next step sees the previous output', async () => {
    const r = await emu.control.replayConversation(tenant.id, envId, 'benign-email-colleague');
    expect(r).toMatchObject({ blocked: false, stoppedAt: null, label: 'benign' });
    expect(r.steps.map((s) => [s.outcome.by, s.outcome.blocked, s.ran])).toEqual([
      ['provider', false, true],
      ['provider', false, true],
    ]);
    const got = stub.analyzed();
    expect(got).toHaveLength(2);
    const [first, second] = got as [Received, Received];
    expect(first.path).toBe('/protection/ep-1/analyze-tool-execution');
    expect(first.query.get('api-version')).toBe('2025-05-01');
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.headers['x-ms-correlation-id']).toBe(r.steps[0]!.outcome.correlationId);
    expect(r.steps[0]!.outcome.url).toBe(`${stub.base}/analyze-tool-execution?api-version=2025-05-01`);
    expect(first.headers['x-ms-correlation-id']).toMatch(GUID);

    // The token verifies against the tenant's published keys.
    const keys = await http.get(`/${tenant.id}/discovery/v2.0/keys`);
    const token = (first.headers.authorization ?? '').replace(/^Bearer /, '');
    const { payload } = await jwtVerify(token, createLocalJWKSet(keys.json), { issuer: `https://sts.windows.net/${tenant.id}/`, audience: stub.base });
    expect(payload).toMatchObject({ appid: appId, tid: tenant.id, idtyp: 'app' });
    expect(JSON.stringify(r)).not.toContain(token);

    // Body shape.
    const b = first.body!;
    expect(Object.keys(b).sort()).toEqual(['conversationMetadata', 'inputValues', 'plannerContext', 'toolDefinition']);
    expect(Object.keys(b.plannerContext).sort()).toEqual(['chatHistory', 'previousToolsOutputs', 'thought', 'userMessage']);
    expect(b.plannerContext.chatHistory.at(-1)).toMatchObject({ role: 'user', content: b.plannerContext.userMessage });
    expect(b.plannerContext.previousToolsOutputs).toEqual([]);
    const bot = tenant.environments.find((e) => e.name === envId)!.dataverse!.bots.find((x) => x.botid === b.conversationMetadata.agent.id)!;
    expect(b.toolDefinition).toMatchObject({ id: `${bot.schemaname}.action.GetOrderStatus-GetOrderStatus`, type: 'CustomConnectorToolDefinition' });
    expect(b.toolDefinition.inputParameters[0]).toEqual({ name: 'orderNumber', description: expect.any(String), type: { $kind: 'String' } });
    expect(b.inputValues).toEqual({ orderNumber: expect.stringMatching(/^SO-\d{5}$/) });
    const m = b.conversationMetadata;
    expect(m.agent).toEqual({
      id: bot.botid,
      tenantId: tenant.id,
      environmentId: envId,
      name: bot.name,
      version: expect.any(String),
      isPublished: bot.publishedon !== null,
    });
    expect(m.user).toEqual({ id: expect.stringMatching(GUID), tenantId: tenant.id });
    expect(Object.keys(m).sort()).toEqual(
      ['agent', 'channelId', 'conversationId', 'incomingClientIp', 'messageId', 'parentAgentComponentId', 'planId', 'planStepId', 'trigger', 'user'].sort(),
    );

    // The second step: the first tool ran, its output is in previousToolsOutputs; same conversation and plan.
    const b2 = second.body!;
    expect(b2.toolDefinition.id).toBe(`${bot.schemaname}.action.SendEmail-SendEmail`);
    expect(b2.plannerContext.previousToolsOutputs).toEqual([
      {
        toolId: b.toolDefinition.id,
        toolName: b.toolDefinition.name,
        outputs: expect.arrayContaining([{ name: 'status', value: 'Shipped' }]),
        timestamp: expect.any(String),
      },
    ]);
    expect(b2.conversationMetadata).toMatchObject({ conversationId: m.conversationId, planId: m.planId });
    expect(b2.conversationMetadata.planStepId).not.toBe(m.planStepId);
    expect(String(b2.inputValues.To)).toMatch(new RegExp(`@${tenant.domains[0]!.replace(/\./g, '\\.')}$`));
  });

  it('can spell the field as the sample does (previousToolOutputs)', async () => {
    await emu.control.replayConversation(tenant.id, envId, 'benign-email-colleague', { toolOutputsField: 'previousToolOutputs' });
    const b2 = stub.analyzed()[1]!.body!;
    expect(b2.plannerContext.previousToolOutputs).toHaveLength(1);
    expect(b2.plannerContext).not.toHaveProperty('previousToolsOutputs');
  });

  it('a block stops the conversation', async () => {
    stub.answer = (r) => (r.body?.toolDefinition.name === 'Send an email (V2)' ? block() : allow());
    const r = await emu.control.replayConversation(tenant.id, envId, 'attack-injected-document-email');
    expect(r).toMatchObject({ blocked: true, stoppedAt: 1, detector: 'prompt_injection' });
    expect(r.steps[1]!.outcome).toMatchObject({ blocked: true, by: 'provider', status: 200, response: { blockAction: true, reasonCode: 112 } });
    expect(r.steps[1]!.ran).toBe(false);
    stub.reset();
    stub.answer = () => block();
    const r2 = await emu.control.replayConversation(tenant.id, envId, 'benign-email-colleague');
    expect(r2).toMatchObject({ blocked: true, stoppedAt: 0 });
    expect(stub.analyzed()).toHaveLength(1); // the e-mail step was never analysed
  });

  it('a provider slower than 1,000 ms: the error behaviour applies (allow, then block)', async () => {
    stub.answer = (r) => (r.path.endsWith('/validate') ? { status: 200, body: { isSuccessful: true } } : { ...block(), delayMs: 1300 });
    const r = await emu.control.replayConversation(tenant.id, envId, 'benign-email-colleague');
    expect(r.steps.map((s) => [s.outcome.by, s.outcome.blocked, s.outcome.status])).toEqual([
      ['timeout', false, null],
      ['timeout', false, null],
    ]);
    expect(r.steps[0]!.outcome.latencyMs).toBeGreaterThanOrEqual(995);
    expect(r.steps[0]!.outcome.latencyMs).toBeLessThan(1250);
    await errorBehavior('block');
    stub.answer = (x) => (x.path.endsWith('/validate') ? { status: 200, body: { isSuccessful: true } } : { ...allow(), delayMs: 1300 });
    const r2 = await emu.control.replayConversation(tenant.id, envId, 'benign-email-colleague');
    expect(r2).toMatchObject({ blocked: true, stoppedAt: 0 });
    expect(r2.steps[0]!.outcome).toMatchObject({ by: 'timeout', blocked: true });
    await errorBehavior('allow');
  }, 10_000);

  it('a 500 (or an answer without blockAction): the error behaviour applies', async () => {
    stub.answer = () => ({ status: 500, body: { errorCode: 500, message: 'boom', httpStatus: 500, diagnostics: '' } });
    const r = await emu.control.replayConversation(tenant.id, envId, 'benign-order-lookup');
    expect(r.steps[0]!.outcome).toMatchObject({ by: 'error', blocked: false, status: 500 });
    expect(r.blocked).toBe(false);
    await errorBehavior('block');
    stub.answer = (x) => (x.path.endsWith('/validate') ? { status: 200, body: { isSuccessful: true } } : { status: 500, body: {} });
    const r2 = await emu.control.replayConversation(tenant.id, envId, 'benign-order-lookup');
    expect(r2.steps[0]!.outcome).toMatchObject({ by: 'error', blocked: true, status: 500 });
    expect(r2.blocked).toBe(true);
    stub.answer = (x) => (x.path.endsWith('/validate') ? { status: 200, body: { isSuccessful: true } } : { status: 200, body: { allowed: true } });
    const r3 = await emu.control.replayConversation(tenant.id, envId, 'benign-order-lookup');
    expect(r3.steps[0]!.outcome).toMatchObject({ by: 'error', blocked: true, status: 200 });
    await errorBehavior('allow');
  });

  it('calls a plain-HTTP provider on localhost', async () => {
    const env2 = tenant.environments.find((e) => e.name !== envId && (e.dataverse?.bots.length ?? 0) > 0)!;
    const app2 = emu.control.registerThreatDetectionApp(tenant.id, { baseUrl: plain.base }).appId;
    const saved = await emu.control.setThreatDetection(tenant.id, env2.name, { appId: app2, baseUrl: plain.base, errorBehavior: 'allow' });
    expect(saved.saved).toBe(true);
    expect(plain.received[0]!.path).toBe('/protection/ep-1/validate');
    const r = await emu.control.replayConversation(tenant.id, env2.name, 'benign-create-ticket');
    expect(r.steps[0]!.outcome).toMatchObject({ by: 'provider', blocked: false, status: 200 });
    expect(plain.analyzed()[0]!.body!.conversationMetadata.agent.environmentId).toBe(env2.name);
    expect(plain.analyzed()[0]!.headers.authorization).toMatch(/^Bearer ey/);
  });

  it('refuses to replay in an environment without threat detection (409)', async () => {
    const bare = tenant.environments.find((e) => e.name !== envId)!;
    emu.control.clearThreatDetection(tenant.id, bare.name);
    expect(emu.control.threatDetection(tenant.id, bare.name)).toEqual({ environmentId: bare.name, settings: null, lastValidation: null });
    const s = protectionScenarios(tenant, { environment: envId }).scenarios[0]!;
    await expect(emu.control.replayConversation(tenant.id, bare.name, s)).rejects.toMatchObject({ status: 409, code: 'ThreatDetectionNotConfigured' });
  });
});

describe('scenarios', () => {
  it("are built from the agent's components, the tenant's users and domain, and are labelled", () => {
    const set = protectionScenarios(tenant, { environment: envId });
    const env = tenant.environments.find((e) => e.name === envId)!;
    const schemaNames = new Set(env.dataverse!.botcomponents!.filter((c) => c._parentbotid_value === set.botId).map((c) => c.schemaname));
    const ids = set.scenarios.map((s) => s.id);
    expect(ids).toEqual(expect.arrayContaining(['benign-order-lookup', 'benign-email-colleague', 'benign-knowledge-search', 'benign-create-ticket']));
    expect(new Set(set.scenarios.filter((s) => s.label === 'attack').map((s) => s.detector))).toEqual(
      new Set(['prompt_injection', 'jailbreak', 'sensitive_data_egress', 'external_recipient', 'unapproved_tool', 'changed_agent']),
    );
    for (const s of set.scenarios) {
      expect(s.label === 'benign' ? s.attackStep : s.steps[s.attackStep!]).not.toBeUndefined();
      expect(tenant.users.some((u) => u.id === s.user.id)).toBe(true);
      for (const st of s.steps) {
        expect(st.tool.id.startsWith(`${set.botSchemaName}.action.`)).toBe(true);
        expect(schemaNames.has(st.tool.id)).toBe(s.detector !== 'changed_agent');
      }
    }
    const external = set.scenarios.find((s) => s.id === 'attack-external-recipient')!;
    expect(String(external.steps[0]!.inputValues.To).endsWith(tenant.domains[0]!)).toBe(false);
    const secret = set.scenarios.find((s) => s.id === 'attack-secret-in-http')!;
    expect(String(secret.steps[0]!.inputValues.body)).toMatch(/AKIA[A-Z2-7]{16}/);
    // Installing is idempotent: building again adds no rows.
    const before = env.dataverse!.botcomponents!.length;
    protectionScenarios(tenant, { environment: envId });
    expect(env.dataverse!.botcomponents!.length).toBe(before);
  });
});

describe('over HTTP (/_emulator/copilot-studio/…)', () => {
  it('registers the app, sets up the environment, lists scenarios and replays one', async () => {
    const reg = await http.request('POST', '/_emulator/copilot-studio/threat-detection-apps', { body: { tenant: tenant.id, baseUrl: stub.base } });
    expect(reg.status).toBe(201);
    expect(reg.json.federatedCredential.subject).toBe(federatedSubject(tenant.id, stub.base));
    const put = await http.request('PUT', `/_emulator/copilot-studio/threat-detection/${tenant.id}/${envId}`, {
      body: { appId: reg.json.appId, baseUrl: stub.base, errorBehavior: 'block', ca: stub.tls!.cert },
    });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ saved: true, settings: { appId: reg.json.appId, errorBehavior: 'block' } });
    expect(put.text).not.toContain('BEGIN CERTIFICATE');
    const list = await http.get(`/_emulator/copilot-studio/scenarios/${tenant.id}/${envId}`);
    expect(list.status).toBe(200);
    expect(list.json.scenarios.length).toBeGreaterThanOrEqual(11);
    stub.answer = (r) => (r.body?.conversationMetadata ? block() : allow());
    const replay = await http.request('POST', '/_emulator/copilot-studio/replay', {
      body: { tenant: tenant.id, environment: envId, scenario: 'attack-jailbreak' },
    });
    expect(replay.status).toBe(200);
    expect(replay.json).toMatchObject({ scenarioId: 'attack-jailbreak', blocked: true, stoppedAt: 0, detector: 'jailbreak' });
    const unknown = await http.request('POST', '/_emulator/copilot-studio/replay', { body: { tenant: tenant.id, environment: envId, scenario: 'nope' } });
    expect(unknown.status).toBe(404);
    // Replaying every scenario scores them: blocking everything stops every attack and no benign conversation runs.
    stub.answer = () => block();
    const all = await http.request('POST', '/_emulator/copilot-studio/replay-all', { body: { tenant: tenant.id, environment: envId } });
    expect(all.status).toBe(200);
    expect(all.json).toMatchObject({ benign: 4, benignAllowed: 0, attacks: 7, attacksStopped: 7 });
    stub.answer = () => allow();
    const none = await emu.control.replayScenarios(tenant.id, envId);
    expect(none).toMatchObject({ benign: 4, benignAllowed: 4, attacks: 7, attacksStopped: 0 });
    expect(none.results.find((x) => x.scenarioId === 'benign-email-colleague')).toMatchObject({ decidedBy: ['provider', 'provider'], ok: true });
    const got = await http.get(`/_emulator/copilot-studio/threat-detection/${tenant.id}/${envId}`);
    expect(got.json.settings.appId).toBe(reg.json.appId);
    // Back to the suite's app, for any test run after this one.
    await emu.control.setThreatDetection(tenant.id, envId, { appId, baseUrl: stub.base, errorBehavior: 'allow', ca: stub.tls!.cert });
  });
});
