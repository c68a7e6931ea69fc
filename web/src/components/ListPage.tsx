// The parts every list page (findings, alerts, inventory) is made of: a filter bar of selects kept in the URL, a note
// naming the narrowing filters with a way to clear them, and a page of results with its states and Previous/Next.
import type { UseQueryResult } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link, useLocation, useSearchParams } from 'react-router';
import { useIntegrations } from '../query.ts';
import type { RowData } from '@tanstack/react-table';
import { column, type Column } from './DataTable.tsx';
import { Loaded, Pager } from './ui.tsx';

/** The filters of a list, as a search landmark; `onSubmit` runs on Enter or a submit button. */
export function FilterBar({ label, onSubmit, children }: { label: string; onSubmit?: () => void; children: ReactNode }) {
  return (
    <form
      className="filters"
      role="search"
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit?.();
      }}
    >
      {children}
    </form>
  );
}

type Option = string | { value: string; label: string };

/** A labelled select of `options`, led by an "any" option labelled `all` (value "") when given. */
export function SelectFilter({
  id,
  label,
  value,
  onChange,
  options,
  all,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  options: readonly Option[];
  all?: string;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {all ? <option value="">{all}</option> : null}
        {options.map((o) => {
          const { value: v, label: l } = typeof o === 'string' ? { value: o, label: o } : o;
          return (
            <option key={v} value={v}>
              {l}
            </option>
          );
        })}
      </select>
    </div>
  );
}

/** The Integration filter: every integration of the organization, or one. */
export function IntegrationFilter({ id, value, onChange }: { id: string; value: string; onChange: (v: string) => void }) {
  const { items } = useIntegrations();
  return (
    <SelectFilter
      id={id}
      label="Integration"
      all="All integrations"
      value={value}
      onChange={onChange}
      options={items.map((i) => ({ value: i.id, label: i.name }))}
    />
  );
}

/** An integration's name (its id until the list has loaded). */
export function IntegrationName({ id }: { id: string }) {
  return <>{useIntegrations().name(id)}</>;
}

/** The filters that narrow a list but have no control of their own (set by a link), each named, and one button clearing them. */
export function FilterNote({ filters, clear, onClear }: { filters: [string, string][]; clear: string; onClear: () => void }) {
  const set = filters.filter(([, v]) => v);
  if (!set.length) return null;
  return (
    <p>
      {set.map(([label, v]) => (
        <span key={label}>
          {label} <code>{v}</code>{' '}
        </span>
      ))}
      <button type="button" className="link-button" onClick={onClear}>
        {clear}
      </button>
    </p>
  );
}

/**
 * One page of a cursor-paged list: the error, a status line (`summary` of the count, "Loading…" while fetching),
 * "Loading…" until the first answer, `children(items)`, and Previous/Next.
 */
export function PagedList<T>({
  query,
  summary,
  pager,
  children,
}: {
  query: UseQueryResult<{ items: T[]; nextCursor: string | null }>;
  summary?: (count: number) => string;
  pager: Parameters<typeof Pager>[0];
  children: (items: T[]) => ReactNode;
}) {
  const count = query.data?.items.length ?? 0;
  return (
    <>
      {summary ? (
        <p role="status" className="muted">
          {query.isFetching ? 'Loading…' : summary(count)}
        </p>
      ) : null}
      <Loaded query={query}>{(page) => children(page.items)}</Loaded>
      <Pager {...pager} />
    </>
  );
}

/**
 * A text search kept in the URL (`value`), edited as a draft and applied by the filter bar's submit (Enter or the
 * Search button beside it); the draft follows the URL when it changes under it (Back). Place inside a FilterBar whose
 * `onSubmit` applies `draft`: `const s = useSearchDraft(filters.get('q'))`, `onSubmit={() => filters.update({ q: s.draft.trim() })}`.
 */
export function useSearchDraft(value: string) {
  const [draft, setDraft] = useState(value);
  const [last, setLast] = useState(value);
  if (value !== last) {
    setLast(value);
    setDraft(value);
  }
  return { draft, setDraft };
}

/** The search box of a filter bar, with its Search button (submits the bar). */
export function SearchFilter({
  id,
  label = 'Search',
  draft,
  setDraft,
  placeholder,
}: {
  id: string;
  label?: string;
  draft: string;
  setDraft: (v: string) => void;
  placeholder?: string;
}) {
  return (
    <>
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input id={id} type="search" value={draft} onChange={(e) => setDraft(e.target.value)} placeholder={placeholder} />
      </div>
      <div className="field field-button">
        <button type="submit">Search</button>
      </div>
    </>
  );
}

/** A link to the current list with one more filter set (the others kept, back to the first page). */
export function FilterLink({ name, value, children, label }: { name: string; value: string; children: ReactNode; label: string }) {
  const [params] = useSearchParams();
  const { pathname } = useLocation();
  const next = new URLSearchParams(params);
  next.set(name, value);
  next.delete('cursor');
  return (
    <Link to={`${pathname}?${next.toString()}`} aria-label={label}>
      {children}
    </Link>
  );
}

/** The Environment column of a triage list: the environment's name (else its id) as a filter link, or "—". */
export function environmentColumn<T extends RowData>(of: (row: T) => { environmentId?: string | null; environmentName?: string | null }): Column<T> {
  return column<T>('Environment', (row) => {
    const { environmentId: id, environmentName: name } = of(row);
    return id ? (
      <FilterLink name="environmentId" value={id} label={`Only environment ${name ?? id}`}>
        {name ?? id}
      </FilterLink>
    ) : (
      <span className="muted">—</span>
    );
  });
}
