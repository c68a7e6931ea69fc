import type { EvaluationSummary } from '../checks/evaluate.ts';
import { VigilError } from '../core/errors.ts';
import type { GrantResult } from '../contract/integrations.ts';
import {
  credentialsFor,
  getIntegration,
  recordCredentialRefusal,
  secretDaysLeft,
  secretExpiryWarning,
  streamContext,
  type IntegrationDeps,
} from '../integration/index.ts';
import type { IntegrationRow } from '../store/repositories/integrations.ts';
import { evaluateTranscripts, type TranscriptEvaluation } from '../protection/transcripts.ts';
import { abortedError, collect, type CollectOptions, type CollectResult } from './engine.ts';

/**
 * Collects one stored integration: decrypts its credentials in memory, runs (or resumes) a collection.
 * An integration whose credentials were refused (expired secret) is not collected until they are rotated.
 * @throws VigilError `not-found`, `conflict` (already running), `authentication` (secret rejected or expired:
 *   recorded on the integration as its credential state).
 */
export async function collectIntegration(
  deps: IntegrationDeps,
  idOrName: string,
  options: Pick<CollectOptions, 'onProgress' | 'afterPage' | 'concurrency' | 'streamsAtOnce' | 'signal' | 'full'> = {},
): Promise<CollectResult> {
  const row = await getIntegration(deps.db, idOrName);
  requireCollectable(row);
  const warning = secretExpiryWarning({
    id: row.id,
    name: row.name,
    secretExpiresAt: row.secret_expires_at,
    secretDaysLeft: secretDaysLeft(row.secret_expires_at),
  });
  if (warning) deps.logger.warn({ integrationId: row.id, secretExpiresAt: row.secret_expires_at }, warning);
  // The run's signal reaches the HTTP pipeline: a throttled wait (never given up on its own) ends when the run is stopped.
  const ctx = streamContext(deps, credentialsFor(deps, row), options.signal);
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
  throw new VigilError('CREDENTIALS_EXPIRED', `Integration ${row.name} is not collected: ${row.credential_error ?? 'its credentials were refused'}`, {
    remediation: (_, act) =>
      `Create a new client secret (App registrations > your app > Certificates & secrets), then ${act({ do: 'rotateSecret', integration: row.id })}. The interrupted collection resumes from its checkpoints.`,
  });
}

/** Options of {@link collectAndEvaluate}. */
export interface CollectAndEvaluateOptions extends Pick<CollectOptions, 'onProgress' | 'signal' | 'full' | 'afterPage'> {
  /**
   * Gives access to environments the collection found unreadable, from its errored slices (VIGIL_AUTO_GRANT_ACCESS;
   * the entry point passes onboarding's `autoGrantAccess`, so collection does not depend on onboarding).
   * @default none: such environments stay reported as "not evaluated".
   */
  grantAccess?: ((integrationId: string, errors: CollectResult['errors'], signal?: AbortSignal) => Promise<GrantResult[]>) | undefined;
  /** Evaluate the checks after collecting. @default true */
  evaluate?: boolean;
  /** Told after each check is evaluated: checks done of the total. */
  onCheck?: (done: number, total: number) => void;
}

/**
 * The collection pipeline shared by `vigil collect`, the queue's job handler and the demo: collect (or resume) the
 * integration, scan the conversation transcripts it collected and raise their alerts (protection/transcripts.ts), grant
 * or report environments found unreadable, then evaluate the checks.
 * @throws as {@link collectIntegration}; `conflict` / `COLLECTION_ABORTED` when `signal` stops the grant (the run is
 *   finished by then; the checks are not evaluated).
 */
export async function collectAndEvaluate(
  deps: IntegrationDeps,
  idOrName: string,
  options: CollectAndEvaluateOptions = {},
): Promise<{ run: CollectResult; grants: GrantResult[]; evaluation: EvaluationSummary | null; transcripts: TranscriptEvaluation }> {
  const run = await collectIntegration(deps, idOrName, {
    onProgress: options.onProgress,
    signal: options.signal,
    full: options.full,
    afterPage: options.afterPage,
  });
  const row = await getIntegration(deps.db, idOrName);
  // Conversation transcripts collected by this run (and any left unevaluated by a run that died): markers and alerts.
  const transcripts = await evaluateTranscripts(deps.db, row.id, { sinks: deps.sinks, tenantId: row.tenant_id, logger: deps.logger });
  // The grant sends BAP and Dataverse admin requests: stopped with the run (an abort is thrown, never reported as a grant).
  let grants: GrantResult[];
  try {
    grants = (await options.grantAccess?.(row.id, run.errors, options.signal)) ?? [];
  } catch (e) {
    if (options.signal?.aborted) throw abortedError(options.signal);
    throw e;
  }
  // The checks (and their loader, sinks and definitions) are loaded only when evaluated: `collect --no-checks` starts without them.
  const evaluation =
    options.evaluate === false
      ? null
      : await (await import('../checks/evaluate.ts')).evaluateIntegration(deps.db, row, { sinks: deps.sinks, logger: deps.logger, onCheck: options.onCheck });
  return { run, grants, evaluation, transcripts };
}
