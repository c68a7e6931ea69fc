import { streamsNotEvaluated } from '../../helpers.ts';
import type { CheckFunction, CheckResult } from '../../types.ts';
import { dlpCovers } from '../shared.ts';

/**
 * The connectors ScubaGear MS.POWERPLATFORM.2.3 allows in the default environment: the ones Microsoft makes
 * non-blockable (core Office scenarios), as listed by `AllowedInBaseline` in ScubaGear `Rego/PowerPlatformConfig.rego`.
 * Ids without the `/providers/Microsoft.PowerApps/apis/` prefix, lower case.
 */
const ALLOWED = new Set([
  'shared_powervirtualagents',
  'shared_sharepointonline',
  'shared_onedriveforbusiness',
  'shared_approvals',
  'shared_cloudappsecurity',
  'shared_commondataservice',
  'shared_commondataserviceforapps',
  'shared_excelonlinebusiness',
  'shared_flowpush',
  'shared_kaizala',
  'shared_microsoftformspro',
  'shared_office365',
  'shared_office365groups',
  'shared_office365groupsmail',
  'shared_office365users',
  'shared_onenote',
  'shared_planner',
  'shared_powerappsnotification',
  'shared_powerappsnotificationv2',
  'shared_powerbi',
  'shared_shifts',
  'shared_skypeforbiz',
  'shared_teams',
  'shared_todo',
  'shared_yammer',
]);

/**
 * ScubaGear MS.POWERPLATFORM.2.3: in the default environment every connector outside the allow-list above is
 * blocked. Effective rule over the DLP policies that cover the default environment (Power Platform applies the most
 * restrictive: a connector blocked by any covering policy is blocked): fails when a connector is in a Business or
 * Non-business group of a covering policy and blocked by none, or when no covering policy blocks unlisted connectors
 * by default (`defaultConnectorsClassification` ≠ `Blocked`: every new connector is allowed). ScubaGear looks only at
 * the listed groups; the default group is where new connectors land. Not evaluated when a covering policy's groups
 * were not read; fails when no policy covers the default environment.
 * Sources: Microsoft Learn "Data policies" (power-platform/admin/wp-data-loss-prevention: policies combine, the most
 * restrictive applies; default group for new connectors) and "Connector classification" (non-blockable connectors).
 */
export const check: CheckFunction = (ctx) => {
  const notEvaluated = streamsNotEvaluated(ctx, ['environments', 'dlpPolicies']);
  if (notEvaluated) return notEvaluated;
  const defaults = ctx.inventory.environments.filter((e) => e.is_default === 1);
  if (defaults.length === 0)
    return [
      {
        resourceType: 'tenant',
        resourceId: ctx.tenantId,
        resourceName: null,
        status: 'not_evaluated',
        reason: 'The collected environment list has no default environment, which every tenant has: the list is incomplete.',
        detail: { code: 'NO_DEFAULT_ENVIRONMENT', stream: 'environments' },
      },
    ];
  const policies = ctx.inventory.estate('dlpPolicies');
  return defaults.map((env): CheckResult => {
    const base = { resourceType: 'environment' as const, resourceId: env.id, resourceName: env.display_name };
    const covering = policies.filter((p) => dlpCovers(p.attrs, env.id));
    if (covering.length === 0)
      return {
        ...base,
        status: 'fail',
        reason: 'No DLP policy applies to the default environment, so no connector is blocked in it.',
        detail: { policies: [] },
      };
    const unread = covering.filter((p) => p.attrs.connectorGroupsRead === false);
    if (unread.length > 0)
      return {
        ...base,
        status: 'not_evaluated',
        reason: `The connector groups of ${unread.map((p) => p.name ?? p.id).join(', ')} were not read.`,
        detail: { policies: covering.map((p) => p.id) },
      };
    const blocked = new Set(covering.flatMap((p) => p.attrs.blocked.map((c) => c.toLowerCase())));
    const allowed = [...new Set(covering.flatMap((p) => [...p.attrs.business, ...p.attrs.nonBusiness].map((c) => c.toLowerCase())))];
    const outside = allowed.filter((c) => !blocked.has(c) && !ALLOWED.has(c)).sort();
    const blocksByDefault = covering.some((p) => p.attrs.defaultConnectorsClassification === 'Blocked');
    const detail = { policies: covering.map((p) => p.id), connectorsOutsideAllowList: outside, blocksNewConnectors: blocksByDefault };
    if (outside.length === 0 && blocksByDefault)
      return { ...base, status: 'pass', reason: 'Only connectors on the allow-list are allowed; every other connector, new ones too, is blocked.', detail };
    const parts: string[] = [];
    if (outside.length > 0)
      parts.push(`${outside.length} connector(s) outside the allow-list are allowed (${outside.slice(0, 5).join(', ')}${outside.length > 5 ? ', …' : ''})`);
    if (!blocksByDefault) parts.push('no policy blocks unlisted connectors by default, so every new connector is allowed');
    return { ...base, status: 'fail', reason: `${parts.join('; ')}.`, detail };
  });
};
