import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import { column, DataTable, timeColumn, type Column } from '../components/DataTable.tsx';
import { FilterBar, FilterNote, IntegrationFilter, IntegrationName, PagedList, SelectFilter } from '../components/ListPage.tsx';
import { JsonValue } from '../components/ui.tsx';
import { useListFilters, useTitle } from '../hooks.ts';
import { useApiQuery } from '../query.ts';
import { agentUrl, environmentUrl } from './Estate.tsx';
import { INVENTORY_KINDS, type InventoryItem, type InventoryKind, type InventoryPage as Page } from '../types.ts';

const PAGE_SIZE = 50;
const KIND_OPTIONS = INVENTORY_KINDS.map((k) => ({ value: k.id, label: k.label }));

/** A few attributes shown inline; the rest behind "All attributes". */
function attrSummary(a: Record<string, unknown>): string {
  return Object.entries(a)
    .filter(([, v]) => v !== null && v !== undefined && v !== '' && typeof v !== 'object')
    .slice(0, 3)
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join(' · ');
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

/** Environment names by `integrationId/environmentId` (the first 500 environments), for the Environment column. */
function useEnvironmentNames(): Map<string, string | null> {
  const envs = useApiQuery<Page>('/inventory/environments', { limit: 500 });
  return useMemo(() => new Map((envs.data?.items ?? []).map((e) => [`${e.integrationId}/${e.id}`, e.name])), [envs.data]);
}

function columnsFor(kind: InventoryKind, envNames: Map<string, string | null>): Column<InventoryItem>[] {
  return [
    column('Name', (it) => <ItemName it={it} kind={kind} />),
    column('Integration', (it) => <IntegrationName id={it.integrationId} />),
    column('Environment', (it) =>
      it.environmentId ? (
        <Link to={environmentUrl(it.integrationId, it.environmentId)}>{envNames.get(`${it.integrationId}/${it.environmentId}`) ?? 'Unnamed environment'}</Link>
      ) : (
        <span className="muted">—</span>
      ),
    ),
    column('Attributes', (it) => (
      <>
        <span className="small">{attrSummary(it.attributes)}</span>
        {Object.keys(it.attributes).length ? <JsonValue value={it.attributes} summary="All attributes" /> : null}
      </>
    )),
    timeColumn('First seen', (it) => it.firstSeenAt),
    timeColumn('Last seen', (it) => it.lastSeenAt),
  ];
}

export function InventoryPage() {
  const filters = useListFilters();
  const kindParam = filters.get('kind', 'agents');
  const kind: InventoryKind = INVENTORY_KINDS.find((k) => k.id === kindParam)?.id ?? 'agents';
  const q = filters.get('q');
  const integrationId = filters.get('integrationId');
  const environmentId = filters.get('environmentId');
  const kindLabel = INVENTORY_KINDS.find((k) => k.id === kind)?.label ?? kind;
  useTitle(`Inventory: ${kindLabel}`);
  const envNames = useEnvironmentNames();
  const columns = useMemo(() => columnsFor(kind, envNames), [kind, envNames]);

  const [qDraft, setQDraft] = useState(q);
  const [lastQ, setLastQ] = useState(q);
  if (q !== lastQ) {
    // The URL changed under us (back button): follow it.
    setLastQ(q);
    setQDraft(q);
  }

  const page = useApiQuery<Page>(`/inventory/${kind}`, { integrationId, environmentId, q, cursor: filters.cursor, limit: PAGE_SIZE });

  return (
    <>
      <h1>Inventory</h1>
      <FilterBar label="Inventory filters" onSubmit={() => filters.update({ q: qDraft.trim() })}>
        <SelectFilter id="inv-kind" label="Kind" options={KIND_OPTIONS} value={kind} onChange={(v) => filters.update({ kind: v, environmentId: '' })} />
        <IntegrationFilter id="inv-integration" {...filters.bind('integrationId')} />
        <div className="field">
          <label htmlFor="inv-q">Search</label>
          <input id="inv-q" type="search" value={qDraft} onChange={(e) => setQDraft(e.target.value)} placeholder="Name or id" />
        </div>
        <div className="field field-button">
          <button type="submit">Search</button>
        </div>
      </FilterBar>
      <FilterNote
        filters={[['Environment', environmentId ? ([...envNames].find(([k]) => k.endsWith(`/${environmentId}`))?.[1] ?? environmentId) : '']]}
        clear="Show all environments"
        onClear={() => filters.update({ environmentId: '' })}
      />

      <h2 className="visually-hidden" id="h-results">
        {kindLabel}
      </h2>
      <PagedList
        query={page}
        summary={(n) => `${n} ${kindLabel.toLowerCase()} on this page${q ? ` matching "${q}"` : ''}.`}
        pager={{ label: 'Inventory pages', ...filters.pager(page.data?.nextCursor) }}
      >
        {(items) => (
          <DataTable
            label={kindLabel}
            rows={items}
            columns={columns}
            rowId={(it) => `${it.integrationId}/${it.id}`}
            describedBy="h-results"
            empty={`Nothing found. ${q || integrationId || environmentId ? 'Try fewer filters.' : 'Run a collection on an integration to fill the inventory.'}`}
          />
        )}
      </PagedList>
    </>
  );
}
