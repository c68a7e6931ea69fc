// Every table of rows in the portal: TanStack Table (v9, headless: tanstack.com/table/latest/docs/guide/tables)
// builds the header groups and row model from column definitions; this component owns the markup (scoped column
// headers, the keyboard-scrollable region named `label`, the `num` class on numeric columns). Sorting is the
// server's (a list of thousands is sorted by the API, page by page): a column with a `sortKey` gets a header button
// that asks for that order, and `aria-sort` says the current one. Selection (for bulk actions) is a column of
// checkboxes the table adds in front, with one in the header for every row on the page.
import { metaHelper, tableFeatures, useTable, type ColumnDef, type RowData } from '@tanstack/react-table';
import { createContext, useContext, useMemo, type ReactNode } from 'react';
import { SeverityBadge, StatusBadge, TableScroll, Time } from './ui.tsx';

/** Per-column meta: a class for the column's header and cells (`num` right-aligns numbers); the server's sort key. */
interface ColumnMeta {
  className?: string;
  /** The API's `sort` value ordering by this column; absent: the column is not sortable. */
  sortKey?: string;
}

const features = tableFeatures({ columnMeta: metaHelper<ColumnMeta>() });

/** A column of a table of `T` rows. */
export type Column<T extends RowData> = ColumnDef<typeof features, T, unknown>;

/** A column headed `header` whose cell renders `render(row)`; `className` goes on its header and cells. */
export function column<T extends RowData>(header: string, render: (row: T) => ReactNode, className?: string): Column<T> {
  return { id: header, header, cell: ({ row }) => render(row.original), meta: { className } };
}

/** `c`, sortable by the server's `sortKey`. */
export const sortable = <T extends RowData>(c: Column<T>, sortKey: string): Column<T> => ({ ...c, meta: { ...c.meta, sortKey } });

/** The server-side order of a table: the sort key and direction shown, and what a header button asks for. */
export interface TableSort {
  key: string;
  order: 'asc' | 'desc';
  /** Asked for `key` (the same key again: the other direction; a new key: its `firstOrder`). */
  onSort: (key: string, order: 'asc' | 'desc') => void;
  /** The direction a newly chosen key starts in. @default 'desc' */
  firstOrder?: 'asc' | 'desc';
}

/** The selected rows of a table (by row id), for bulk actions. */
export interface TableSelection<T> {
  selected: ReadonlySet<string>;
  onChange: (next: Set<string>) => void;
  /** How a row is named in its checkbox's label ("Select <name>"). */
  name: (row: T) => string;
}

/** "Severity": the row's severity badge. */
export const severityColumn = <T extends { severity: string | null }>(): Column<T> => column<T>('Severity', (r) => <SeverityBadge severity={r.severity} />);

/** A status badge column (default header "Status"). */
export const statusColumn = <T extends RowData>(get: (row: T) => string | null | undefined, header = 'Status'): Column<T> =>
  column<T>(header, (r) => <StatusBadge status={get(r)} />);

/** A timestamp column (`YYYY-MM-DD HH:MM UTC`). */
export const timeColumn = <T extends RowData>(header: string, get: (row: T) => string | null | undefined): Column<T> =>
  column<T>(header, (r) => <Time value={get(r)} />, 'col-time');

/** A name with its id (or type) in small print below. */
export function NameAndId({ name, id }: { name: ReactNode; id: ReactNode }) {
  return (
    <>
      {name}
      <div className="small muted">{id}</div>
    </>
  );
}

/** The default row identity: the row's `id`. */
const byId = (row: unknown) => String((row as { id?: unknown }).id);

/** The header of a sortable column: a button asking for its order, showing the current one. */
function SortButton({ label, sortKey, sort }: { label: ReactNode; sortKey: string; sort: TableSort }) {
  const active = sort.key === sortKey;
  const next = active ? (sort.order === 'asc' ? 'desc' : 'asc') : (sort.firstOrder ?? 'desc');
  return (
    <button type="button" className="sort-button" onClick={() => sort.onSort(sortKey, next)}>
      {label}
      <span aria-hidden="true">{active ? (sort.order === 'asc' ? ' ▲' : ' ▼') : ' ↕'}</span>
    </button>
  );
}

/** The selection of the table being rendered, for its checkbox column; null without one. */
const SelectionContext = createContext<{ selection: TableSelection<unknown>; pageIds: string[]; idOf: (row: unknown) => string } | null>(null);

