import type { Json } from '../core/json.ts';
import type { ApiName } from '../platform/http/client.ts';
import { odataPages } from '../platform/http/odata.ts';
import type { Slice, Stream, StreamContext, StreamPage } from './stream.ts';

/**
 * The OData list stream: one collection read page by page through {@link odataPages} (`@odata.nextLink` / `nextLink`,
 * every link checked against the link policy before the page is yielded), each item mapped to a record, the next
 * page's URL as the resumable cursor. Used by every stream that reads a plain list (BAP environments, Dataverse entity
 * sets, Power Apps admin lists, Graph external connections, ARM child collections); delta rounds and fan-out reads
 * (single-item reads per listed item) write their own `read`.
 */

/** The page request of a list, built once per slice read. */
export interface ListRequest {
  api: ApiName;
  /** The first page's URL, or the cursor (a next link) to resume from. */
  url: string;
  /** Headers resent on every page (`Prefer: odata.maxpagesize`, `OData-Version`). */
  headers?: Record<string, string>;
  /** Budget units per page request. @default 1 */
  cost?: number;
}

/**
 * Pages of one OData list mapped to records: `{ records, nextCursor: nextLink ?? null }`.
 * @param token the bearer of the list's resource (`ctx.tokens.bearer(resource)`).
 * @throws VigilError `upstream` / `FOREIGN_LINK` (link policy), UpstreamHttpError (pipeline), as {@link odataPages}.
 */
export async function* listPages<R>(
  ctx: StreamContext,
  token: (forceRefresh: boolean) => Promise<string>,
  request: ListRequest,
  map: (j: Json) => R,
): AsyncGenerator<StreamPage<R>> {
  for await (const page of odataPages<Json>(ctx.http, { ...request, token, tenantId: ctx.tenantId, signal: ctx.signal })) {
    yield { records: page.items.map(map), nextCursor: page.nextLink ?? null };
  }
}

/** Declaration of an OData list stream: the {@link Stream} fields, the page request and the item mapping. */
export interface ListStreamDefinition<N extends string, R, K extends string = never> extends Omit<Stream<N, R, K>, 'read' | 'delta' | 'retain'> {
  /**
   * The page request of a slice from its cursor (null = the first page). Called before any token is asked, so it is
   * the place to refuse an off-profile host the slice carries (a Dataverse instance URL).
   */
  request(ctx: StreamContext, slice: Slice, cursor: string | null): ListRequest;
  /**
   * One record from one item of a page. May throw to refuse the page (e.g. a link the record would store is off the
   * profile's hosts): the page is then not yielded.
   */
  map(j: Json, slice: Slice, ctx: StreamContext): R;
}

/** A stream reading one OData list per slice (see {@link ListStreamDefinition}); the token is for `resource`. */
export function odataListStream<N extends string, R, K extends string = never>(definition: ListStreamDefinition<N, R, K>): Stream<N, R, K> {
  const { request, map, ...stream } = definition;
  return {
    ...stream,
    async *read(ctx, slice, cursor) {
      const req = request(ctx, slice, cursor);
      yield* listPages(ctx, ctx.tokens.bearer(stream.resource(ctx, slice)), req, (j) => map(j, slice, ctx));
    },
  };
}
