import { useEffect, useState, type ChangeEvent } from 'react';
import { useSearchParams } from 'react-router';
import type { TableSort } from './components/DataTable.tsx';
import type { FormError } from './components/ui.tsx';

/** Sets the document title for the page. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Vigil`;
  }, [title]);
}

/**
 * The filters of a list page, kept in the URL's query (so Back and shared links work), and Previous/Next over the
 * API's keyset cursors: the API gives only the next cursor, so the cursors of the pages already seen are kept to go
 * back. `update` changes filters (and returns to the first page). Spread `bind(name)` into a `<SelectFilter>` and
 * `pager(nextCursor)` into `<Pager>`.
 */
export function useListFilters() {
  const [params, setParams] = useSearchParams();
  const cursor = params.get('cursor') ?? '';
  const [trail, setTrail] = useState<string[]>([]);
  // From the address bar, not this render's parameters (react-router's functional form hands over the last render's):
  // two changes in a row (a status, then a severity, before the page renders again) both stay.
  const go = (next: Record<string, string>) => {
    const p = new URLSearchParams(window.location.search);
    for (const [k, v] of Object.entries(next)) {
      if (v) p.set(k, v);
      else p.delete(k);
    }
    setParams(p);
  };
  const update = (next: Record<string, string>) => {
    setTrail([]);
    go({ ...next, cursor: '' });
  };
  const get = (name: string, fallback = '') => params.get(name) ?? fallback;
  return {
    /** A filter's value, or `fallback` when absent. */
    get,
    cursor,
    update,
    /** `value` and `onChange` of the control for filter `name`. */
    bind: (name: string, fallback = '') => ({ value: get(name, fallback), onChange: (v: string) => update({ [name]: v }) }),
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

/**
 * A list's server-side sort kept in the URL (`sort`, `order`; the default key and the default order, `desc` unless
 * `defaultOrder` says otherwise, are left out of the URL and of the API call): the key (one of `keys`, else
 * `fallback`), the order, the `TableSort` to hand a `<DataTable>` (a new key starts in the default order: most
 * pressing first for `desc`, A to Z for `asc`), and the `sort`/`order` query parameters of the list call.
 */
export function useListSort<K extends string>(
  filters: ReturnType<typeof useListFilters>,
  keys: readonly K[],
  fallback: K,
  defaultOrder: 'asc' | 'desc' = 'desc',
) {
  const param = filters.get('sort', fallback);
  const key = keys.find((k) => k === param) ?? fallback;
  const asked = filters.get('order', defaultOrder);
  const order: 'asc' | 'desc' = asked === 'asc' || asked === 'desc' ? asked : defaultOrder;
  const table: TableSort = {
    key,
    order,
    firstOrder: defaultOrder,
    onSort: (k, o) => filters.update({ sort: k === fallback ? '' : k, order: o === defaultOrder ? '' : o }),
  };
  return { key, order, table, query: { sort: key === fallback ? undefined : key, order: order === defaultOrder ? undefined : order } };
}

/** The props `useForm().field(name)` gives a `<Field>`. */
export interface FieldBinding {
  id: string;
  value: string;
  onChange: (e: ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => void;
  error: FormError | undefined;
}

/**
 * The values and errors of a form of text fields named by `K`. Spread `field(name)` into a `<Field>`: its id (the
 * name, which an error's `field` and the error summary's link point at), value, onChange and error.
 */
export function useForm<K extends string>(initial: Record<K, string>) {
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<FormError[]>([]);
  const set = (k: K, v: string) => setValues((s) => ({ ...s, [k]: v }));
  return {
    values,
    errors,
    setErrors,
    set,
    reset: () => setValues(initial),
    field: (k: K): FieldBinding => ({
      id: k,
      value: values[k],
      onChange: (e: ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => set(k, e.target.value),
      error: errors.find((e) => e.field === k),
    }),
  };
}
