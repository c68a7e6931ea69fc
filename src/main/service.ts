import { join } from 'node:path';
import type { ApiContext } from '../api/context.ts';
import { checkCatalogue } from '../reporting/index.ts';
import { regionById } from '../config/regions.ts';
import { buildServer } from '../api/server.ts';
import { handleConsentCallback } from '../onboarding/consent.ts';
import { VigilError } from '../core/errors.ts';
import { InProcessQueue } from '../jobs/memory.ts';
import { PgBossQueue } from '../jobs/pgboss.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { parseCron, tick } from '../sync/scheduler.ts';
import { collectionJobHandler } from '../sync/worker.ts';
import { autoGrantAccess } from '../onboarding/environments.ts';
import { purgeStaleSessions } from '../access/index.ts';
import { acquireServeLock } from '../store/serve-lock.ts';
import { pingStore } from '../store/db.ts';
import { ProtectionService, type ProtectionDeps } from '../protection/service.ts';
import type { Runtime } from './runtime.ts';

/**
 * Composition of the long-running processes: `vigil serve` (HTTP, scheduler, and on SQLite the workers) and
 * `vigil worker` (PostgreSQL only). Both stop gracefully on SIGTERM/SIGINT: stop taking jobs, let running
 * collections checkpoint, close.
 */

/** The job queue for the runtime's store: pg-boss on PostgreSQL, in-process on SQLite. */
export function createQueue(rt: Runtime): JobQueue {
  const policy = {
    retryLimit: rt.config.jobs.retryLimit,
    retryDelaySeconds: rt.config.jobs.retryDelaySeconds,
    expireInSeconds: rt.config.jobs.expireInSeconds,
  };
  if (rt.config.database) {
    const schema = rt.config.database.schema === 'public' ? 'pgboss' : `${rt.config.database.schema}_pgboss`;
    return new PgBossQueue({
      connectionString: rt.config.database.url,
      schema,
      policy,
      maintenanceIntervalSeconds: rt.config.jobs.maintenanceSeconds,
      pollingIntervalSeconds: 1,
      logger: rt.logger,
    });
  }
  return new InProcessQueue(rt.logger, policy);
}

/**
 * The built portal of this installation (`npm run build:web`, run by `npm ci`): `<package>/web/dist`, whether this
 * module runs from `src/main/` (tests, through tsx) or compiled from `dist/src/main/`.
 */
export const PORTAL_DIR = join(import.meta.dirname, ...(import.meta.filename.endsWith('.ts') ? ['..', '..'] : ['..', '..', '..']), 'web', 'dist');

/** The API's dependencies from a runtime and the job queue. */
export async function apiContext(rt: Runtime, queue: Pick<JobQueue, 'enqueueCollection' | 'pending'>): Promise<ApiContext> {
  return {
    ...rt,
    queue,
    access: rt.config.access,
    region: { ...regionById(rt.config.region.id, 'VIGIL_REGION'), apiUrl: rt.config.region.apiUrl ?? null, portalUrl: rt.config.region.portalUrl ?? null },
    checks: await checkCatalogue(),
    secureCookies: rt.config.server.secureCookies,
    loginAttemptsPerMinute: rt.config.server.loginAttemptsPerMinute,
  };
}

/** Runtime protection's use case for `vigil serve` (Copilot Studio's webhook): store, pipeline, metrics, sinks; `options` for tests (cache lifetime, the engine's clock). */
export function protectionService(rt: Runtime, options: Pick<ProtectionDeps, 'cacheMs' | 'clock'> = {}): ProtectionService {
  return new ProtectionService({
    ...options,
    db: rt.db,
    cloud: rt.cloud,
    http: rt.http,
    logger: rt.logger,
    metrics: rt.metrics,
    sinks: rt.sinks,
    apiUrl: rt.config.region.apiUrl ?? null,
  });
}

function onSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

/**
 * `vigil worker`: runs collection jobs from the shared queue until SIGTERM.
 * @throws VigilError `configuration` on SQLite (the workers then live inside `vigil serve`).
 */
export async function runWorker(rt: Runtime, print: (line: string) => void): Promise<void> {
  if (!rt.config.database) {
    throw new VigilError('WORKER_NEEDS_POSTGRES', '`vigil worker` needs the shared PostgreSQL queue, and DATABASE_URL is not set.', {
      field: 'DATABASE_URL',
      remediation:
        'Set DATABASE_URL to the PostgreSQL database shared with `vigil serve`; on a single machine with SQLite, `vigil serve` runs the collections itself.',
    });
  }
  const queue = createQueue(rt);
  await queue.start();
  await workCollections(rt, queue);
  print(`worker ${process.pid} ready: ${rt.config.jobs.workerConcurrency} collection(s) at a time`);
  rt.logger.info({ concurrency: rt.config.jobs.workerConcurrency }, 'worker started');
  const signal = await onSignal();
  rt.logger.info({ signal }, 'worker stopping');
  await queue.stop({ timeoutSeconds: rt.config.jobs.shutdownTimeoutSeconds });
  print(`worker ${process.pid} stopped`);
}

/**
 * `vigil serve`: health endpoints, the scheduler, the purge of ended portal sessions, and on SQLite the collection
 * workers, until SIGTERM.
 * @throws VigilError `conflict` / `SERVE_ALREADY_RUNNING` on SQLite when another `vigil serve` holds the data directory.
 */
