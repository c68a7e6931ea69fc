// Every table of rows in the portal: TanStack Table (v9, headless: tanstack.com/table/latest/docs/guide/tables)
// builds the header groups and row model from column definitions; this component owns the markup (scoped column
// headers, the keyboard-scrollable region named `label`, the `num` class on numeric columns).
import { metaHelper, tableFeatures, useTable, type ColumnDef, type RowData } from '@tanstack/react-table';
import type { ReactNode } from 'react';
import { SeverityBadge, StatusBadge, TableScroll, Time } from './ui.tsx';

/** Per-column meta: a class for the column's header and cells (`num` right-aligns numbers). */
interface ColumnMeta {
  className?: string;
}

const features = tableFeatures({ columnMeta: metaHelper<ColumnMeta>() });

/** A column of a table of `T` rows. */
export type Column<T extends RowData> = ColumnDef<typeof features, T, unknown>;

/** A column headed `header` whose cell renders `render(row)`; `className` goes on its header and cells. */
export function column<T extends RowData>(header: string, render: (row: T) => ReactNode, className?: string): Column<T> {
  return { id: header, header, cell: ({ row }) => render(row.original), meta: { className } };
}

/** "Severity": the row's severity badge. */
export const severityColumn = <T extends { severity: string | null }>(): Column<T> => column<T>('Severity', (r) => <SeverityBadge severity={r.severity} />);

/** A status badge column (default header "Status"). */
export const statusColumn = <T extends RowData>(get: (row: T) => string | null | undefined, header = 'Status'): Column<T> =>
  column<T>(header, (r) => <StatusBadge status={get(r)} />);

/** A timestamp column (`YYYY-MM-DD HH:MM UTC`). */
export const timeColumn = <T extends RowData>(header: string, get: (row: T) => string | null | undefined): Column<T> =>
  column<T>(header, (r) => <Time value={get(r)} />);

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

/**
 * A table of `rows` with `columns`, in a scrollable region labelled `label`; `empty` (a muted line) when there are no
 * rows. Rows are told apart by `rowId` (default: their `id`). `columns` must keep its identity between renders (a module constant or a memo).
 */
export function DataTable<T extends RowData>({
  label,
  rows,
  columns,
  rowId,
  empty,
  describedBy,
}: {
  label: string;
  rows: T[];
  columns: Column<T>[];
  rowId?: (row: T) => string;
  empty?: ReactNode;
  describedBy?: string;
}) {
  const table = useTable({ features, columns, data: rows, getRowId: rowId ?? byId });
  if (!rows.length) return empty ? <p className="muted">{empty}</p> : null;
  return (
    <TableScroll label={label}>
      <table aria-describedby={describedBy}>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((h) => (
                <th key={h.id} scope="col" className={h.column.columnDef.meta?.className}>
                  <table.FlexRender header={h} />
                </th>
              ))}
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
  );
}
