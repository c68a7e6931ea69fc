import { useState } from 'react';
import { api, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ContainAgent } from '../components/ContainAgent.tsx';
import { FilterBar, IntegrationFilter, IntegrationName, PagedList, SelectFilter } from '../components/ListPage.tsx';
import { ErrorMessage, JsonValue, SeverityBadge, StatusBadge, Time } from '../components/ui.tsx';
import { useListFilters, useTitle } from '../hooks.ts';
import { apiScope, useApiMutation, useApiQuery } from '../query.ts';
import type { Alert, AlertPage, AlertStatus } from '../types.ts';

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

const STATUSES = ['new', 'acknowledged', 'closed'] as const;

/** The agent an alert of runtime protection (rule `protection_*`) is about, from its detail; null for other alerts. */
function agentOf(a: Alert): { agentId: string; environmentId: string | null; agentName: string | null } | null {
  if (!a.ruleId.startsWith('protection_') || !a.detail || typeof a.detail !== 'object') return null;
  const d = a.detail as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
  const agentId = str(d.agentId) ?? str(d.botId);
  return agentId ? { agentId, environmentId: str(d.environmentId), agentName: str(d.agentName) } : null;
}

export function AlertsPage() {
  useTitle('Alerts');
  const { isAdmin } = useAuth();
  const filters = useListFilters();
  const status = filters.get('status');
  const [announce, setAnnounce] = useState('');
  const page = useApiQuery<AlertPage>('/alerts', { status, integrationId: filters.get('integrationId'), cursor: filters.cursor, limit: 50 });

  // The changed alert stays where it is on this page, with its new status (the list is not fetched again, so an
  // alert acknowledged under the filter "new" does not vanish under the pointer).
  const setStatus = useApiMutation(({ a, to }: { a: Alert; to: AlertStatus }) => api.put<Alert>(`/alerts/${seg(a.id)}/status`, { status: to }), {
    update: (next, _vars, client) =>
      client.setQueriesData<AlertPage>({ queryKey: apiScope('/alerts') }, (p) => p && { ...p, items: p.items.map((x) => (x.id === next.id ? next : x)) }),
    onSuccess: (_next, { a, to }) => setAnnounce(`Alert "${a.title}" is now ${to}.`),
  });

  return (
    <>
      <h1>Alerts</h1>
      <FilterBar label="Alert filters">
        <SelectFilter id="a-status" label="Status" all="All statuses" options={STATUSES} {...filters.bind('status')} />
        <IntegrationFilter id="a-integration" {...filters.bind('integrationId')} />
      </FilterBar>
      <p role="status" className="visually-hidden">
        {announce}
      </p>
      <ErrorMessage error={setStatus.error} />
      <PagedList query={page} pager={{ label: 'Alert pages', ...filters.pager(page.data?.nextCursor) }}>
        {(items) =>
          items.length ? (
            <ol className="timeline alerts" aria-label="Alerts, newest first">
              {[...items]
                .sort((x, y) => y.createdAt.localeCompare(x.createdAt))
                .map((a) => (
                  <li key={a.id} className={`alert-item status-${a.status}`}>
                    <div className="alert-head">
                      <SeverityBadge severity={a.severity} /> <strong id={`alert-${a.id}`}>{a.title}</strong> <StatusBadge status={a.status} />
                    </div>
                    <p className="small muted">
                      <Time value={a.createdAt} /> · rule <code>{a.ruleId}</code> · <IntegrationName id={a.integrationId} />
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
                        {agentOf(a) ? (
                          <ContainAgent
                            integrationId={a.integrationId}
                            alertId={a.id}
                            agentId={agentOf(a)!.agentId}
                            environmentId={agentOf(a)!.environmentId}
                            agentLabel={`${agentOf(a)!.agentName ?? agentOf(a)!.agentId} of alert ${a.title}`}
                          />
                        ) : null}
                        {ACTIONS[a.status]?.map((act) => (
                          <button
                            key={act.to}
                            type="button"
                            className="secondary"
                            aria-describedby={`alert-${a.id}`}
                            onClick={() => setStatus.mutate({ a, to: act.to })}
                          >
                            {act.label}
                          </button>
                        ))}
                      </div>
                    ) : null}
                  </li>
                ))}
            </ol>
          ) : (
            <p>No alerts{status ? ` with status ${status}` : ''}.</p>
          )
        }
      </PagedList>
    </>
  );
}
