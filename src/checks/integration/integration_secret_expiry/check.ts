import type { CheckFunction } from '../../types.ts';

/** Warning horizon, days (the first of Vigil's 90/30/7-day warnings). */
export const WARN_DAYS = 90;

/**
 * One result for the tenant: fail when Entra ID refused the credentials or the secret expires within 90 days; pass
 * otherwise. Integrations on the operator-managed application have no secret of their own and pass.
 */
export const check: CheckFunction = (ctx) => {
  const base = { resourceType: 'tenant' as const, resourceId: ctx.tenantId, resourceName: null };
  const { integration } = ctx;
  if (integration.credentialState !== 'ok')
    return [{ ...base, status: 'fail', reason: `Credentials ${integration.credentialState}: ${integration.credentialError ?? ''}`.trim() }];
  if (integration.mode !== 'customer-app') return [{ ...base, status: 'pass', reason: 'The operator-managed application holds the credentials.' }];
  if (!integration.secretExpiresAt) return [{ ...base, status: 'not_evaluated', reason: 'The secret expiry date is unknown.' }];
  const days = Math.floor((Date.parse(integration.secretExpiresAt) - ctx.now.getTime()) / 86_400_000);
  if (days < 0)
    return [{ ...base, status: 'fail', reason: `The client secret expired on ${integration.secretExpiresAt.slice(0, 10)}.`, detail: { daysLeft: days } }];
  if (days <= WARN_DAYS)
    return [
      {
        ...base,
        status: 'fail',
        reason: `The client secret expires in ${days} days (${integration.secretExpiresAt.slice(0, 10)}).`,
        detail: { daysLeft: days },
      },
    ];
  return [{ ...base, status: 'pass', reason: null, detail: { daysLeft: days } }];
};
