import { isVigilError } from '../core/errors.ts';
import { APPLICATION_USER_FIX } from '../core/remediation.ts';
import { UpstreamHttpError } from '../platform/http/client.ts';
import { acquireAdminToken } from '../platform/identity/admin.ts';
import { addAppUser, listAllEnvironments } from '../sources/bap/client.ts';
import { assignSystemAdministrator } from '../sources/dataverse/admin.ts';
import { probeAgentsAccess } from '../sources/dataverse/entity.ts';
import type { Caller } from '../access/index.ts';
import { integrationOf } from '../access/scope.ts';
import type { Executor } from '../store/db.ts';
import { toView } from './integrations.ts';
import { credentialsFor, getIntegration, streamContext, type IntegrationDeps } from '../integration/index.ts';
import { EnvironmentListSchema, type EnvironmentAccess, type GrantResult } from '../contract/integrations.ts';

/**
 * Seed step "System Administrator in each environment": for every environment with Dataverse, make the service
 * principal an application user holding System Administrator — through BAP `addAppUser`, and where that is refused,
 * the Dataverse Web API sequence with an administrator's token. Reports per environment: granted, already granted,
 * failed (reason and fix) or no Dataverse.
 */

/**
 * System Administrator access per environment of one integration the caller sees, as last verified (empty before the
 * first verification): `GET /api/v1/integrations/{id}/environments` and `vigil environments list --json` print this.
 * @param integrationId the integration's full id (the CLI resolves a name or a start of an id first).
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND` when absent or another organization's.
 */
export async function environmentAccess(db: Executor, caller: Caller, integrationId: string): Promise<EnvironmentAccess[]> {
  const environments = toView(await integrationOf(db, caller, integrationId)).verification?.environments ?? [];
  return EnvironmentListSchema.parse({ items: environments }).items;
}

function reasonOf(e: unknown): string {
  return e instanceof UpstreamHttpError ? `${e.upstreamCode ?? `HTTP ${e.status}`}: ${e.upstreamMessage ?? e.message}` : (e as Error).message;
}

/**
 * Delegated tokens of a platform administrator per Dataverse resource, signed in by device code once per resource
 * (each environment's Dataverse is its own resource) and reused for every call to it.
 */
function adminTokens(deps: IntegrationDeps, tenantId: string, prompt: (message: string) => void): (resource: string) => Promise<string> {
  const cache = new Map<string, Promise<string>>();
  return (resource) => {
    let token = cache.get(resource);
    if (!token) {
      token = acquireAdminToken({
        cloud: deps.cloud,
        http: deps.http,
        tenantId,
        clientId: deps.config.adminSignIn.clientId,
        scope: `${resource}/.default`,
        signIn: { kind: 'device-code', prompt },
      }).then((t) => t.accessToken);
      cache.set(resource, token);
    }
    return token;
  };
}

/**
 * Grants access in every environment (or the listed ones).
 * @param options.adminSignIn when given, the Dataverse fallback runs as a platform administrator signed in by device
 *   code (`prompt` shows Microsoft's sign-in message); without it the fallback runs with the application's own token,
 *   which only works where it is already privileged.
 * @param options.signal stops the grant (its waits included): the signal's reason is thrown, no environment is reported
 *   failed for it.
 * @throws VigilError when environments cannot be listed (not registered as a management app) or credentials fail;
 *   the reason of `options.signal` when it is aborted.
 */
