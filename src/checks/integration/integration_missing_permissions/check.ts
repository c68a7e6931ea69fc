import { API_DISPLAY_NAMES, PERMISSION_CAPABILITIES } from '../../../core/capabilities.ts';
import { streamsGatedBy } from '../../../sources/index.ts';
import type { CheckFunction, CheckResult } from '../../types.ts';

/**
 * One result per permission-gated capability (src/core/capabilities.ts): fails when the latest collection skipped its
 * streams because the application permission is not granted (`MISSING_PERMISSION`), passes when they ran, and is not
 * evaluated before the first collection. Power BI access is judged by the API: its streams' refusal
 * (`POWER_BI_NOT_AUTHORIZED`, naming the tenant setting or the Power BI permissions to remove) fails it too. Capabilities that gate no inventory stream (the audit feed) are reported by
 * `vigil audit` instead.
 */
export const check: CheckFunction = (ctx) => {
  const results: CheckResult[] = [];
  for (const cap of PERMISSION_CAPABILITIES) {
    const streams = streamsGatedBy(cap.id);
    if (streams.length === 0) continue;
    const base = { resourceType: 'tenant' as const, resourceId: `${ctx.tenantId}/${cap.id}`, resourceName: cap.title };
    const gaps = streams.map((s) => ctx.coverage.streamGap(s));
    const missing = gaps.find((g) => g?.code === 'MISSING_PERMISSION');
    // Power BI is judged by the API (src/core/capabilities.ts `judgedByApi`): its refusal names the tenant setting
    // or the Power BI permissions to remove, and is a setup gap like a missing permission.
    const refused = gaps.find((g) => g?.code === 'POWER_BI_NOT_AUTHORIZED');
    if (refused) {
      results.push({ ...base, status: 'fail', reason: refused.message, detail: { streams } });
    } else if (missing) {
      results.push({ ...base, status: 'fail', reason: `${API_DISPLAY_NAMES[cap.api]} application permission ${cap.recommended} is not granted: ${cap.title.toLowerCase()} are not collected.`, detail: { permission: cap.recommended, streams } });
    } else if (gaps.some((g) => g?.code === 'NOT_COLLECTED')) {
      results.push({ ...base, status: 'not_evaluated', reason: gaps.find((g) => g)!.message });
    } else {
      results.push({ ...base, status: 'pass', reason: null });
    }
  }
  return results;
};