export async function runServe(rt: Runtime, print: (line: string) => void): Promise<void> {
  parseCron(rt.config.jobs.cron);
  // One vigil serve per SQLite data directory; PostgreSQL deployments run as many as they like.
  const lock = rt.config.database ? undefined : acquireServeLock(rt.config.dataDir);
  try {
    await serveUntilSignal(rt, print);
  } finally {
    lock?.release();
  }
}

/**
 * The error of a failed `listen`, naming the address and the setting to change (flag, then environment variable).
 * Node's socket error codes (https://nodejs.org/api/errors.html#common-system-errors): EADDRINUSE, EACCES (a port
 * below 1024 without the privilege), EADDRNOTAVAIL / ENOTFOUND (a host that is not an address of this machine).
 * @returns VigilError `conflict` / `PORT_IN_USE`, or `invalid-input` / `LISTEN_REFUSED`; anything else unchanged.
 */
export function listenError(e: unknown, host: string, port: number): unknown {
  const code = (e as { code?: string }).code;
  if (code === 'EADDRINUSE') {
    return new VigilError('PORT_IN_USE', `Port ${port} on ${host} is already in use by another program (another vigil serve?).`, {
      field: '--port',
      remediation: `Stop the other program, or listen on another port: vigil serve --port ${port === 8080 ? 8081 : port + 1} (or set VIGIL_PORT).`,
      cause: e,
    });
  }
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    const onHost = code !== 'EACCES';
    return new VigilError(
      'LISTEN_REFUSED',
      `Cannot listen on ${host}:${port} (${code}${onHost ? ': not an address of this machine' : ': ports below 1024 need privileges'}).`,
      {
        field: onHost ? '--host' : '--port',
        remediation: onHost
          ? 'Give an address of this machine: vigil serve --host 127.0.0.1 (or 0.0.0.0 for every interface; or set VIGIL_HOST).'
          : 'Use a port from 1024 up: vigil serve --port 8080 (or set VIGIL_PORT).',
        cause: e,
      },
    );
  }
  return e;
}

/**
 * Runs queued collections in this process, `VIGIL_WORKER_CONCURRENCY` at a time, with the configured environment
 * access and audit settings (`vigil worker`, and `vigil serve` on SQLite).
 */
async function workCollections(rt: Runtime, queue: JobQueue): Promise<void> {
  await queue.work(
    collectionJobHandler({
      ...rt,
      grantAccess: autoGrantAccess(rt, rt.config.autoGrantAccess),
      audit: { enabled: rt.config.auditInJobs, publisherId: rt.config.publisherId, concurrency: rt.config.auditConcurrency },
    }),
    { concurrency: rt.config.jobs.workerConcurrency },
  );
}

/** How often `vigil serve` deletes ended portal sessions, in milliseconds (and once at start). */
const SESSION_PURGE_INTERVAL_MS = 10 * 60 * 1000;

async function serveUntilSignal(rt: Runtime, print: (line: string) => void): Promise<void> {
  const queue = createQueue(rt);
  await queue.start();
  if (!rt.config.database) await workCollections(rt, queue);
  const app = await buildServer({
    consentCallback: (query) => handleConsentCallback(rt, query),
    async ready() {
      await pingStore(rt.db);
      return { ok: true, detail: { queued: await queue.pending() } };
    },
    api: await apiContext(rt, queue),
    metrics: rt.metrics,
    protection: protectionService(rt),
    portalDir: rt.config.server.portalDir ?? PORTAL_DIR,
    trustProxy: rt.config.server.trustProxy,
  });
  let address: string;
  try {
    address = await app.listen({ host: rt.config.server.host, port: rt.config.server.port });
  } catch (e) {
    await queue.stop({ timeoutSeconds: 0 });
    await app.close();
    throw listenError(e, rt.config.server.host, rt.config.server.port);
  }
  let first = true;
  const schedulerTick = async () => {
    try {
      await tick(rt.db, queue, { cron: rt.config.jobs.cron, jitterSeconds: rt.config.jobs.jitterSeconds, logger: rt.logger, resumeInterrupted: first });
      first = false;
    } catch (e) {
      rt.logger.error({ err: { message: (e as Error).message } }, 'scheduler tick failed');
    }
  };
  await schedulerTick();
  const timer = setInterval(schedulerTick, rt.config.jobs.tickSeconds * 1000);
  // Ended sessions are deleted, not only refused: at start and every 10 minutes (unref'd, stopped on close).
  const purgeSessions = async () => {
    try {
      const purged = await purgeStaleSessions(rt.db, rt.config.access);
      if (purged) rt.logger.info({ purged }, 'ended portal sessions deleted');
    } catch (e) {
      rt.logger.error({ err: { message: (e as Error).message } }, 'session purge failed');
    }
  };
  await purgeSessions();
  const purgeTimer = setInterval(purgeSessions, SESSION_PURGE_INTERVAL_MS);
  purgeTimer.unref();
  print(`vigil serve listening on ${address} (${rt.config.database ? 'PostgreSQL, workers: vigil worker' : 'SQLite, in-process workers'})`);
  const signal = await onSignal();
  rt.logger.info({ signal }, 'serve stopping');
  clearInterval(timer);
  clearInterval(purgeTimer);
  await queue.stop({ timeoutSeconds: rt.config.jobs.shutdownTimeoutSeconds });
  await app.close();
  print('vigil serve stopped');
}
