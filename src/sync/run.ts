import { evaluateIntegration, type EvaluationSummary } from '../checks/evaluate.ts';
import { VigilError } from '../core/errors.ts';
import { grantNewEnvironments, type EnvironmentGrant } from '../onboarding/environments.ts';
import {
  credentialsFor,
  getIntegration,
  recordCredentialRefusal,
  secretExpiryWarning,
  streamContext,
  toView,
  type OnboardingDeps,
} from '../onboarding/integrations.ts';
import type { IntegrationRow } from '../store/repositories/integrations.ts';
import { collect, type CollectOptions, type CollectResult } from './engine.ts';

/**
 * Collects one stored integration: decrypts its credentials in memory, runs (or resumes) a collection.
 * An integration whose credentials were refused (expired secret) is not collected until they are rotated.
 * @throws VigilError `not-found`, `conflict` (already running), `authentication` (secret rejected or expired:
 *   recorded on the integration as its credential state).
 */
export async function collectIntegration(
  deps: OnboardingDeps,
  idOrName: string,
  options: Pick<CollectOptions, 'onProgress' | 'afterPage' | 'concurrency' | 'signal' | 'full'> = {},
): Promise<CollectResult> {
  const row = await getIntegration(deps.db, idOrName);
  requireCollectable(row);
  const warning = secretExpiryWarning({ ...toView(row) });
  if (warning) deps.logger.warn({ integrationId: row.id, secretExpiresAt: row.secret_expires_at }, warning);
  // The run's signal reaches the HTTP pipeline: a throttled wait (never given up on its own) ends when the run is stopped.
  const ctx = { ...streamContext(deps, credentialsFor(deps, row)), signal: options.signal };
  try {
    return await collect({ db: deps.db, integrationId: row.id, ctx, metrics: deps.metrics, ...options });
  } catch (e) {
    await recordCredentialRefusal(deps, row.id, e);
    throw e;
  }
}

/**
 * Refuses an integration whose credentials were refused (expired or rejected secret): it is not collected, nor queued,
 * until they are rotated.
 * @throws VigilError `authentication` / `CREDENTIALS_EXPIRED` with the rotation as the fix.
 */
export function requireCollectable(row: Pick<IntegrationRow, 'id' | 'name' | 'credential_state' | 'credential_error'>): void {
  if (row.credential_state === 'ok') return;
  throw new VigilError(
    'authentication',
    'CREDENTIALS_EXPIRED',
    `Integration ${row.name} is not collected: ${row.credential_error ?? 'its credentials were refused'}`,
    {
      remediation: `Create a new client secret (App registrations > your app > Certificates & secrets) and run \`vigil integrations rotate-secret ${row.id}\` (or rotate it in the portal). The interrupted collection resumes from its checkpoints.`,
    },
  );
}

/** Options of {@link collectAndEvaluate}. */
export interface CollectAndEvaluateOptions extends Pick<CollectOptions, 'onProgress' | 'signal' | 'full' | 'afterPage'> {
  /** Give access to environments found unreadable (VIGIL_AUTO_GRANT_ACCESS). @default false */
  autoGrantAccess?: boolean;
  /** Evaluate the checks after collecting. @default true */
  evaluate?: boolean;
  /** Told after each check is evaluated: checks done of the total. */
  onCheck?: (done: number, total: number) => void;
}

/**
 * The collection pipeline shared by `vigil collect`, the queue's job handler and the demo: collect (or resume) the
 * integration, grant or report environments found unreadable, then evaluate the checks.
 * @throws as {@link collectIntegration}.
 */
export async function collectAndEvaluate(
  deps: OnboardingDeps,
  idOrName: string,
  options: CollectAndEvaluateOptions = {},
): Promise<{ run: CollectResult; grants: EnvironmentGrant[]; evaluation: EvaluationSummary | null }> {
  const run = await collectIntegration(deps, idOrName, {
    onProgress: options.onProgress,
    signal: options.signal,
    full: options.full,
    afterPage: options.afterPage,
  });
  const row = await getIntegration(deps.db, idOrName);
  const grants = await grantNewEnvironments(deps, row.id, run.errors, options.autoGrantAccess ?? false);
  const evaluation =
    options.evaluate === false ? null : await evaluateIntegration(deps.db, row, { sinks: deps.sinks, logger: deps.logger, onCheck: options.onCheck });
  return { run, grants, evaluation };
}
