// The parts every list page (findings, alerts, inventory) is made of: a filter bar of selects kept in the URL, a note
// naming the narrowing filters with a way to clear them, and a page of results with its states and Previous/Next.
import type { UseQueryResult } from '@tanstack/react-query';
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import { Link, useLocation, useSearchParams } from 'react-router';
import { api } from '../api.ts';
import type { useListFilters } from '../hooks.ts';
import { useApiQuery, useIntegrations } from '../query.ts';
import type { InventoryPage } from '../types.ts';
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

/**
 * A finding's resource as a person reads it: its name; for a tenant-wide result (checks of a tenant setting name no
 * object, so the store keeps the tenant's GUID alone) "Tenant of <integration>", the GUID as its title; else the id.
 */
export function ResourceName({ r }: { r: { resourceName: string | null; resourceType: string; resourceId: string; integrationId: string } }) {
  const integrations = useIntegrations();
  if (r.resourceName) return <>{r.resourceName}</>;
  if (r.resourceType === 'tenant') return <span title={r.resourceId}>Tenant of {integrations.name(r.integrationId)}</span>;
  return <>{r.resourceId}</>;
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

/** The list filters of `useListFilters()` (web/src/hooks.ts). */
type ListFilters = ReturnType<typeof useListFilters>;

/** The relative ranges of {@link TimeRangeFilter}, as the URL's `range` holds them, with their span in milliseconds. */
const RELATIVE_RANGES = [
  { value: '24h', label: 'Last 24 hours', ms: 24 * 3600_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 24 * 3600_000 },
  { value: '30d', label: 'Last 30 days', ms: 30 * 24 * 3600_000 },
] as const;

/** The range a list's URL asks for: a relative one, `custom` (its `since`/`until`, set or not), or '' (any time). */
function rangeOf(filters: ListFilters): string {
  const range = filters.get('range');
  if (range === 'custom' || RELATIVE_RANGES.some((r) => r.value === range)) return range;
  return filters.get('since') || filters.get('until') ? 'custom' : '';
}

/**
 * A list's time filter, kept in the URL: `range` 24h, 7d or 30d (relative to when the page is opened, so a saved
 * link keeps meaning "the last 7 days"), or custom with `since` and `until` (ISO 8601 UTC instants, the API's own
 * parameters: since inclusive, until exclusive).
 * @returns the `since` and `until` to pass the list's API call (undefined when not set); a relative start is taken
 * to the minute when the range is chosen or the page opened, so the query stays the same between renders.
 */
export function useTimeRange(filters: ListFilters): { since: string | undefined; until: string | undefined } {
  const range = rangeOf(filters);
  const relative = RELATIVE_RANGES.find((r) => r.value === range);
  const from = useMemo(() => (relative ? new Date(Math.floor((Date.now() - relative.ms) / 60_000) * 60_000).toISOString() : undefined), [relative]);
  if (relative) return { since: from, until: undefined };
  if (range === 'custom') return { since: filters.get('since') || undefined, until: filters.get('until') || undefined };
  return { since: undefined, until: undefined };
}

/** A day (`YYYY-MM-DD`) or minute (`YYYY-MM-DDTHH:MM`) input value, read as UTC, and the URL's instants. */
const DAY_MS = 24 * 3600_000;
const inputOf = {
  date: {
    since: (iso: string) => (iso ? new Date(iso).toISOString().slice(0, 10) : ''),
    // The URL's until is exclusive: the day shown is the last one included.
    until: (iso: string) => (iso ? new Date(Date.parse(iso) - 1).toISOString().slice(0, 10) : ''),
  },
  minute: {
    since: (iso: string) => (iso ? new Date(iso).toISOString().slice(0, 16) : ''),
    until: (iso: string) => (iso ? new Date(iso).toISOString().slice(0, 16) : ''),
  },
};
const instantOf = {
  date: {
    since: (v: string) => (v ? `${v}T00:00:00.000Z` : ''),
    until: (v: string) => (v ? new Date(Date.parse(`${v}T00:00:00.000Z`) + DAY_MS).toISOString() : ''),
  },
  minute: { since: (v: string) => (v ? `${v}:00.000Z` : ''), until: (v: string) => (v ? `${v}:00.000Z` : '') },
};

/**
 * The time filter of a list (see {@link useTimeRange}): a select of any time, the last 24 hours, 7 or 30 days, or a
 * custom range, which shows From and To inputs (UTC; `precision` date: whole days, To included; minute: instants, To
 * excluded). Every change goes to the URL at once.
 */
export function TimeRangeFilter({
  id,
  label,
  filters,
  precision = 'date',
}: {
  id: string;
  label: string;
  filters: ListFilters;
  precision?: 'date' | 'minute';
}) {
  const range = rangeOf(filters);
  const type = precision === 'date' ? 'date' : 'datetime-local';
  const bound = (which: 'since' | 'until', text: string) => {
    const value = filters.get(which);
    const valid = !value || !Number.isNaN(Date.parse(value));
    return (
      <div className="field">
        <label htmlFor={`${id}-${which}`}>{text}</label>
        <input
          id={`${id}-${which}`}
          type={type}
          value={valid ? inputOf[precision][which](value) : ''}
          onChange={(e) => filters.update({ range: 'custom', [which]: instantOf[precision][which](e.target.value) })}
        />
      </div>
    );
  };
  return (
    <>
      <SelectFilter
        id={id}
        label={label}
        all="Any time"
        options={[...RELATIVE_RANGES.map(({ value, label: l }) => ({ value, label: l })), { value: 'custom', label: 'Custom range' }]}
        value={range}
        onChange={(v) => filters.update({ range: v, since: v === 'custom' ? filters.get('since') : '', until: v === 'custom' ? filters.get('until') : '' })}
      />
      {range === 'custom' ? (
        <>
          {bound('since', 'From (UTC)')}
          {bound('until', precision === 'date' ? 'To (UTC, included)' : 'Until (UTC)')}
        </>
      ) : null}
    </>
  );
}

/** Shows the value of a datalist option: the name, with the id when two objects share the name. */
function pickerLabels(items: { id: string; name: string | null }[]): Map<string, string> {
  const count = new Map<string, number>();
  for (const i of items) count.set(i.name ?? i.id, (count.get(i.name ?? i.id) ?? 0) + 1);
  return new Map(items.map((i) => [i.id, (count.get(i.name ?? i.id) ?? 0) > 1 ? `${i.name ?? i.id} (${i.id})` : (i.name ?? i.id)]));
}

/** Most options an inventory picker lists at once. */
const PICKER_SIZE = 20;

/** The text of `value` after `wait` milliseconds without change. */
function useDebounced(value: string, wait: number): string {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), wait);
    return () => clearTimeout(t);
  }, [value, wait]);
  return settled;
}

