import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Per custom connector (standard connectors are left out): fails a custom connector whose backend is plain
 * `http://` — requests, their credentials (API keys, bearer tokens) and the data travel unencrypted. Decision: a
 * backend outside the organisation's domains is NOT a failure (calling a third-party API is what custom connectors
 * are for; the host and whether it is external are in the result detail for review). Passes `https://` backends.
 * Not evaluated for a connector whose backend URL was not returned, for unreadable environments, and when the
 * `connectors` stream did not run.
 * Source: Microsoft Learn "Custom connectors overview" (connectors/custom-connectors) and "Data policies for custom
 * connectors" (power-platform/admin/dlp-custom-connector-parity).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'connectors', 'connector', (c) => {
    if (!c.attrs.isCustom) return null;
    if (!c.attrs.backendUrl) return { status: 'not_evaluated', reason: 'The custom connector was listed without a backend URL.' };
    let protocol: string;
    try {
      protocol = new URL(c.attrs.backendUrl).protocol;
    } catch {
      return { status: 'not_evaluated', reason: `The backend URL '${c.attrs.backendUrl}' is not an absolute URL.` };
    }
    if (protocol === 'http:')
      return {
        status: 'fail',
        reason: `The backend ${c.attrs.backendUrl} is plain HTTP: requests and credentials travel unencrypted.`,
        detail: { backendHost: c.attrs.backendHost },
      };
    return { status: 'pass', reason: null, detail: { backendHost: c.attrs.backendHost } };
  });
