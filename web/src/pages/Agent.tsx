import { Link, useParams } from 'react-router';
import { seg } from '../api.ts';
import { ErrorMessage, JsonValue, KeyValues, Loading, SeverityBadge, StatusBadge, TableScroll, Time } from '../components/ui.tsx';
import { useApi, useTitle } from '../hooks.ts';
import type { AgentDetail } from '../types.ts';

// Dataverse `bot` option sets (learn.microsoft.com/power-apps/developer/data-platform/reference/entities/bot).
const AUTH_MODE: Record<number, string> = {
  0: 'Unspecified',
  1: 'No authentication',
  2: 'Authenticate with Microsoft (integrated)',
  3: 'Authenticate manually (custom Microsoft Entra ID)',
  4: 'Authenticate manually (generic OAuth 2)',
};
const AUTH_TRIGGER: Record<number, string> = { 0: 'As needed', 1: 'Always (sign-in required)' };
const ACCESS_POLICY: Record<number, string> = {
  0: 'Any user who can reach a channel',
  1: 'Agent readers only (shared users)',
  2: 'Members of security groups',
  3: 'Any user of any Microsoft Entra tenant (multitenant)',
};

function option(v: number | string | null | undefined, labels: Record<number, string>) {
  if (v === null || v === undefined) return <span className="muted">not set</span>;
  if (typeof v === 'number') return labels[v] ? `${labels[v]} (${v})` : String(v);
  return v;
}

export function AgentPage() {
  const { integrationId = '', agentId = '' } = useParams();
  const { data, error, loading } = useApi<AgentDetail>(`/integrations/${seg(integrationId)}/agents/${seg(agentId)}`);
  useTitle(data ? `Agent ${data.agent.name ?? data.agent.id}` : 'Agent');
  const a = data?.agent;
  const noAuth = a && (a.authenticationMode === 1 || (typeof a.authenticationMode === 'string' && /^none$/i.test(a.authenticationMode)));

  return (
    <>
      <p className="crumbs">
        <Link to="/inventory?kind=agents">Agents</Link> ›
      </p>
      <h1>{a ? (a.name ?? a.id) : 'Agent'}</h1>
      <ErrorMessage error={error} />
      {loading && !data ? <Loading /> : null}
      {data && a ? (
        <div className="dash-grid">
          <section aria-labelledby="h-config" className="card">
            <h2 id="h-config">Configuration</h2>
            <KeyValues
              entries={[
                ['Agent ID', <code key="i">{a.id}</code>],
                ['Schema name', a.schemaName],
                [
                  'Environment',
                  data.environment ? (
                    <Link
                      key="e"
                      to={`/inventory?kind=agents&integrationId=${encodeURIComponent(integrationId)}&environmentId=${encodeURIComponent(data.environment.id)}`}
                    >
                      {data.environment.name ?? data.environment.id}
                    </Link>
                  ) : (
                    a.environmentId
                  ),
                ],
                [
                  'Owner',
                  data.owner ? (
                    (data.owner.name ?? data.owner.id)
                  ) : (
                    <span key="o" className="muted">
                      unknown
                    </span>
                  ),
                ],
                [
                  'State',
                  a.stateCode === null
                    ? null
                    : `${a.stateCode === 0 ? 'Active' : a.stateCode === 1 ? 'Inactive' : a.stateCode} (status ${a.statusCode ?? '—'})`,
                ],
                ['Published', <Time key="p" value={a.publishedOn} />],
                ['Modified', <Time key="m" value={a.modifiedOn} />],
                ['Created', <Time key="c" value={a.createdOn} />],
              ]}
            />
          </section>

          <section aria-labelledby="h-auth" className="card">
            <h2 id="h-auth">Authentication</h2>
            <KeyValues
              entries={[
                ['Authentication mode', option(a.authenticationMode, AUTH_MODE)],
                ['Sign-in trigger', option(a.authenticationTrigger, AUTH_TRIGGER)],
              ]}
            />
            {noAuth ? (
              <p className="text-bad">
                <strong>Anyone with the link or a channel can chat with this agent without signing in.</strong>
              </p>
            ) : null}
            <h2 id="h-sharing" className="mt">
              Sharing and access control
            </h2>
            <KeyValues entries={[['Access control policy', option(a.accessControlPolicy, ACCESS_POLICY)]]} />
          </section>

          <section aria-labelledby="h-settings" className="card wide">
            <h2 id="h-settings">Settings and channels</h2>
            {data.settings ? <JsonValue value={data.settings} summary="Show settings" /> : <p className="muted">No settings collected.</p>}
            {a.raw ? <JsonValue value={a.raw} summary="Show the raw Dataverse record" /> : null}
          </section>

          <section aria-labelledby="h-components" className="card wide">
            <h2 id="h-components">Components ({data.components.length})</h2>
            {data.components.length ? (
              <TableScroll label="Components">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Attributes</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.components.map((c) => (
                      <tr key={c.id}>
                        <td>
                          {c.name ?? c.id}
                          <div className="small muted">{c.id}</div>
                        </td>
                        <td>
                          <JsonValue value={c.attributes} summary="Attributes" />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            ) : (
              <p className="muted">No components (topics, tools, knowledge) collected.</p>
            )}
          </section>

          <section aria-labelledby="h-agent-findings" className="card wide">
            <h2 id="h-agent-findings">Findings ({data.findings.length})</h2>
            {data.findings.length ? (
              <TableScroll label="Findings of this agent">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Severity</th>
                      <th scope="col">Finding</th>
                      <th scope="col">Status</th>
                      <th scope="col">Last seen</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.findings.map((f) => (
                      <tr key={f.id}>
                        <td>
                          <SeverityBadge severity={f.severity} />
                        </td>
                        <td>
                          <Link to={`/findings/${seg(f.id)}`}>{f.title ?? f.checkId}</Link>
                        </td>
                        <td>
                          <StatusBadge status={f.status} />
                        </td>
                        <td>
                          <Time value={f.lastSeenAt} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            ) : (
              <p className="muted">No findings on this agent.</p>
            )}
          </section>

          <section aria-labelledby="h-events" className="card wide">
            <h2 id="h-events">Audit events ({data.events.length})</h2>
            {data.events.length ? (
              <TableScroll label="Audit events of this agent">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Time</th>
                      <th scope="col">Operation</th>
                      <th scope="col">User</th>
                      <th scope="col">Client IP</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.events.map((e) => (
                      <tr key={e.id}>
                        <td>
                          <Time value={e.creationTime} />
                        </td>
                        <td>{e.operation ?? '—'}</td>
                        <td>{e.userId ?? '—'}</td>
                        <td>{e.clientIp ?? '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            ) : (
              <p className="muted">No audit events for this agent.</p>
            )}
          </section>
        </div>
      ) : null}
    </>
  );
}
