import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails each artifact shared through a link that works for everyone in the organisation with more than read access
 * (`accessRight` other than `Read`/`None`: reshare or edit), from GET admin/widelySharedArtifacts/
 * linksSharedToWholeOrganization; read-only organisation links pass (reported for inventory).
 */
export const check: CheckFunction = (ctx) => {
  const results = evaluateEstate(ctx, 'powerBiSharedLinks', 'powerBiReport', (l) => {
    if (l.attrs.kind !== 'organizationLink') return null;
    const right = l.attrs.accessRight ?? 'Read';
    return right === 'Read' || right === 'None'
      ? { status: 'pass', reason: 'Organisation-wide link with read access only.' }
      : {
          status: 'fail',
          reason: `"${l.attrs.displayName ?? l.attrs.artifactId}" is shared with the whole organisation with ${right} access by ${l.attrs.sharer?.emailAddress ?? 'an unknown user'}.`,
        };
  });
  if (results.length === 0)
    return [{ resourceType: 'tenant', resourceId: ctx.tenantId, resourceName: null, status: 'pass', reason: 'No organisation-wide links.' }];
  return results;
};