/**
 * A filter choosing one inventory object (an environment, an agent) by name, searched on the server as one types
 * (`GET /inventory/{kind}?q=`, name or id, at most {@link PICKER_SIZE} suggestions): a labelled text input with a
 * datalist, keyboard-usable as the browser's own. Picking a suggestion, Enter or leaving the field selects the object
 * whose name (or id) is the text, or the only suggestion; an emptied field clears the filter. The URL keeps the id;
 * the field shows the object's name.
 */
export function InventoryPicker({
  id,
  label,
  kind,
  value,
  onChange,
  all,
}: {
  id: string;
  label: string;
  kind: 'environments' | 'agents';
  value: string;
  onChange: (id: string) => void;
  all: string;
}) {
  // The text being typed; null when not editing (the field then shows the selected object's name).
  const [text, setText] = useState<string | null>(null);
  const [note, setNote] = useState('');
  const term = useDebounced((text ?? '').trim(), 200);
  const suggestions = useApiQuery<InventoryPage>(`/inventory/${kind}`, { q: term || undefined, limit: PICKER_SIZE }, { enabled: text !== null });
  const chosen = useApiQuery<InventoryPage>(`/inventory/${kind}`, { q: value, limit: PICKER_SIZE }, { enabled: !!value });
  const selected = chosen.data?.items.find((i) => i.id === value);
  const items = suggestions.data?.items ?? [];
  const labels = pickerLabels(items);

  /** Selects the object `typed` names (exact name, label or id, any case), asking the server when the suggestions are not yet its. */
  const commit = async (typed: string) => {
    const t = typed.trim();
    if (!t) {
      setText(null);
      setNote('');
      if (value) onChange('');
      return;
    }
    const page = term === t && suggestions.data ? suggestions.data : await api.get<InventoryPage>(`/inventory/${kind}`, { q: t, limit: PICKER_SIZE });
    const named = pickerLabels(page.items);
    const lower = t.toLowerCase();
    const hit =
      page.items.find((i) => named.get(i.id)?.toLowerCase() === lower || i.id.toLowerCase() === lower || (i.name ?? '').toLowerCase() === lower) ??
      (page.items.length === 1 ? page.items[0] : undefined);
    if (!hit) {
      setNote(`No ${kind === 'agents' ? 'agent' : 'environment'} is named "${t}"; keep typing and pick a suggestion.`);
      return;
    }
    setText(null);
    setNote('');
    if (hit.id !== value) onChange(hit.id);
  };

  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="text"
        aria-describedby={note ? `${id}-note` : undefined}
        list={`${id}-options`}
        autoComplete="off"
        placeholder={all}
        value={text ?? (value ? (selected ? (selected.name ?? selected.id) : value) : '')}
        onChange={(e) => {
          const v = e.target.value;
          setText(v);
          // A suggestion picked from the list (not typed): select it at once.
          const native = e.nativeEvent as InputEvent;
          if ((!(native instanceof InputEvent) || native.inputType === 'insertReplacementText') && [...labels.values()].includes(v)) void commit(v);
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            void commit(text ?? '');
          } else if (e.key === 'Escape') {
            setText(null);
            setNote('');
          }
        }}
        onBlur={() => {
          if (text !== null) void commit(text);
        }}
      />
      <datalist id={`${id}-options`}>
        {items.map((i) => (
          <option key={`${i.integrationId}/${i.id}`} value={labels.get(i.id)} />
        ))}
      </datalist>
      {note ? (
        <p id={`${id}-note`} className="small hint" role="status">
          {note}
        </p>
      ) : null}
    </div>
  );
}
