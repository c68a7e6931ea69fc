// The portal's server state, held by TanStack Query (tanstack.com/query/v5/docs/framework/react/guides/query-keys and
// .../guides/invalidations-from-mutations): a GET is cached under a key made of its path's segments and its
// parameters, and a change through the API invalidates the keys under the paths it touches, so every page showing
// them fetches again.
import { keepPreviousData, QueryClient, useMutation, useQuery, useQueryClient, type QueryKey, type UseQueryOptions } from '@tanstack/react-query';
import { api, ApiError } from './api.ts';
import type { IntegrationPage } from './types.ts';

declare module '@tanstack/react-query' {
  // Every query and mutation fails with an ApiError (`asApiError` makes sure of it).
  interface Register {
    defaultError: ApiError;
  }
}

/** Query parameters of a GET; empty values are left out of the URL and of the cache key. */
export type Query = Record<string, string | number | null | undefined>;

/** Turns any failure into an ApiError (a TypeError from the page's own code becomes code CLIENT). */
function asApiError(e: unknown): ApiError {
  return e instanceof ApiError ? e : new ApiError(0, 'CLIENT', (e as Error).message);
}

/**
 * The portal's cache. No retry (the API's errors say what to do, and a retried 4xx only delays them) and no refetch
 * on window focus (pages poll where they need fresh data); data is stale at once, so a page shown again fetches again.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } });
}

/** `['api', ...segments of path]`: the prefix naming every GET at or below `path` (for invalidation). */
export function apiScope(path: string): QueryKey {
  return ['api', ...path.split('/').filter(Boolean)];
}

/** The cache key of GET `path` with `query`: its scope, then the parameters that are set. */
export function apiKey(path: string, query?: Query): QueryKey {
  const params = Object.fromEntries(Object.entries(query ?? {}).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  return [...apiScope(path), params];
}

type Extra<T> = Omit<UseQueryOptions<T, ApiError, T, QueryKey>, 'queryKey' | 'queryFn'>;

/**
 * GETs `/api/v1<path>` with `query`, cached under `apiKey(path, query)`. While other parameters load, the previous
 * answer stays on screen (`placeholderData: keepPreviousData`), as a list page's Next should not blank the table.
 */
export function useApiQuery<T>(path: string, query?: Query, options?: Extra<T>) {
  return useQuery<T, ApiError, T, QueryKey>({
    queryKey: apiKey(path, query),
    queryFn: ({ signal }) => api.get<T>(path, query, signal).catch((e: unknown) => Promise.reject(asApiError(e))),
    placeholderData: keepPreviousData,
    ...options,
  });
}

/** The organization's integrations, and a name by id (the id itself until they have loaded), for filters and labels. */
export function useIntegrations() {
  const q = useApiQuery<IntegrationPage>('/integrations');
  const items = q.data?.items ?? [];
  return { query: q, items, name: (id: string) => items.find((i) => i.id === id)?.name ?? id };
}

/**
 * A change through the API. On success, `update` may write the answer into the cache (for an instant view), then
 * every query under each path of `invalidates` is marked stale and those on screen fetch again.
 */
export function useApiMutation<V, R>(
  call: (vars: V) => Promise<R>,
  opts: { invalidates?: string[]; update?: (answer: R, vars: V, client: QueryClient) => void; onSuccess?: (answer: R, vars: V) => void } = {},
) {
  const client = useQueryClient();
  return useMutation<R, ApiError, V>({
    mutationFn: (vars) => call(vars).catch((e: unknown) => Promise.reject(asApiError(e))),
    onSuccess: async (answer, vars) => {
      opts.update?.(answer, vars, client);
      opts.onSuccess?.(answer, vars);
      await Promise.all((opts.invalidates ?? []).map((p) => client.invalidateQueries({ queryKey: apiScope(p) })));
    },
  });
}
