import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';
import type { Runtime } from '../../src/main/runtime.ts';
import { protectionService } from '../../src/main/service.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { enableProtection, protectionEvents, protectionSetupReport } from '../../src/protection/endpoints.ts';
import { setProtectionPolicy } from '../../src/protection/policies.ts';
import { collectIntegration } from '../../src/sync/run.ts';
import { world, type World } from './harness.ts';
import { freePort } from '../support/process.ts';

/**
 * Runtime protection end to end (issue 19): the emulator's Copilot Studio runtime calls Vigil's endpoint the documented
 * way — set-up saved in the admin center calls /validate, then conversations with tool calls, each call with a token
 * the emulated Entra ID signs for the tenant's threat-detection application — over real HTTP to a listening server,
 * against the inventory Vigil collected from the same tenant.
 */

describe('runtime protection: Copilot Studio calls Vigil', () => {
  let w: World;
  let rt: Runtime;
  let server: FastifyInstance;
  let integrationId: string;
  let baseUrl: string;
  let appId: string;
  let environmentId: string;
  let botId: string;
  let slowClock = false;
  let skew = 0;

  beforeAll(async () => {
    w = await world({
      seed: 'protection-e2e',
      sizes: { users: 12, guests: 1, groups: 2, environments: 2, agents: 4, apps: 0, flows: 0, connections: 0, powerBiWorkspaces: 0, foundryAccounts: 0 },
    });
    // The scenarios install their tools on the agent first, so the collection below sees the agent as it is.
    ({ environmentId, botId } = w.emulator.control.protectionScenarios(w.tenant.id));
    const port = await freePort();
    rt = await w.runtime(undefined, { VIGIL_API_URL: `http://127.0.0.1:${port}` });
    ({
      integration: { id: integrationId },
    } = await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret }));
    await collectIntegration(rt, integrationId);
    // Policies apply within 200 ms instead of 10 s; the engine's clock runs 300 ms per reading once `slowClock` is set,
    // so the internal budget runs out as it would on an overloaded machine.
    const clock = () => performance.now() + (slowClock ? (skew += 300) : skew);
    server = await buildServer({
      ready: async () => ({ ok: true, detail: {} }),
      protection: protectionService(rt, { cacheMs: 200, clock }),
      metrics: rt.metrics,
    });
    await server.listen({ port, host: '127.0.0.1' });
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await rt?.close();
    await w?.close();
  });

  it('set-up in order: the base URL first, calls refused until the application is given, then validated as the admin center saves it', async () => {
    const first = await enableProtection(rt.db, { integrationId, apiUrl: rt.config.region.apiUrl ?? null });
    expect(first.appId).toBeNull();
    baseUrl = first.baseUrl!;
    ({ appId } = w.emulator.control.registerThreatDetectionApp(w.tenant.id, { baseUrl }));
    const refused = await w.emulator.control.setThreatDetection(w.tenant.id, environmentId, { appId, baseUrl, errorBehavior: 'allow' });
    expect(refused.saved).toBe(false);
    expect((await protectionSetupReport(rt.db, integrationId, rt.config.region.apiUrl ?? null, rt.config.cloud)).problems.join(' ')).toMatch(
      /No application is configured/,
    );

    await enableProtection(rt.db, { integrationId, appId, apiUrl: rt.config.region.apiUrl ?? null });
    // A refused call reads the endpoint again when the held copy is older than a second (the admin center itself takes
    // about a minute to apply a changed application).
    await new Promise((r) => setTimeout(r, 1100));
    const saved = await w.emulator.control.setThreatDetection(w.tenant.id, environmentId, { appId, baseUrl, errorBehavior: 'allow' });
    expect(saved.saved, JSON.stringify(saved.lastValidation)).toBe(true);
    const report = await protectionSetupReport(rt.db, integrationId, rt.config.region.apiUrl ?? null, rt.config.cloud);
    expect(report.endpoint?.validatedAt).not.toBeNull();
    expect(report.setup?.applicationIdUri).toBe(baseUrl);
    // The credential Vigil tells the admin to create is the one the emulated Copilot Studio presents.
    expect(report.setup?.federatedCredential.subject).toBe(w.emulator.control.registerThreatDetectionApp(w.tenant.id, { baseUrl }).federatedCredential.subject);
  }, 60_000);

  it('monitor mode (the default): every conversation runs to its end, and what block mode would stop is recorded', async () => {
    const score = await w.emulator.control.replayScenarios(w.tenant.id, environmentId, { botId });
    expect(score.benignAllowed).toBe(score.benign);
    expect(score.results.every((r) => r.stoppedAt === null)).toBe(true);
    const steps = await protectionEvents(rt.db, integrationId, { limit: 1000 });
    expect(steps.length).toBeGreaterThan(score.benign + score.attacks);
    expect(steps.every((s) => !s.blockAction && s.mode === 'monitor')).toBe(true);
    expect(steps.some((s) => s.wouldBlock)).toBe(true);
    // The set-up doctor counts the environment's agents by orchestration (only generative ones call) and the callers.
    const report = await protectionSetupReport(rt.db, integrationId, rt.config.region.apiUrl ?? null, rt.config.cloud);
    const env = report.environments.find((e) => e.environmentId === environmentId)!;
    expect(env).toMatchObject({ agentsCalling: 1 });
    expect(env.calls).toBe(steps.length);
    expect(env.agents.generative).toBeGreaterThanOrEqual(1);
    const classic = report.environments.reduce((k, e) => k + e.agents.classic, 0);
    expect(report.problems.some((p) => p.startsWith(`Not covered: ${classic} agent(s) use classic orchestration`))).toBe(classic > 0);
  }, 60_000);

  it('block mode: benign conversations run, attacks are stopped at or before their attack step, each step names its detector', async () => {
    await setProtectionPolicy(
      rt.db,
      { integrationId },
      // Every detector blocks here, so each attack scenario shows its own detector deciding.
      { mode: 'block', detectors: { jailbreak: { action: 'block' }, external_recipient: { action: 'block' }, changed_agent: { action: 'block' } } },
      'test',
    );
    await new Promise((r) => setTimeout(r, 250));
    const score = await w.emulator.control.replayScenarios(w.tenant.id, environmentId, { botId });
    const failed = score.results.filter((r) => !r.ok).map((r) => `${r.scenarioId} (${r.label}, ${r.detector ?? '-'})`);
    expect(failed).toEqual([]);
    expect(score.attacksStopped).toBe(score.attacks);
    const blocked = (await protectionEvents(rt.db, integrationId, { limit: 1000 })).filter((s) => s.blockAction);
    expect(blocked.length).toBe(score.attacks);
    for (const r of score.results.filter((x) => x.label === 'attack')) expect(blocked.map((s) => s.decidedBy)).toContain(r.detector);
    // Evidence is redacted: the scenario's planted AWS-style key never reaches the store.
    expect(JSON.stringify(blocked)).not.toMatch(/AKIA[A-Z2-7]{16}/);
  }, 60_000);

  it("answers the policy's default when the internal budget runs out", async () => {
    await setProtectionPolicy(rt.db, { integrationId }, { onTimeout: 'block' }, 'test');
    await new Promise((r) => setTimeout(r, 250));
    slowClock = true;
    const text = 'Quarterly figures, region by region. '.repeat(100);
    const { scenarios } = w.emulator.control.protectionScenarios(w.tenant.id, { botId });
    const benign = scenarios.find((s) => s.label === 'benign')!;
    const step = benign.steps[0]!;
    const body = {
      plannerContext: {
        userMessage: benign.userMessage,
        thought: 'Look the figures up.',
        chatHistory: [],
        previousToolsOutputs: [
          { toolId: step.tool.id, toolName: step.tool.name, outputs: [{ name: 'content', value: text }], timestamp: new Date().toISOString() },
        ],
      },
      toolDefinition: step.tool,
      inputValues: step.inputValues,
      conversationMetadata: {
        agent: { id: botId, tenantId: w.tenant.id, environmentId, name: 'agent', version: '1.0', isPublished: true },
        user: { id: w.tenant.users[0]!.id, tenantId: w.tenant.id },
        trigger: { id: 't', schemaName: 'trigger' },
        conversationId: 'conv-budget',
        messageId: 'm',
        channelId: 'msteams',
        planId: 'p',
        planStepId: 's',
        parentAgentComponentId: '',
        incomingClientIp: '203.0.113.7',
      },
    };
    const outcome = await w.emulator.control.analyzeToolExecution(w.tenant.id, environmentId, body);
    expect(outcome).toMatchObject({ blocked: true, by: 'provider', status: 200 });
    expect(outcome.response).toMatchObject({ blockAction: true, reasonCode: 900 });
    const [recorded] = await protectionEvents(rt.db, integrationId, { conversationId: 'conv-budget' });
    slowClock = false;
    expect(recorded).toMatchObject({ timedOut: true, blockAction: true });
  }, 60_000);
});
