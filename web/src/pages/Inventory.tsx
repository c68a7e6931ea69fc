// The inventory of one kind: a dense table the server filters, sorts and pages (GET /inventory/{kind}, with the total
// the filter selects), the kind, filters and order kept in the URL. Each row shows names (the object's, its
// environment's) and the few facts of its kind the API summarises; ids and the full object only under "All attributes".
import { useMemo } from 'react';
import { Link } from 'react-router';
import { column, DataTable, sortable, timeColumn, type Column } from '../components/DataTable.tsx';
import {
  environmentColumn,
  FilterBar,
  FilterNote,
  IntegrationFilter,
  IntegrationName,
  PagedList,
  SearchFilter,
  SelectFilter,
  useSearchDraft,
} from '../components/ListPage.tsx';
import { JsonValue } from '../components/ui.tsx';
import { useListFilters, useListSort, useTitle } from '../hooks.ts';
import { useApiQuery } from '../query.ts';
import { agentUrl, environmentUrl } from './Estate.tsx';
import { INVENTORY_KINDS, type InventoryItem, type InventoryKind, type InventoryPage as Page, type InventorySort } from '../types.ts';

const PAGE_SIZE = 50;
const KIND_OPTIONS = INVENTORY_KINDS.map((k) => ({ value: k.id, label: k.label }));
const SORTS: readonly InventorySort[] = ['name', 'environment', 'firstSeenAt', 'lastSeenAt'];

/** The kinds whose objects belong to a Power Platform environment (the API's environment filter applies to them). */
const IN_ENVIRONMENT: ReadonlySet<InventoryKind> = new Set(['agents', 'apps', 'flows', 'connectors', 'connections']);

/** "1 agent", "14 agents": the kind's label, singular for one (every label is a plural in -s). */
function countOf(n: number, kind: InventoryKind): string {
  const label = INVENTORY_KINDS.find((k) => k.id === kind)?.label ?? kind;
  const noun = /^(Power|Foundry)/.test(label) ? label : label.toLowerCase();
  return `${n} ${n === 1 ? noun.replace(/s$/, '') : noun}`;
}

/** The name cell: agents link to their page, environments to their view (agents, apps and flows by risk). */
function ItemName({ it, kind }: { it: InventoryItem; kind: InventoryKind }) {
  const name = it.name || 'Unnamed';
  return kind === 'agents' ? (
    <Link to={agentUrl(it.integrationId, it.id)}>{name}</Link>
  ) : kind === 'environments' ? (
    <Link to={environmentUrl(it.integrationId, it.id)}>{name}</Link>
  ) : (
    <span>{name}</span>
  );
}

/** The summary facts' labels of the items, in the order the API gives them (one column each). */
function factLabels(items: InventoryItem[]): string[] {
  const labels: string[] = [];
  for (const it of items) for (const f of it.summary) if (!labels.includes(f.label)) labels.push(f.label);
  return labels;
}

function columnsFor(kind: InventoryKind, labels: string[]): Column<InventoryItem>[] {
  return [
    sortable(
      column<InventoryItem>('Name', (it) => <ItemName it={it} kind={kind} />),
      'name',
    ),
    column<InventoryItem>('Integration', (it) => <IntegrationName id={it.integrationId} />),
    ...(IN_ENVIRONMENT.has(kind)
      ? [
          sortable(
            environmentColumn<InventoryItem>((it) => it),
            'environment',
          ),
        ]
      : []),
    ...labels.map((label) => column<InventoryItem>(label, (it) => it.summary.find((f) => f.label === label)?.value ?? <span className="muted">—</span>)),
    sortable(
      timeColumn<InventoryItem>('First seen', (it) => it.firstSeenAt),
      'firstSeenAt',
    ),
    sortable(
      timeColumn<InventoryItem>('Last seen', (it) => it.lastSeenAt),
      'lastSeenAt',
    ),
    column<InventoryItem>('Details', (it) => <JsonValue value={{ id: it.id, environmentId: it.environmentId, ...it.attributes }} summary="All attributes" />),
  ];
}

/** The inventory table of one page, its columns from the kind and the facts the page's items carry. */
function InventoryTable({
  items,
  kind,
  sort,
  empty,
}: {
  items: InventoryItem[];
  kind: InventoryKind;
  sort: ReturnType<typeof useListSort>['table'];
  empty: string;
}) {
  // Rebuilt when the kind or the facts' labels change, not on every page of the same kind.
  const key = factLabels(items).join('\u0000');
  const columns = useMemo(() => columnsFor(kind, key ? key.split('\u0000') : []), [kind, key]);
  const label = INVENTORY_KINDS.find((k) => k.id === kind)?.label ?? kind;
  return (
    <DataTable label={label} rows={items} columns={columns} sort={sort} rowId={(it) => `${it.integrationId}/${it.id}`} describedBy="h-results" empty={empty} />
  );
}

export function InventoryPage() {
  const filters = useListFilters();
  const kindParam = filters.get('kind', 'agents');
  const kind: InventoryKind = INVENTORY_KINDS.find((k) => k.id === kindParam)?.id ?? 'agents';
  const q = filters.get('q');
  const search = useSearchDraft(q);
  const integrationId = filters.get('integrationId');
  const environmentId = filters.get('environmentId');
  const sort = useListSort(filters, IN_ENVIRONMENT.has(kind) ? SORTS : SORTS.filter((s) => s !== 'environment'), 'name', 'asc');
  const kindLabel = INVENTORY_KINDS.find((k) => k.id === kind)?.label ?? kind;
  useTitle(`Inventory: ${kindLabel}`);

  const page = useApiQuery<Page>(`/inventory/${kind}`, {
    integrationId: integrationId || undefined,
    environmentId: environmentId || undefined,
    q: q || undefined,
    ...sort.query,
    cursor: filters.cursor,
    limit: PAGE_SIZE,
  });
  const total = page.data?.total;
  const named = page.data?.items.find((it) => it.environmentId === environmentId)?.environmentName;

  return (
    <>
      <h1>Inventory</h1>
      <FilterBar label="Inventory filters" onSubmit={() => filters.update({ q: search.draft.trim() })}>
        <SelectFilter
          id="inv-kind"
          label="Kind"
          options={KIND_OPTIONS}
          value={kind}
          onChange={(v) => filters.update({ kind: v, environmentId: '', ...(sort.key === 'environment' ? { sort: '' } : {}) })}
        />
        <IntegrationFilter id="inv-integration" {...filters.bind('integrationId')} />
        <SearchFilter id="inv-q" {...search} placeholder="Name" />
      </FilterBar>
      <FilterNote
        filters={[['Environment', environmentId ? (named ?? environmentId) : '']]}
        clear="Show all environments"
        onClear={() => filters.update({ environmentId: '' })}
      />

      <h2 className="visually-hidden" id="h-results">
        {kindLabel}
      </h2>
      <PagedList
        query={page}
        summary={(n) => `${countOf(total ?? n, kind)}${q ? ` matching "${q}"` : ''}; ${n} on this page.`}
        pager={{ label: 'Inventory pages', ...filters.pager(page.data?.nextCursor) }}
      >
        {(items) => (
          <InventoryTable
            items={items}
            kind={kind}
            sort={sort.table}
            empty={`Nothing found. ${q || integrationId || environmentId ? 'Try fewer filters.' : 'Run a collection on an integration to fill the inventory.'}`}
          />
        )}
      </PagedList>
    </>
  );
}
