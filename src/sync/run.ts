import { credentialsFor, getIntegration, streamContext, type OnboardingDeps } from '../onboarding/integrations.ts';
import { collect, type CollectOptions, type CollectResult } from './engine.ts';

/**
 * Collects one stored integration: decrypts its credentials in memory, runs (or resumes) a collection.
 * @throws VigilError `not-found`, `conflict` (already running), `authentication` (secret rejected).
 */
export async function collectIntegration(
  deps: OnboardingDeps,
  idOrName: string,
  options: Pick<CollectOptions, 'onProgress' | 'afterPage' | 'concurrency' | 'signal'> = {},
): Promise<CollectResult> {
  const row = await getIntegration(deps.db, idOrName);
  const ctx = streamContext(deps, credentialsFor(deps, row));
  return collect({ db: deps.db, integrationId: row.id, ctx, ...options });
}
