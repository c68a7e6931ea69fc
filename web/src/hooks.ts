import { useCallback, useEffect, useRef, useState } from 'react';
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
 * Previous/Next over an API list's keyset cursors: the API only gives the next cursor, so the cursors of the pages
 * already seen are kept to go back. `goTo` moves the page to a cursor (empty: the first page); `reset` forgets the
 * trail when filters change. Spread `pager(nextCursor)` into `<Pager>`.
 */
export function useCursorTrail(cursor: string, goTo: (cursor: string) => void) {
  const [trail, setTrail] = useState<string[]>([]);
  return {
    reset: () => setTrail([]),
    pager: (nextCursor: string | null | undefined) => ({
      hasPrevious: trail.length > 0 || !!cursor,
      nextCursor,
      onPrevious: () => {
        const prev = trail[trail.length - 1] ?? '';
        setTrail((t) => t.slice(0, -1));
        goTo(prev);
      },
      onNext: () => {
        if (!nextCursor) return;
        setTrail((t) => [...t, cursor]);
        goTo(nextCursor);
      },
    }),
  };
}
