import { Link } from 'react-router';
import { seg } from '../api.ts';
import { SeverityChart } from '../components/SeverityChart.tsx';
import { ErrorMessage, formatDuration, Loading, StatusBadge, TableScroll, Time } from '../components/ui.tsx';
import { useApi, useTitle } from '../hooks.ts';
import type { Dashboard } from '../types.ts';

export function DashboardPage() {
  useTitle('Dashboard');
  const { data, error, loading } = useApi<Dashboard>('/dashboard');
  return (
    <>
      <h1>Dashboard</h1>
      <ErrorMessage error={error} />
      {loading && !data ? <Loading /> : null}
      {data ? (
        <div className="dash-grid">
          <section aria-labelledby="h-trend" className="card wide">
            <h2 id="h-trend">Open findings by severity over time</h2>
            <SeverityChart points={data.severityOverTime} />
          </section>

          <section aria-labelledby="h-riskiest" className="card wide">
            <h2 id="h-riskiest">Riskiest agents</h2>
            {data.riskiestAgents.length ? (
              <TableScroll label="Riskiest agents">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Agent</th>
                      <th scope="col" className="num">
                        Risk score
                      </th>
                      <th scope="col" className="num">
                        Open findings
                      </th>
                      <th scope="col">Who can use it, and why it ranks here</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.riskiestAgents.map((a) => (
                      <tr key={`${a.integrationId}/${a.agentId}`}>
                        <td>
                          <Link to={`/integrations/${seg(a.integrationId)}/agents/${seg(a.agentId)}`}>{a.name || a.agentId}</Link>
                        </td>
                        <td className="num">{a.score ?? '—'}</td>
                        <td className="num">{a.openFindings}</td>
                        <td>
                          {a.reach}
                          {a.reasons?.length ? (
                            <ul className="small plain">
                              {a.reasons.map((r) => (
                                <li key={r}>{r}</li>
                              ))}
                            </ul>
                          ) : null}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            ) : (
              <p className="muted">No agent has open findings.</p>
            )}
          </section>

          <section aria-labelledby="h-collections" className="card wide">
            <h2 id="h-collections">Last collection per integration</h2>
            {data.lastCollections.length ? (
              <TableScroll label="Last collection per integration">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Integration</th>
                      <th scope="col">Status</th>
                      <th scope="col">Finished</th>
                      <th scope="col">Duration</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.lastCollections.map((c) => (
                      <tr key={c.integrationId}>
                        <td>
                          <Link to={`/integrations/${seg(c.integrationId)}`}>{c.name}</Link>
                        </td>
                        <td>{c.run ? <StatusBadge status={c.run.status} /> : <span className="muted">never collected</span>}</td>
                        <td>
                          <Time value={c.run?.finishedAt ?? c.run?.startedAt} />
                        </td>
                        <td>{formatDuration(c.run?.durationMs)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            ) : (
              <p>
                No integrations yet. <Link to="/integrations">Add one</Link> to start monitoring a tenant.
              </p>
            )}
          </section>

          <section aria-labelledby="h-coverage" className="card wide">
            <h2 id="h-coverage">Coverage: what was not evaluated, and why</h2>
            {data.coverage.length ? (
              <CoverageGroups coverage={data.coverage} />
            ) : (
              <p className="muted">Every check was evaluated on every resource in the last collections.</p>
            )}
          </section>
        </div>
      ) : null}
    </>
  );
}

type Coverage = Dashboard['coverage'];

/**
 * The not-evaluated results grouped by integration and reason (the gap: which stream of which environment or user
 * could not be read, and the upstream's answer), each group listing the checks it stopped and the resources they
 * could not judge.
 */
function CoverageGroups({ coverage }: { coverage: Coverage }) {
  const groups = new Map<string, { integrationId: string; integrationName: string; reason: string | null; rows: Coverage }>();
  for (const c of coverage) {
    const key = `${c.integrationId}\u0000${c.reason ?? ''}`;
    const g = groups.get(key) ?? { integrationId: c.integrationId, integrationName: c.integrationName, reason: c.reason, rows: [] };
    g.rows.push(c);
    groups.set(key, g);
  }
  const ordered = [...groups.values()].sort((a, b) => b.rows.length - a.rows.length || a.integrationName.localeCompare(b.integrationName));
  const total = coverage.reduce((n, c) => n + c.notEvaluated, 0);
  const checks = new Set(coverage.map((c) => c.checkId)).size;
  return (
    <>
      <p>
        {total} result{total === 1 ? '' : 's'} of {checks} check{checks === 1 ? '' : 's'} could not be evaluated, for {ordered.length} reason
        {ordered.length === 1 ? '' : 's'}. A check never passes what it could not read.
      </p>
      <ul className="plain coverage-groups" aria-label="Not evaluated, by reason">
        {ordered.map((g) => (
          <li key={`${g.integrationId}/${g.reason ?? ''}`} className="coverage-group">
            <h3>
              <Link to={`/integrations/${seg(g.integrationId)}`}>{g.integrationName}</Link>
            </h3>
            <p className="coverage-reason">{g.reason ?? <span className="muted">No reason given.</span>}</p>
            <TableScroll label={`Checks not evaluated in ${g.integrationName}: ${(g.reason ?? '').slice(0, 80)}`}>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Check</th>
                    <th scope="col" className="num">
                      Not evaluated
                    </th>
                    <th scope="col">Resource or scope</th>
                  </tr>
                </thead>
                <tbody>
                  {g.rows.map((c) => (
                    <tr key={c.checkId}>
                      <td>
                        {c.title} <code className="muted">{c.checkId}</code>
                      </td>
                      <td className="num">{c.notEvaluated}</td>
                      <td>
                        {c.resources.map((r, i) => (
                          <span key={`${r.resourceType}/${r.resourceId}`}>
                            {i ? ', ' : ''}
                            <span className="muted">{r.resourceType}</span> {r.resourceName || r.resourceId}
                          </span>
                        ))}
                        {c.notEvaluated > c.resources.length ? <span className="muted"> and {c.notEvaluated - c.resources.length} more</span> : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          </li>
        ))}
      </ul>
    </>
  );
}
