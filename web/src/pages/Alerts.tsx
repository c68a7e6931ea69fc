import { useState } from 'react';
import { api, ApiError, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ErrorMessage, JsonValue, Loading, Pager, SeverityBadge, StatusBadge, Time } from '../components/ui.tsx';
import { useApi, useTitle, useListFilters } from '../hooks.ts';
import type { Alert, AlertStatus, Integration, Page } from '../types.ts';
import { IntegrationSelect } from './Inventory.tsx';

// Keyed by any status string: the API types an alert's status as a string, and an unknown one offers no action.
const ACTIONS: Partial<Record<string, { to: AlertStatus; label: string }[]>> = {
  new: [
    { to: 'acknowledged', label: 'Acknowledge' },
    { to: 'closed', label: 'Close' },
  ],
  acknowledged: [
    { to: 'closed', label: 'Close' },
    { to: 'new', label: 'Reopen' },
  ],
  closed: [{ to: 'new', label: 'Reopen' }],
};

export function AlertsPage() {
  useTitle('Alerts');
  const { isAdmin } = useAuth();
  const filters = useListFilters(() => setChanges({}));
  const status = filters.get('status');
  const integrationId = filters.get('integrationId');
  const cursor = filters.cursor;
  const [changes, setChanges] = useState<Record<string, Alert>>({});
  const [error, setError] = useState<ApiError | null>(null);
  const [announce, setAnnounce] = useState('');

  const integrations = useApi<Page<Integration>>('/integrations');
  const page = useApi<Page<Alert>>('/alerts', { status, integrationId, cursor, limit: 50 });
  const names = new Map((integrations.data?.items ?? []).map((i) => [i.id, i.name]));

  async function setStatus(a: Alert, to: AlertStatus) {
    setError(null);
    try {
      const next = await api.put<Alert | undefined>(`/alerts/${seg(a.id)}/status`, { status: to });
      setChanges((c) => ({ ...c, [a.id]: next && typeof next === 'object' && 'id' in next ? next : { ...a, status: to } }));
      setAnnounce(`Alert "${a.title}" is now ${to}.`);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'CLIENT', (e as Error).message));
    }
  }

  const items = (page.data?.items ?? []).map((a) => changes[a.id] ?? a).sort((x, y) => y.createdAt.localeCompare(x.createdAt));
  return (
    <>
      <h1>Alerts</h1>
      <form className="filters" role="search" aria-label="Alert filters" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="a-status">Status</label>
          <select id="a-status" value={status} onChange={(e) => filters.update({ status: e.target.value })}>
            <option value="">All statuses</option>
            <option value="new">new</option>
            <option value="acknowledged">acknowledged</option>
            <option value="closed">closed</option>
          </select>
        </div>
        <IntegrationSelect
          id="a-integration"
          value={integrationId}
          onChange={(v) => filters.update({ integrationId: v })}
          integrations={integrations.data?.items ?? []}
        />
      </form>
      <p role="status" className="visually-hidden">
        {announce}
      </p>
      <ErrorMessage error={error ?? page.error} />
      {page.loading && !page.data ? <Loading /> : null}
      {page.data && !items.length ? <p>No alerts{status ? ` with status ${status}` : ''}.</p> : null}
      {items.length ? (
        <ol className="timeline alerts" aria-label="Alerts, newest first">
          {items.map((a) => (
            <li key={a.id} className={`alert-item status-${a.status}`}>
              <div className="alert-head">
                <SeverityBadge severity={a.severity} /> <strong id={`alert-${a.id}`}>{a.title}</strong> <StatusBadge status={a.status} />
              </div>
              <p className="small muted">
                <Time value={a.createdAt} /> · rule <code>{a.ruleId}</code> · {names.get(a.integrationId) ?? a.integrationId}
                {a.windowStart ? (
                  <>
                    {' '}
                    · window <Time value={a.windowStart} /> – <Time value={a.windowEnd} />
                  </>
                ) : null}
              </p>
              {a.detail !== null && a.detail !== undefined ? (
                typeof a.detail === 'string' ? (
                  <p>{a.detail}</p>
                ) : (
                  <JsonValue value={a.detail} summary="Detail" />
                )
              ) : null}
              {isAdmin ? (
                <div className="actions">
                  {ACTIONS[a.status]?.map((act) => (
                    <button key={act.to} type="button" className="secondary" aria-describedby={`alert-${a.id}`} onClick={() => void setStatus(a, act.to)}>
                      {act.label}
                    </button>
                  ))}
                </div>
              ) : null}
            </li>
          ))}
        </ol>
      ) : null}
      <Pager label="Alert pages" {...filters.pager(page.data?.nextCursor)} />
    </>
  );
}
