import type { CheckFunction } from '../../types.ts';

/**
 * Fails when the Power Platform admin API refused to list environments because the application is not registered as
 * a Power Platform admin management application (BAP answers 403 "does not have permission to access the path",
 * recorded as `Forbidden`); passes when environments were listed; not evaluated before the first collection or when
 * the listing failed for another reason.
 */
export const check: CheckFunction = (ctx) => {
  const base = { resourceType: 'tenant' as const, resourceId: ctx.tenantId, resourceName: null };
  const gap = ctx.coverage.streamGap('environments');
  if (!gap) return [{ ...base, status: 'pass', reason: null }];
  if (gap.code === 'Forbidden')
    return [{ ...base, status: 'fail', reason: `The application is not a Power Platform admin management application: ${gap.message}` }];
  return [{ ...base, status: 'not_evaluated', reason: gap.message, detail: { code: gap.code } }];
};
