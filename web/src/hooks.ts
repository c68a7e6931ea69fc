import { useCallback, useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, ApiError } from './api.ts';

type Query = Record<string, string | number | null | undefined>;

export interface Loaded<T> {
  data: T | null;
  error: ApiError | null;
  loading: boolean;
  /** Fetches again (keeps the current data on screen meanwhile). */
  reload: () => void;
  /** Replaces the data with an answer obtained elsewhere (e.g. a POST that answers the same shape). */
  setData: (d: T) => void;
}

/** GETs `path` (null: nothing yet) whenever it or the query changes. */
export function useApi<T>(path: string | null, query?: Query): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState<boolean>(path !== null);
  const [tick, setTick] = useState(0);
  const key = path === null ? null : `${path}?${JSON.stringify(query ?? {})}`;
  const queryRef = useRef(query);
  queryRef.current = query;

  useEffect(() => {
    if (path === null) return;
    const ctl = new AbortController();
    setLoading(true);
    api
      .get<T>(path, queryRef.current, ctl.signal)
      .then((d) => {
        setData(d);
        setError(null);
      })
      .catch((e: unknown) => {
        if ((e as Error).name === 'AbortError') return;
        setError(e instanceof ApiError ? e : new ApiError(0, 'CLIENT', (e as Error).message));
      })
      .finally(() => {
        if (!ctl.signal.aborted) setLoading(false);
      });
    return () => ctl.abort();
    // `key` stands for path and query.
  }, [key, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload, setData };
}

/** Sets the document title for the page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Vigil`;
  }, [title]);
}

/**
 * The filters of a list page, kept in the URL's query (so Back and shared links work), and Previous/Next over the
 * API's keyset cursors: the API gives only the next cursor, so the cursors of the pages already seen are kept to go
 * back. `update` changes filters (and returns to the first page); `onFilterChange` runs when it does. Spread
 * `pager(nextCursor)` into `<Pager>`.
 */
export function useListFilters(onFilterChange?: () => void) {
  const [params, setParams] = useSearchParams();
  const cursor = params.get('cursor') ?? '';
  const [trail, setTrail] = useState<string[]>([]);
  const go = (next: Record<string, string>) => {
    const p = new URLSearchParams(params);
    for (const [k, v] of Object.entries(next)) {
      if (v) p.set(k, v);
      else p.delete(k);
    }
    setParams(p);
  };
  return {
    /** A filter's value, or `fallback` when absent. */
    get: (name: string, fallback = '') => params.get(name) ?? fallback,
    cursor,
    update(next: Record<string, string>) {
      setTrail([]);
      onFilterChange?.();
      go({ ...next, cursor: '' });
    },
    pager: (nextCursor: string | null | undefined) => ({
      hasPrevious: trail.length > 0 || !!cursor,
      nextCursor,
      onPrevious: () => {
        setTrail((t) => t.slice(0, -1));
        go({ cursor: trail[trail.length - 1] ?? '' });
      },
      onNext: () => {
        if (!nextCursor) return;
        setTrail((t) => [...t, cursor]);
        go({ cursor: nextCursor });
      },
    }),
  };
}
