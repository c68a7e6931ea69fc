import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails each artifact published to the web (GET admin/widelySharedArtifacts/publishedToWeb); passes the tenant when
 * none is. Every listed artifact fails: publish to web has no access control.
 */
export const check: CheckFunction = (ctx) => {
  const results = evaluateEstate(ctx, 'powerBiSharedLinks', 'powerBiReport', (l) =>
    l.attrs.kind === 'publishedToWeb'
      ? {
          status: 'fail',
          reason: `${l.attrs.artifactType ?? 'Artifact'} "${l.attrs.displayName ?? l.attrs.artifactId}" is published to the web by ${l.attrs.sharer?.emailAddress ?? l.attrs.sharer?.identifier ?? 'an unknown user'}: anyone with the link can view it without signing in.`,
        }
      : null,
  );
  if (results.length === 0)
    return [{ resourceType: 'tenant', resourceId: ctx.tenantId, resourceName: null, status: 'pass', reason: 'No Power BI content is published to the web.' }];
  return results;
};
