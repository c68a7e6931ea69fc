import { VigilError } from '../../../core/errors.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import { obj, str, type Json } from '../../../core/json.ts';
import type { Stream } from '../../stream.ts';
import { adminUrl, widelySharedPage, type WidelySharedList } from '../scanner.ts';

/**
 * `powerBiSharedLinks`: the Power BI artifacts published to the web and those shared through links to the whole
 * organisation (admin `widelySharedArtifacts/publishedToWeb` and `…/linksSharedToWholeOrganization`, paged by
 * `continuationUri`). Same access as `powerBiWorkspaces` (the read-only admin APIs).
 */

/** Which widely-shared list an artifact came from. */
export type PowerBiShareKind = 'publishedToWeb' | 'organizationLink';

/**
 * An artifact published to the web (anyone with the link, no sign-in) or shared with a link to the whole organisation.
 * `id` = `{kind}/{artifactId}`; slice `*`.
 *
 * Sources: learn.microsoft.com/rest/api/power-bi/admin/widely-shared-artifacts-published-to-web and
 * …/widely-shared-artifacts-links-shared-to-whole-organization (ArtifactAccessEntry: `artifactId`, `displayName`,
 * `artifactType`, `accessRight`, `shareType`, `sharer`).
 */
export interface PowerBiSharedLinkAttrs {
  kind: PowerBiShareKind;
  artifactId: string;
  displayName: string | null;
  /** `Report`, `Dashboard`, … */
  artifactType: string | null;
  /** `shareType`: `PublishToWeb` or `Link`. */
  shareType: string | null;
  /** The access the link grants: `None` for publish to web; `Read`, `ReadWrite`, `ReadReshare`… for links. */
  accessRight: string | null;
  /** Who created the embed code / link. */
  sharer: { emailAddress: string | null; identifier: string | null; graphId: string | null; principalType: string | null } | null;
}

const LISTS: { list: WidelySharedList; kind: PowerBiShareKind }[] = [
  { list: 'publishedToWeb', kind: 'publishedToWeb' },
  { list: 'linksSharedToWholeOrganization', kind: 'organizationLink' },
];

/** Maps an `ArtifactAccessEntry` of a widely-shared list to its estate object (`id` = `{kind}/{artifactId}`). */
export function toSharedLink(kind: PowerBiShareKind, e: Json): EstateObject<PowerBiSharedLinkAttrs> | null {
  const artifactId = str(e.artifactId);
  if (!artifactId) return null;
  const sharer = e.sharer && typeof e.sharer === 'object' ? obj(e.sharer) : null;
  return {
    sliceKey: '*',
    id: `${kind}/${artifactId.toLowerCase()}`,
    name: str(e.displayName),
    attrs: {
      kind,
      artifactId: artifactId.toLowerCase(),
      displayName: str(e.displayName),
      artifactType: str(e.artifactType),
      shareType: str(e.shareType),
      accessRight: str(e.accessRight),
      sharer: sharer
        ? { emailAddress: str(sharer.emailAddress), identifier: str(sharer.identifier), graphId: str(sharer.graphId), principalType: str(sharer.principalType) }
        : null,
    },
    raw: e,
  };
}

/**
 * Artifacts published to the web and artifacts shared through links to the whole organisation: one object per artifact
 * per list, every round in full (objects no longer listed are marked deleted). Cursor: `{"k": list index, "u": page URL}`.
 */
export const powerBiSharedLinksStream: Stream<'powerBiSharedLinks', EstateObject<PowerBiSharedLinkAttrs>> = {
  name: 'powerBiSharedLinks',
  capability: 'powerBi.tenant',
  primaryKey: ['id'],
  resource: (ctx) => ctx.cloud.powerBi.resource,
  async *read(ctx, _slice, cursor) {
    let k = 0;
    let url: string | undefined;
    if (cursor !== null) {
      const c = JSON.parse(cursor) as { k?: unknown; u?: unknown };
      k = c.k === 1 ? 1 : 0;
      url = typeof c.u === 'string' ? c.u : undefined;
    }
    for (; k < LISTS.length; k++) {
      const { list, kind } = LISTS[k] as (typeof LISTS)[number];
      url ??= adminUrl(ctx, `widelySharedArtifacts/${list}`);
      for (let pages = 0; url !== undefined; pages++) {
        if (pages > 100_000) throw new VigilError('POWER_BI_PAGING_LOOP', `Power BI ${list} kept returning continuation links.`);
        const page = await widelySharedPage(ctx, list, url);
        const seen = new Map<string, EstateObject<PowerBiSharedLinkAttrs>>();
        for (const e of page.entities) {
          const o = toSharedLink(kind, e);
          if (o && !seen.has(o.id)) seen.set(o.id, o);
        }
        url = page.next;
        const nextCursor = url !== undefined ? JSON.stringify({ k, u: url }) : k + 1 < LISTS.length ? JSON.stringify({ k: k + 1 }) : null;
        yield { records: [...seen.values()], nextCursor };
      }
    }
  },
};
