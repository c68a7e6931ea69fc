// One alert (GET /alerts/{id}): what it is about (names, not ids), the evidence (its detail), the audit events behind
// it with their raw records on demand, the open finding on the same agent or resource, its history, and the
// response: acknowledge, close or reopen, and contain the agent where the alert names one.
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ContainAgent } from '../components/ContainAgent.tsx';
import { EventsTable } from '../components/EventsTable.tsx';
import { IntegrationName, ResourceName } from '../components/ListPage.tsx';
import { ErrorMessage, JsonValue, KeyValues, Loaded, SeverityBadge, StatusBadge, Time } from '../components/ui.tsx';
import { useTitle } from '../hooks.ts';
import { useApiMutation, useApiQuery } from '../query.ts';
import type { Alert, AlertDetail, AlertStatus } from '../types.ts';
import { FindingLink } from './Findings.tsx';

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

/** The evidence: a detail's scalar fields as a list, nested values as JSON blocks. */
function Evidence({ detail }: { detail: AlertDetail['detail'] }) {
  if (!detail || !Object.keys(detail).length) return <p className="muted">The detection recorded no detail.</p>;
  return <KeyValues entries={Object.entries(detail).map(([k, v]) => [k, <JsonValue key={k} value={v} summary={`Show ${k}`} />])} />;
}

function Response({ a }: { a: AlertDetail }) {
  const { isAdmin } = useAuth();
  const [announce, setAnnounce] = useState('');
  const setStatus = useApiMutation((to: AlertStatus) => api.put<Alert>(`/alerts/${seg(a.id)}/status`, { status: to }), {
    invalidates: ['/alerts'],
    onSuccess: (_next, to) => setAnnounce(`The alert is now ${to}.`),
  });
  if (!isAdmin) return <p className="muted">Acknowledging, closing and containing need the admin role.</p>;
  return (
    <>
      <div className="actions">
        {ACTIONS[a.status]?.map((act) => (
          <button
            key={act.to}
            type="button"
            className={act.to === 'acknowledged' ? undefined : 'secondary'}
            disabled={setStatus.isPending}
            onClick={() => setStatus.mutate(act.to)}
          >
            {act.label}
          </button>
        ))}
        {a.agentId && a.environmentId ? (
          <ContainAgent
            integrationId={a.integrationId}
            alertId={a.id}
            agentId={a.agentId}
            environmentId={a.environmentId}
            agentLabel={`${a.agentName ?? a.agentId} of alert ${a.title}`}
          />
        ) : null}
      </div>
      <p role="status" className="visually-hidden">
        {announce}
      </p>
      <ErrorMessage error={setStatus.error} />
    </>
  );
}

export function AlertDetailPage() {
  const { id = '' } = useParams();
  const q = useApiQuery<AlertDetail>(`/alerts/${seg(id)}`);
  useTitle(q.data ? `Alert: ${q.data.title}` : 'Alert');
  return (
    <>
      <p className="small">
        <Link to="/alerts">← Alerts</Link>
      </p>
      <Loaded query={q}>
        {(a) => (
          <>
            <h1>{a.title}</h1>
            <KeyValues
              entries={[
                ['Severity', <SeverityBadge key="s" severity={a.severity} />],
                ['Status', <StatusBadge key="st" status={a.status} />],
                ['Rule', <code key="r">{a.ruleId}</code>],
                ['Integration', <IntegrationName key="i" id={a.integrationId} />],
                ['Environment', a.environmentId ? (a.environmentName ?? a.environmentId) : null],
                [
                  'Agent',
                  a.agentId ? (
                    <Link key="ag" to={`/integrations/${seg(a.integrationId)}/agents/${seg(a.agentId)}`}>
                      {a.agentName ?? a.agentId}
                    </Link>
                  ) : null,
                ],
                ['Raised', <Time key="c" value={a.createdAt} />],
                [
                  'Window',
                  a.windowStart ? (
                    <>
                      <Time value={a.windowStart} /> – <Time value={a.windowEnd} />
                    </>
                  ) : null,
                ],
              ]}
            />
            <h2>Response</h2>
            <Response a={a} />
            <h2>Evidence</h2>
            <Evidence detail={a.detail} />
            <h2 id="h-events">Events ({a.events.length})</h2>
            <EventsTable label="Events behind this alert" events={a.events} empty="No audit events are linked to this alert." />
            <h2>Related finding</h2>
            {a.relatedFinding ? (
              <p>
                <SeverityBadge severity={a.relatedFinding.severity} /> <FindingLink f={a.relatedFinding} /> on <ResourceName r={a.relatedFinding} />{' '}
                <StatusBadge status={a.relatedFinding.status} />
              </p>
            ) : (
              <p className="muted">No open finding on the agent or resource this alert names.</p>
            )}
            <h2>History</h2>
            <ol className="timeline" aria-label="History of this alert">
              <li>
                <Time value={a.createdAt} /> raised by rule <code>{a.ruleId}</code>
              </li>
              {a.history.map((h) => (
                <li key={`${h.at}-${h.to}`}>
                  <Time value={h.at} /> {h.from} → <strong>{h.to}</strong>
                  {h.actor ? ` by ${h.actor}` : ''}
                </li>
              ))}
            </ol>
          </>
        )}
      </Loaded>
    </>
  );
}
