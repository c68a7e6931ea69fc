import type { AccessPolicy } from '../access/index.ts';
import type { Region } from '../config/regions.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { IntegrationDeps } from '../integration/index.ts';
import type { CheckCatalogue } from '../reporting/index.ts';

/**
 * What the API routes need: the onboarding dependencies (store, HTTP pipeline, cloud profile, master key), the job
 * queue, the access policy, the deployment's region and URLs, and the check catalogue. Built by `main/service.ts`.
 */
export interface ApiContext extends IntegrationDeps {
  queue: Pick<JobQueue, 'enqueueCollection' | 'pending'>;
  access: AccessPolicy;
  /** The deployment's region (its IP safelist) and public URLs. */
  region: Region & { apiUrl: string | null; portalUrl: string | null };
  checks: CheckCatalogue;
  /** `Secure` on cookies: always, never, or when the request came over HTTPS (`auto`, the default). */
  secureCookies: boolean | 'auto';
  /** Sign-in attempts allowed per client address per minute. @default 10 */
  loginAttemptsPerMinute: number;
  /** Seconds the live progress stream waits for a queued collection to start before it says `idle`. @default 30 */
  liveIdleSeconds?: number;
  /** Seconds the live progress stream waits for the checks to be evaluated after a collection. @default 300 */
  evaluationWaitSeconds?: number;
}
