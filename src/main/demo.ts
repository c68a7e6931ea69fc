import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { generateTenant, type TenantSizes } from '../../emulator/generate.ts';
import { startEmulator } from '../../emulator/index.ts';
import { loadCustomProfile } from '../config/cloud.ts';
import { VigilError } from '../core/errors.ts';
import { SEVERITIES } from '../core/types.ts';
import { addCustomerAppIntegration } from '../onboarding/integrations.ts';
import { STREAM_RUN_ORDER } from '../sources/index.ts';
import type { MissingPermission } from '../onboarding/verify.ts';
import { listFindings } from '../store/repositories/findings.ts';
import { countLive } from '../store/repositories/inventory.ts';
import { SQLITE_FILE } from '../store/db.ts';
import type { Progress } from '../sync/engine.ts';
import { listAlerts } from '../store/repositories/audit.ts';
import { ingestAndDetect } from '../sync/audit.ts';
import { collectAndEvaluate } from '../sync/run.ts';
import { buildServer } from '../api/server.ts';
import { enableProtection, protectionEvents } from '../protection/endpoints.ts';
import { setProtectionPolicy } from '../protection/policies.ts';
import { createRuntime, type Runtime } from './runtime.ts';
import { protectionService } from './service.ts';

/**
 * The main job: start the emulator with a generated tenant, onboard it as a customer-created app (Mode A),
 * verify, collect, evaluate, and summarise. Composition root: the only product code that imports the emulator.
 */

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Data directory of the demo (wiped at start when it holds a previous demo). @default ./.vigil/demo */
  dataDir?: string;
  seed?: number | string;
  sizes?: Partial<TenantSizes>;
  verbose?: boolean;
  onStep?: (step: string) => void;
  onProgress?: (p: Progress) => void;
}

/** The demo's summary; `vigil demo --json` prints it. */
export interface DemoSummary {
  integration: {
    id: string;
    verified: boolean;
    servicePrincipalObjectId: string | null;
    missingPermissions: MissingPermission[];
    managementApp: boolean | null;
    environmentsNotReadable: string[];
  };
  /** Live objects per collected stream (every stream, estate streams included). */
  collected: Record<string, number>;
  run: { id: string; status: string; durationMs: number; errors: number };
  findings: {
    total: number;
    bySeverity: Record<string, number>;
    byCheck: Record<string, number>;
    top: { severity: string; checkId: string; resource: string; reason: string | null }[];
  };
  notEvaluated: number;
  /** The audit cycle: events stored from the Management Activity feed and the alerts the detections raised. */
  audit: {
    eventsIngested: number;
    duplicatesDropped: number;
    contentTypesUnavailable: string[];
    alertsRaised: number;
    byRule: Record<string, number>;
    top: { severity: string; ruleId: string; title: string }[];
  };
  /**
   * Runtime protection: the emulated Copilot Studio set Vigil up as an environment's threat-detection provider and
   * replayed one agent's conversations — benign ones and attacks — against `vigil serve`'s endpoint in block mode.
   */
  protection: {
    baseUrl: string;
    validated: boolean;
    agent: string;
    benign: number;
    benignAllowed: number;
    attacks: number;
    attacksBlocked: number;
    /** Blocked tool calls by the detector that decided. */
    blockedBy: Record<string, number>;
    /** Detectors of the attacks that ran on: their default action is to alert, not to block (docs/protection.md). */
    alertedOnly: string[];
    steps: number;
  };
  database: string;
}

/** A free TCP port on 127.0.0.1 (the demo's endpoint listens there). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * The runtime-protection part of the demo: Vigil's endpoint listening on `port`, enabled as docs/protection.md tells
 * an administrator (base URL first, then the application the emulated tenant registers with it), a block-mode policy,
 * the environment's set-up saved in the emulated admin center (which calls /validate), and the scenarios replayed.
 */
async function guardAgents(
  rt: Runtime,
  emulator: Awaited<ReturnType<typeof startEmulator>>,
  tenantId: string,
  integrationId: string,
  port: number,
  scenarios: { environmentId: string; botId: string },
): Promise<DemoSummary['protection']> {
  const server = await buildServer({ ready: async () => ({ ok: true, detail: {} }), protection: protectionService(rt, { cacheMs: 0 }), metrics: rt.metrics });
  await server.listen({ port, host: '127.0.0.1' });
  try {
    const apiUrl = rt.config.region.apiUrl ?? null;
    const { baseUrl } = await enableProtection(rt.db, { integrationId, apiUrl });
    const { appId } = emulator.control.registerThreatDetectionApp(tenantId, { baseUrl: baseUrl! });
    await enableProtection(rt.db, { integrationId, appId, apiUrl });
    await setProtectionPolicy(rt.db, { integrationId }, { mode: 'block' }, 'demo');
    const setUp = await emulator.control.setThreatDetection(tenantId, scenarios.environmentId, { appId, baseUrl: baseUrl!, errorBehavior: 'allow' });
    const score = await emulator.control.replayScenarios(tenantId, scenarios.environmentId, { botId: scenarios.botId });
    const steps = await protectionEvents(rt.db, integrationId, { limit: 10_000 });
    const blockedBy: Record<string, number> = {};
    for (const s of steps) if (s.blockAction && s.decidedBy) blockedBy[s.decidedBy] = (blockedBy[s.decidedBy] ?? 0) + 1;
    return {
      baseUrl: baseUrl!,
      validated: setUp.saved,
      agent: steps.find((s) => s.agentName)?.agentName ?? scenarios.botId,
      benign: score.benign,
      benignAllowed: score.benignAllowed,
      attacks: score.attacks,
      attacksBlocked: score.attacksStopped,
      blockedBy,
      alertedOnly: score.results.filter((r) => r.label === 'attack' && !r.ok && r.detector).map((r) => r.detector!),
      steps: steps.length,
    };
  } finally {
    await server.close();
  }
}

