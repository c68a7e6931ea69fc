import { lazy, Suspense, useMemo } from 'react';
import { Link } from 'react-router';
import { seg } from '../api.ts';
import { column, DataTable, timeColumn, type Column } from '../components/DataTable.tsx';
import { formatDuration, Loaded, Loading, StatusBadge } from '../components/ui.tsx';
import { ResourceName } from '../components/ListPage.tsx';
import { useTitle } from '../hooks.ts';
import { useApiQuery } from '../query.ts';
import type { ComplianceFramework, ComplianceView, Dashboard } from '../types.ts';
import { complianceSummary } from './Compliance.tsx';

// The charts (and Recharts with them) load with the dashboard, in their own bundle: the other pages do not wait for them.
const charts = () => import('../components/Charts.tsx');
const SeverityTrendChart = lazy(async () => ({ default: (await charts()).SeverityTrendChart }));
const PostureTrendChart = lazy(async () => ({ default: (await charts()).PostureTrendChart }));
const AreaResultsChart = lazy(async () => ({ default: (await charts()).AreaResultsChart }));

type Ranked = Dashboard['riskiestAgents'][number];
type LastCollection = Dashboard['lastCollections'][number];

const RISKIEST: Column<Ranked>[] = [
  column('Agent', (a) => <Link to={`/integrations/${seg(a.integrationId)}/agents/${seg(a.agentId)}`}>{a.name || a.agentId}</Link>),
  column('Risk score', (a) => a.score ?? '—', 'num'),
  column(
    'Open findings',
    (a) =>
      a.openFindings ? (
        <Link
          to={`/findings?resourceId=${encodeURIComponent(a.agentId)}&integrationId=${encodeURIComponent(a.integrationId)}`}
          aria-label={`${a.openFindings} open findings of ${a.name || 'this agent'}`}
        >
          {a.openFindings}
        </Link>
      ) : (
        0
      ),
    'num',
  ),
  column('Who can use it, and why it ranks here', (a) => (
    <>
      {a.reach}
      {a.reasons?.length ? (
        <ul className="small plain">
          {a.reasons.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      ) : null}
    </>
  )),
];

const COLLECTIONS: Column<LastCollection>[] = [
  column('Integration', (c) => <Link to={`/integrations/${seg(c.integrationId)}`}>{c.name}</Link>),
  column('Status', (c) => (c.run ? <StatusBadge status={c.run.status} /> : <span className="muted">never collected</span>)),
  timeColumn('Finished', (c) => c.run?.finishedAt ?? c.run?.startedAt),
  column('Duration', (c) => formatDuration(c.run?.durationMs)),
];

/** A score in percent, or a dash when nothing was judged. */
const pct = (score: number | null) => (score === null ? '—' : `${score}%`);

const FRAMEWORKS: Column<ComplianceFramework>[] = [
  column('Framework', (f) => (
    <Link to={`/compliance?framework=${encodeURIComponent(f.id)}`} title={f.name}>
      {f.shortName}
    </Link>
  )),
  column('Items', (f) => f.items.length, 'num'),
  column('Pass', (f) => complianceSummary(f).passing, 'num'),
  column('Fail', (f) => complianceSummary(f).failing, 'num'),
  column('Not evaluated', (f) => complianceSummary(f).notEvaluated, 'num'),
  column('Not covered', (f) => complianceSummary(f).notCovered, 'num'),
];

/**
 * Per framework and peer baseline, its items by state from the compliance view (`GET /compliance`: passing, failing
 * — a check fails or an alert is open — not evaluated, not covered), each linking to its page of the compliance view.
 */
function FrameworkCompliance() {
  const query = useApiQuery<ComplianceView>('/compliance');
  return (
    <Loaded query={query}>
      {(data) => <DataTable label="Compliance per framework" rows={data.frameworks} columns={FRAMEWORKS} empty="The API lists no framework." />}
    </Loaded>
  );
}

/** The posture score with the counts behind it, and its trend. */
function Posture({ posture }: { posture: Dashboard['posture'] }) {
  return (
    <>
      <p className="score">
        <span className="score-value">{pct(posture.score)}</span>
        <span className="muted"> of judged results passed</span>
      </p>
      <ul className="plain result-counts" aria-label="Latest results">
        <li>
          <span className="badge st-ok">{posture.passed} passed</span>
        </li>
        <li>
          <span className="badge st-bad">{posture.failed} failed</span>
        </li>
        <li>
          <span className="badge st-neutral">{posture.notEvaluated} not evaluated</span>
        </li>
      </ul>
      <p className="small muted">A check never passes what it could not read: not-evaluated results are left out of the score and listed under Coverage.</p>
      <PostureTrendChart trend={posture.trend} />
    </>
  );
}

export function DashboardPage() {
  useTitle('Dashboard');
  const query = useApiQuery<Dashboard>('/dashboard');
  return (
    <>
      <h1>Dashboard</h1>
      <Loaded query={query}>
        {(data) => (
          <Suspense fallback={<Loading label="Drawing the charts…" />}>
            <div className="dash-grid">
              <section aria-labelledby="h-posture" className="card">
                <h2 id="h-posture">Posture score</h2>
                <Posture posture={data.posture} />
              </section>

              <section aria-labelledby="h-trend" className="card">
                <h2 id="h-trend">Open findings by severity over time</h2>
                <SeverityTrendChart points={data.severityOverTime} />
              </section>

              <section aria-labelledby="h-areas" className="card">
                <h2 id="h-areas">Results per area</h2>
                <AreaResultsChart areas={data.areas} />
              </section>

              <section aria-labelledby="h-frameworks" className="card">
                <h2 id="h-frameworks">Compliance per framework</h2>
                <FrameworkCompliance />
                <p className="small muted">
                  Items of each framework and peer baseline; items covered only by detections with no open alert, or by checks with no results yet, are in none
                  of these columns. <Link to="/compliance">The compliance view</Link> shows each item.
                </p>
              </section>

              <section aria-labelledby="h-riskiest" className="card wide">
                <h2 id="h-riskiest">Riskiest agents</h2>
                <DataTable
                  label="Riskiest agents"
                  rows={data.riskiestAgents}
                  columns={RISKIEST}
                  rowId={(a) => `${a.integrationId}/${a.agentId}`}
                  empty="No agent has open findings."
                />
              </section>

              <section aria-labelledby="h-collections" className="card wide">
                <h2 id="h-collections">Last collection per integration</h2>
                <DataTable
                  label="Last collection per integration"
                  rows={data.lastCollections}
                  columns={COLLECTIONS}
                  rowId={(c) => c.integrationId}
                  empty={
                    <>
                      No integrations yet. <Link to="/integrations">Add one</Link> to start monitoring a tenant.
                    </>
                  }
                />
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
          </Suspense>
        )}
      </Loaded>
    </>
  );
}

type Coverage = Dashboard['coverage'];

const COVERAGE: Column<Coverage[number]>[] = [
  column('Check', (c) => (
    <>
      {c.title} <code className="muted">{c.checkId}</code>
    </>
  )),
  column('Not evaluated', (c) => c.notEvaluated, 'num'),
  column('Resource or scope', (c) => (
    <>
      {c.resources.map((r, i) => (
        <span key={`${r.resourceType}/${r.resourceId}`}>
          {i ? ', ' : ''}
          <span className="muted">{r.resourceType}</span> <ResourceName r={{ ...r, integrationId: c.integrationId }} />
        </span>
      ))}
      {c.notEvaluated > c.resources.length ? <span className="muted"> and {c.notEvaluated - c.resources.length} more</span> : null}
    </>
  )),
];

/** Groups the not-evaluated rows by integration and reason, the largest group first. */
function groupCoverage(coverage: Coverage) {
  const groups = new Map<string, { integrationId: string; integrationName: string; reason: string | null; rows: Coverage }>();
  for (const c of coverage) {
    const key = `${c.integrationId}\u0000${c.reason ?? ''}`;
    const g = groups.get(key) ?? { integrationId: c.integrationId, integrationName: c.integrationName, reason: c.reason, rows: [] };
    g.rows.push(c);
    groups.set(key, g);
  }
  return [...groups.values()].sort((a, b) => b.rows.length - a.rows.length || a.integrationName.localeCompare(b.integrationName));
}

/**
 * The not-evaluated results grouped by integration and reason (the gap: which stream of which environment or user
 * could not be read, and the upstream's answer), each group listing the checks it stopped and the resources they
 * could not judge.
 */
function CoverageGroups({ coverage }: { coverage: Coverage }) {
  const ordered = useMemo(() => groupCoverage(coverage), [coverage]);
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
            <DataTable
              label={`Checks not evaluated in ${g.integrationName}: ${(g.reason ?? '').slice(0, 80)}`}
              rows={g.rows}
              columns={COVERAGE}
              rowId={(c) => c.checkId}
            />
          </li>
        ))}
      </ul>
    </>
  );
}
