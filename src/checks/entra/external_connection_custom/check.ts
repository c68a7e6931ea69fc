import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails Microsoft Search external connections built through the API (no Microsoft-built `connectorId`) that are
 * `ready`, or that let more than one application push items (`configuration.authorizedAppIds`); connections from
 * Microsoft-built connectors with at most one authorised app pass; draft and obsolete connections pass (they serve
 * nothing). Source: Graph `externalconnectors-externalconnection`.
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'externalConnections', 'externalConnection', (c) => {
    if (c.attrs.state !== 'ready' && c.attrs.state !== 'limitExceeded')
      return { status: 'pass', reason: `State ${c.attrs.state ?? 'unknown'}: serves no content.` };
    if (c.attrs.authorizedAppIds.length > 1)
      return {
        status: 'fail',
        reason: `${c.attrs.authorizedAppIds.length} applications can push content into this connection (${c.attrs.authorizedAppIds.join(', ')}).`,
      };
    if (!c.attrs.connectorId)
      return {
        status: 'fail',
        reason: 'Custom connection: content pushed by custom code is served to Microsoft Search and Copilot with the permissions that code sets.',
      };
    return { status: 'pass', reason: null };
  });
