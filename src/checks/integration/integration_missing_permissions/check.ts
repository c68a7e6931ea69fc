import { API_DISPLAY_NAMES, PERMISSION_CAPABILITIES } from '../../../core/capabilities.ts';
import { gapReason, streamGaps } from '../../gaps.ts';
import { streamsGatedBy } from '../../../sources/index.ts';
import type { CheckFunction, CheckResult } from '../../types.ts';

/**
 * Upstream codes that prove the application lacks the access a capability needs: the engine found the permission
 * missing from the token's `roles` and skipped the stream (`MISSING_PERMISSION`); Power BI refused its read-only admin
 * APIs to the service principal (`POWER_BI_NOT_AUTHORIZED`, judged by the API); Microsoft Graph answered 403
 * `Authorization_RequestDenied` ("Insufficient privileges to complete the operation", Graph `resources/errors.md`) to
 * the whole stream.
 */
const PROVES_MISSING = new Set(['MISSING_PERMISSION', 'POWER_BI_NOT_AUTHORIZED', 'Authorization_RequestDenied']);

/**
 * One result per permission-gated capability (src/core/capabilities.ts), judged from the coverage of the latest
 * collection of the capability's streams:
 * - fail when a stream's whole read was refused for want of access (codes in {@link PROVES_MISSING}), naming the
 *   permission to grant (or, for Power BI, the API's own explanation: the tenant setting or the permissions to remove);
 * - not evaluated when a stream, or a slice of it, failed for any other reason (throttling, an outage, a parent stream
 *   that failed, an unfinished run) or was never collected: a failed read says nothing about the permission, so the
 *   capability is not passed on it; the reason names the stream, the slice and the code;
 * - pass when every stream and slice was read.
 * Capabilities that gate no inventory stream (the audit feed) are reported by `vigil audit` instead.
 */
export const check: CheckFunction = (ctx) => {
  const results: CheckResult[] = [];
  for (const cap of PERMISSION_CAPABILITIES) {
    const streams = streamsGatedBy(cap.id);
    if (streams.length === 0) continue;
    const base = { resourceType: 'tenant' as const, resourceId: `${ctx.tenantId}/${cap.id}`, resourceName: cap.title };
    const { whole, slices } = streamGaps(ctx, streams);
    const refused = whole.find((g) => PROVES_MISSING.has(g.code));
    if (refused?.code === 'POWER_BI_NOT_AUTHORIZED') {
      // Power BI is judged by the API (src/core/capabilities.ts `judgedByApi`): its refusal names the tenant setting
      // or the Power BI permissions to remove, and is a setup gap like a missing permission.
      results.push({ ...base, status: 'fail', reason: refused.message, detail: { streams: streams } });
    } else if (refused) {
      const upstream = refused.code === 'MISSING_PERMISSION' ? '' : ` (${API_DISPLAY_NAMES[cap.api]} refused the '${refused.stream}' read: ${refused.code})`;
      results.push({
        ...base,
        status: 'fail',
        reason: `${API_DISPLAY_NAMES[cap.api]} application permission ${cap.recommended} is not granted: ${cap.title.toLowerCase()} are not collected.${upstream}`,
        detail: { permission: cap.recommended, streams: streams, code: refused.code },
      });
    } else if (whole.length > 0 || slices.length > 0) {
      const gap = whole[0] ?? slices[0]!;
      results.push({ ...base, status: 'not_evaluated', reason: gapReason(gap), detail: { streams: streams, code: gap.code } });
    } else {
      results.push({ ...base, status: 'pass', reason: null });
    }
  }
  return results;
};
