import type { PowerPlatformEnvironment } from '../../core/inventory.ts';
import { UpstreamHttpError } from '../../platform/http/client.ts';
import type { StreamContext } from '../stream.ts';
import { environmentsStream } from './streams.ts';
import { ROOT_SLICE } from '../stream.ts';

/**
 * BAP calls used by onboarding. BAP answers 403 with a message containing "does not have permission to access the
 * path" while the application is not registered as a Power Platform admin management application.
 * Source: terraform-provider-power-platform `validateNoManagementApplicationPermissionsForBapiRequest`;
 * Power Platform "Create a service principal application" (powerplatform-api-create-service-principal.md).
 */

/** The marker of BAP's 403 for an unregistered application. */
export const NOT_MANAGEMENT_APP_MARKER = 'does not have permission to access the path';

/** True when `e` is BAP's answer to an application not registered as a management application. */
export function isNotManagementAppError(e: unknown): boolean {
  return e instanceof UpstreamHttpError && e.status === 403 && (e.upstreamMessage ?? '').includes(NOT_MANAGEMENT_APP_MARKER);
}

/**
 * Lists every environment (all pages).
 * @throws UpstreamHttpError (403 when not registered: see {@link isNotManagementAppError}).
 */
export async function listAllEnvironments(ctx: StreamContext): Promise<PowerPlatformEnvironment[]> {
  const out: PowerPlatformEnvironment[] = [];
  for await (const page of environmentsStream.read(ctx, ROOT_SLICE, null)) out.push(...page.records);
  return out;
}