export async function grantEnvironmentAccess(
  deps: IntegrationDeps,
  idOrName: string,
  options: { environmentIds?: string[]; adminSignIn?: { prompt: (message: string) => void }; signal?: AbortSignal | undefined } = {},
): Promise<GrantResult[]> {
  const row = await getIntegration(deps.db, idOrName);
  const tokens = credentialsFor(deps, row);
  const adminToken = options.adminSignIn ? adminTokens(deps, row.tenant_id, options.adminSignIn.prompt) : undefined;
  // Every BAP and Dataverse request of the grant (and its budget and Retry-After waits) ends when `signal` is aborted.
  const ctx = streamContext(deps, tokens, options.signal);
  const stopped = (_e: unknown) => options.signal?.aborted === true;
  const envs = (await listAllEnvironments(ctx)).filter((e) => !options.environmentIds || options.environmentIds.includes(e.id));
  const out: GrantResult[] = [];
  for (const env of envs) {
    const base = { environmentId: env.id, name: env.displayName };
    if (!env.dataverseUrl) {
      out.push({ ...base, result: 'no-dataverse' });
      continue;
    }
    const readable = async (): Promise<boolean> => {
      try {
        await probeAgentsAccess(ctx, env.id, env.dataverseUrl!);
        return true;
      } catch (e) {
        if (isVigilError(e, 'authentication') || stopped(e)) throw e;
        return false;
      }
    };
    if (await readable()) {
      out.push({ ...base, result: 'already-granted' });
      continue;
    }
    let firstError: unknown;
    try {
      await addAppUser(ctx, env.id, row.client_id);
      if (await readable()) {
        out.push({ ...base, result: 'granted', via: 'addAppUser' });
        continue;
      }
    } catch (e) {
      if (isVigilError(e, 'authentication') || stopped(e)) throw e;
      firstError = e;
    }
    try {
      const resource = env.dataverseUrl.replace(/\/+$/, '');
      const token = adminToken ? () => adminToken(resource) : tokens.bearer(resource);
      await assignSystemAdministrator(ctx, env.dataverseUrl, row.client_id, token);
      if (await readable()) {
        out.push({ ...base, result: 'granted', via: 'dataverse' });
        continue;
      }
      out.push({ ...base, result: 'failed', reason: 'The role was assigned but agents are still not readable.', fix: APPLICATION_USER_FIX });
    } catch (e) {
      if (isVigilError(e, 'authentication') || stopped(e)) throw e;
      out.push({
        ...base,
        result: 'failed',
        reason: `addAppUser: ${firstError ? reasonOf(firstError) : 'no effect'}; Dataverse: ${reasonOf(e)}`,
        fix: APPLICATION_USER_FIX,
      });
    }
  }
  deps.logger.info(
    { integrationId: row.id, granted: out.filter((o) => o.result === 'granted').length, failed: out.filter((o) => o.result === 'failed').length },
    'environment access granted',
  );
  return out;
}

/**
 * The grant a collection runs after it (`VIGIL_AUTO_GRANT_ACCESS`), for `collectAndEvaluate`'s `grantAccess`:
 * environments whose agents could not be read because Vigil has no application user there (`0x80072560`, typically
 * environments created since the last grant) are granted access, so the next collection reads them. Returns the
 * grants made (none when the grant fails: logged, and the environments stay reported as "not evaluated").
 * @returns undefined when `enabled` is off (nothing is granted; the environments stay "not evaluated"). The function
 *   throws the reason of its `signal` (the run's) when stopped during the grant.
 */
export function autoGrantAccess(
  deps: IntegrationDeps,
  enabled: boolean,
): ((integrationId: string, errors: { stream: string; slice: string; code: string }[], signal?: AbortSignal) => Promise<GrantResult[]>) | undefined {
  if (!enabled) return undefined;
  return async (integrationId, errors, signal) => {
    const envIds = [...new Set(errors.filter((e) => e.stream === 'agents' && e.code === '0x80072560').map((e) => e.slice))];
    if (envIds.length === 0) return [];
    try {
      return await grantEnvironmentAccess(deps, integrationId, { environmentIds: envIds, signal });
    } catch (e) {
      // Stopped with the run: not a failed grant, the run's stop.
      if (signal?.aborted) throw e;
      deps.logger.warn({ integrationId, error: (e as Error).message }, 'automatic environment access grant failed');
      return [];
    }
  };
}