/** The header's checkbox: every row of the page (indeterminate when some are). */
function SelectPageBox() {
  const s = useContext(SelectionContext);
  if (!s) return null;
  const { selection, pageIds } = s;
  const every = pageIds.length > 0 && pageIds.every((id) => selection.selected.has(id));
  const some = pageIds.some((id) => selection.selected.has(id));
  return (
    <input
      type="checkbox"
      aria-label="Select every row on this page"
      checked={every}
      ref={(el) => {
        if (el) el.indeterminate = some && !every;
      }}
      onChange={(e) => {
        const next = new Set(selection.selected);
        for (const id of pageIds)
          if (e.target.checked) next.add(id);
          else next.delete(id);
        selection.onChange(next);
      }}
    />
  );
}

/** A row's checkbox, named after the row. */
function SelectRowBox({ row }: { row: { original: unknown } }) {
  const s = useContext(SelectionContext);
  if (!s) return null;
  const { selection, idOf } = s;
  const id = idOf(row.original);
  return (
    <input
      type="checkbox"
      aria-label={`Select ${selection.name(row.original)}`}
      checked={selection.selected.has(id)}
      onChange={(e) => {
        const next = new Set(selection.selected);
        if (e.target.checked) next.add(id);
        else next.delete(id);
        selection.onChange(next);
      }}
    />
  );
}

/**
 * The checkbox column a table with a selection adds in front. One definition for every table and render: TanStack's
 * FlexRender renders a header or cell function as a React component, so a function made anew on each render (as the
 * selection changed) was a new component type, and React replaced the checkbox just ticked: keyboard focus fell to
 * <body> after each Space. The checkboxes read the selection from {@link SelectionContext} instead.
 */
const SELECT_COLUMN: Column<RowData> = { id: 'select', header: SelectPageBox, cell: SelectRowBox, meta: { className: 'select' } };

/**
 * A table of `rows` with `columns`, in a scrollable region labelled `label`; `empty` (a muted line) when there are no
 * rows. Rows are told apart by `rowId` (default: their `id`). `columns` must keep its identity between renders (a module constant or a memo).
 * With `sort`, columns made {@link sortable} get header buttons; with `selection`, a checkbox per row and one for the page.
 */
export function DataTable<T extends RowData>({
  label,
  rows,
  columns,
  rowId,
  empty,
  describedBy,
  sort,
  selection,
}: {
  label: string;
  rows: T[];
  columns: Column<T>[];
  rowId?: (row: T) => string;
  empty?: ReactNode;
  describedBy?: string;
  sort?: TableSort;
  selection?: TableSelection<T>;
}) {
  const idOf = rowId ?? byId;
  const selecting = selection !== undefined;
  const all = useMemo(() => (selecting ? [SELECT_COLUMN as unknown as Column<T>, ...columns] : columns), [columns, selecting]);
  const selectionState = useMemo(
    () => (selection ? { selection: selection as TableSelection<unknown>, pageIds: rows.map(idOf), idOf: idOf as (row: unknown) => string } : null),
    [selection, rows, idOf],
  );
  const table = useTable({ features, columns: all, data: rows, getRowId: idOf });
  if (!rows.length) return empty ? <p className="muted">{empty}</p> : null;
  return (
    <SelectionContext.Provider value={selectionState}>
      <TableScroll label={label}>
        <table aria-describedby={describedBy}>
          <thead>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id}>
                {group.headers.map((h) => {
                  const meta = h.column.columnDef.meta;
                  const key = sort && meta?.sortKey;
                  return (
                    <th
                      key={h.id}
                      scope="col"
                      className={meta?.className}
                      aria-sort={key ? (sort.key === key ? (sort.order === 'asc' ? 'ascending' : 'descending') : 'none') : undefined}
                    >
                      {key ? <SortButton label={<table.FlexRender header={h} />} sortKey={key} sort={sort} /> : <table.FlexRender header={h} />}
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          <tbody>
            {table.getRowModel().rows.map((row) => (
              <tr key={row.id}>
                {row.getAllCells().map((cell) => (
                  <td key={cell.id} className={cell.column.columnDef.meta?.className}>
                    <table.FlexRender cell={cell} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </SelectionContext.Provider>
  );
}
