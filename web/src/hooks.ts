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
