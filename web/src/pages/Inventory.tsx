import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { seg } from '../api.ts';
import { ErrorMessage, JsonValue, Loading, Pager, TableScroll, Time } from '../components/ui.tsx';
import { useApi, useTitle, useListFilters } from '../hooks.ts';
import { INVENTORY_KINDS, type Integration, type InventoryItem, type InventoryKind, type Page } from '../types.ts';

const PAGE_SIZE = 50;

/** A few attributes shown inline; the rest behind "All attributes". */
function attrSummary(a: Record<string, unknown>): string {
  return Object.entries(a)
    .filter(([, v]) => v !== null && v !== undefined && v !== '' && typeof v !== 'object')
    .slice(0, 3)
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join(' · ');
}

export function IntegrationSelect({
  id,
  value,
  onChange,
  integrations,
}: {
  id: string;
  value: string;
  onChange: (v: string) => void;
  integrations: Integration[];
}) {
  return (
    <div className="field">
      <label htmlFor={id}>Integration</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">All integrations</option>
        {integrations.map((i) => (
          <option key={i.id} value={i.id}>
            {i.name}
          </option>
        ))}
      </select>
    </div>
  );
}

export function InventoryPage() {
  const filters = useListFilters();
  const kindParam = filters.get('kind', 'agents');
  const kind: InventoryKind = (INVENTORY_KINDS.find((k) => k.id === kindParam)?.id ?? 'agents') as InventoryKind;
  const q = filters.get('q');
  const integrationId = filters.get('integrationId');
  const environmentId = filters.get('environmentId');
  const cursor = filters.cursor;
  const kindLabel = INVENTORY_KINDS.find((k) => k.id === kind)?.label ?? kind;
  useTitle(`Inventory: ${kindLabel}`);

  const [qDraft, setQDraft] = useState(q);
  const [lastQ, setLastQ] = useState(q);
  if (q !== lastQ) {
    // The URL changed under us (back button): follow it.
    setLastQ(q);
    setQDraft(q);
  }

  const integrations = useApi<Page<Integration>>('/integrations');
  const page = useApi<Page<InventoryItem>>(`/inventory/${kind}`, { integrationId, environmentId, q, cursor, limit: PAGE_SIZE });
  const names = new Map((integrations.data?.items ?? []).map((i) => [i.id, i.name]));

  function search(e: FormEvent) {
    e.preventDefault();
    filters.update({ q: qDraft.trim() });
  }

  const items = page.data?.items ?? [];
  return (
    <>
      <h1>Inventory</h1>
      <form className="filters" onSubmit={search} role="search" aria-label="Inventory filters">
        <div className="field">
          <label htmlFor="inv-kind">Kind</label>
          <select id="inv-kind" value={kind} onChange={(e) => filters.update({ kind: e.target.value, environmentId: '' })}>
            {INVENTORY_KINDS.map((k) => (
              <option key={k.id} value={k.id}>
                {k.label}
              </option>
            ))}
          </select>
        </div>
        <IntegrationSelect
          id="inv-integration"
          value={integrationId}
          onChange={(v) => filters.update({ integrationId: v })}
          integrations={integrations.data?.items ?? []}
        />
        <div className="field">
          <label htmlFor="inv-q">Search</label>
          <input id="inv-q" type="search" value={qDraft} onChange={(e) => setQDraft(e.target.value)} placeholder="Name or id" />
        </div>
        <div className="field field-button">
          <button type="submit">Search</button>
        </div>
      </form>
      {environmentId ? (
        <p>
          Environment <code>{environmentId}</code>{' '}
          <button type="button" className="link-button" onClick={() => filters.update({ environmentId: '' })}>
            Show all environments
          </button>
        </p>
      ) : null}

      <ErrorMessage error={page.error} />
      <h2 className="visually-hidden" id="h-results">
        {kindLabel}
      </h2>
      <p role="status" className="muted">
        {page.loading ? 'Loading…' : `${items.length} ${kindLabel.toLowerCase()} on this page${q ? ` matching "${q}"` : ''}.`}
      </p>
      {page.loading && !page.data ? <Loading /> : null}
      {items.length ? (
        <TableScroll label={kindLabel}>
          <table aria-describedby="h-results">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Integration</th>
                <th scope="col">Environment</th>
                <th scope="col">Attributes</th>
                <th scope="col">First seen</th>
                <th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {items.map((it) => (
                <tr key={`${it.integrationId}/${it.id}`}>
                  <td>
                    {kind === 'agents' ? (
                      <Link to={`/integrations/${seg(it.integrationId)}/agents/${seg(it.id)}`}>{it.name || it.id}</Link>
                    ) : (
                      <span>{it.name || it.id}</span>
                    )}
                    <div className="small muted">{it.id}</div>
                    {kind === 'environments' ? (
                      <Link
                        className="small"
                        to={`/inventory?kind=agents&integrationId=${encodeURIComponent(it.integrationId)}&environmentId=${encodeURIComponent(it.id)}`}
                      >
                        Agents in {it.name || it.id}
                      </Link>
                    ) : null}
                  </td>
                  <td>{names.get(it.integrationId) ?? it.integrationId}</td>
                  <td>{it.environmentId ? <code className="small">{it.environmentId}</code> : <span className="muted">—</span>}</td>
                  <td>
                    <span className="small">{attrSummary(it.attributes)}</span>
                    {Object.keys(it.attributes).length ? <JsonValue value={it.attributes} summary="All attributes" /> : null}
                  </td>
                  <td>
                    <Time value={it.firstSeenAt} />
                  </td>
                  <td>
                    <Time value={it.lastSeenAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : page.data ? (
        <p>Nothing found. {q || integrationId || environmentId ? 'Try fewer filters.' : 'Run a collection on an integration to fill the inventory.'}</p>
      ) : null}
      <Pager label="Inventory pages" {...filters.pager(page.data?.nextCursor)} />
    </>
  );
}