const DEMO_MARKER = '.vigil-demo';

/**
 * Runs the demo end to end against the in-process emulator over real HTTPS.
 * @throws VigilError `conflict` when the data directory holds something other than a previous demo.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoSummary> {
  const dataDir = resolve(options.dataDir ?? join('.vigil', 'demo'));
  if (existsSync(dataDir)) {
    if (!existsSync(join(dataDir, DEMO_MARKER))) {
      throw new VigilError('DEMO_DIR_IN_USE', `${dataDir} exists and is not a demo directory; the demo will not overwrite it.`, {
        field: '--data-dir',
        remediation: 'Give another --data-dir for the demo, or remove that directory.',
      });
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir, DEMO_MARKER), 'This directory is recreated by `vigil demo`.\n');

  const step = options.onStep ?? (() => undefined);
  // Set up as Microsoft documents it: no Power BI permissions (the read-only admin APIs refuse a service principal
  // holding any); the tenant setting gives access.
  const tenant = generateTenant({ seed: options.seed ?? 42, sizes: options.sizes, permissions: 'documented', plantedTranscripts: true });
  step(`Starting the emulated Microsoft cloud with tenant ${tenant.displayName} (${tenant.id})`);
  const emulator = await startEmulator({ tenants: [tenant] });
  // A busier audit feed than the emulator's default, so a day of it holds every scenario the detections look for.
  emulator.control.configureFeed(tenant.id, { recordsPerHour: 400 });
  // The agent whose conversations the protection part replays: its tools are installed before the collection reads it.
  const scenarios = emulator.control.protectionScenarios(tenant.id);
  try {
    const endpointsFile = emulator.writeEndpointsFile(join(dataDir, 'emulator'));
    const port = await freePort();
    const rt = await createRuntime({
      dataDir,
      cloud: loadCustomProfile(endpointsFile),
      verbose: options.verbose,
      env: { ...process.env, VIGIL_API_URL: `http://127.0.0.1:${port}` },
    });
    try {
      const app = tenant.apps.find((a) => a.appId === tenant.connectorAppId)!;
      step(`Onboarding application ${app.appId} as a customer-created app (Mode A) and verifying it`);
      const { integration, report } = await addCustomerAppIntegration(rt, {
        name: tenant.displayName,
        tenantId: tenant.id,
        clientId: app.appId,
        clientSecret: app.secrets[0]!.value,
        secretExpires: app.secrets[0]!.endDateTime,
      });
      step('Collecting the estate (directory, Power Platform, Copilot Studio, Microsoft 365 Copilot, Teams, Power BI, Foundry), then evaluating the checks');
      const { run, evaluation } = await collectAndEvaluate(rt, integration.id, { onProgress: options.onProgress });
      step('Ingesting the last 24 hours of the Office 365 Management Activity feed, then running the detections');
      const audit = await ingestAndDetect(rt, integration.id);
      step("Guarding an agent at run time: Copilot Studio calls Vigil's threat-detection endpoint before each tool, in block mode");
      const protection = await guardAgents(rt, emulator, tenant.id, integration.id, port, scenarios);
      const alerts = await listAlerts(rt.db, { integrationId: integration.id });
      const counts = await countLive(rt.db, integration.id, STREAM_RUN_ORDER);
      const open = await listFindings(rt.db, { integrationId: integration.id, status: 'open' });
      const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, open.filter((f) => f.severity === s).length]));
      const byCheck: Record<string, number> = {};
      for (const f of open) byCheck[f.check_id] = (byCheck[f.check_id] ?? 0) + 1;
      return {
        integration: {
          id: integration.id,
          verified: report.verified,
          servicePrincipalObjectId: report.servicePrincipalObjectId,
          missingPermissions: report.missingPermissions,
          managementApp: report.managementApp.registered,
          environmentsNotReadable: report.environments.filter((e) => e.agentsReadable === false).map((e) => e.name ?? e.id),
        },
        collected: counts,
        run: { id: run.runId, status: run.status, durationMs: run.durationMs, errors: run.errors.length },
        findings: {
          total: open.length,
          bySeverity,
          byCheck,
          top: open.slice(0, 5).map((f) => ({
            severity: f.severity,
            checkId: f.check_id,
            resource: f.resource_name ?? f.resource_id,
            reason: f.detail ? ((JSON.parse(f.detail) as { reason?: string }).reason ?? null) : null,
          })),
        },
        notEvaluated: evaluation?.byStatus.not_evaluated ?? 0,
        audit: {
          eventsIngested: Object.values(audit.ingest.contentTypes).reduce((n, o) => n + o.stored, 0),
          duplicatesDropped: Object.values(audit.ingest.contentTypes).reduce((n, o) => n + o.duplicates, 0),
          contentTypesUnavailable: Object.entries(audit.ingest.contentTypes)
            .filter(([, o]) => o.status !== 'ok')
            .map(([ct]) => ct),
          alertsRaised: alerts.length,
          byRule: alerts.reduce<Record<string, number>>((by, a) => Object.assign(by, { [a.rule_id]: (by[a.rule_id] ?? 0) + 1 }), {}),
          top: [...alerts]
            .sort((a, b) => SEVERITIES.indexOf(a.severity as (typeof SEVERITIES)[number]) - SEVERITIES.indexOf(b.severity as (typeof SEVERITIES)[number]))
            .slice(0, 5)
            .map((a) => ({ severity: a.severity, ruleId: a.rule_id, title: a.title })),
        },
        protection,
        database: join(dataDir, SQLITE_FILE),
      };
    } finally {
      await rt.close();
    }
  } finally {
    await emulator.close();
  }
}
