import { Link, useSearchParams } from 'react-router';
import { column, DataTable, NameAndId, type Column } from '../components/DataTable.tsx';
import { FilterBar, IntegrationFilter, SelectFilter } from '../components/ListPage.tsx';
import { Loaded } from '../components/ui.tsx';
import { useTitle } from '../hooks.ts';
import { useApiQuery } from '../query.ts';
import type { ComplianceFramework, ComplianceItem, ComplianceView } from '../types.ts';

type State = ComplianceItem['state'];

/** Each state of an item (the API's `state`, worst first) with its words and badge tone. */
const STATES: { value: State; label: string; tone: string }[] = [
  { value: 'fail', label: 'failing', tone: 'bad' },
  { value: 'not_evaluated', label: 'not evaluated', tone: 'warn' },
  { value: 'pass', label: 'passing', tone: 'ok' },
  { value: 'monitored', label: 'monitored', tone: 'info' },
  { value: 'no_results', label: 'no results yet', tone: 'neutral' },
  { value: 'not_covered', label: 'not covered', tone: 'muted' },
];

/** An item's state as a badge. */
function ComplianceStateBadge({ state }: { state: State }) {
  const s = STATES.find((x) => x.value === state)!;
  return <span className={`badge st-${s.tone}`}>{s.label}</span>;
}

/** Where a cover leads: a check to its entry in the catalogue, a detection to its alerts. */
const coverHref = (c: ComplianceItem['covers'][number]) =>
  c.kind === 'check' ? `/checks?q=${encodeURIComponent(c.id)}` : `/alerts?ruleId=${encodeURIComponent(c.id)}`;

/** The checks and detections covering an item, or why nothing does. */
function Covers({ item }: { item: ComplianceItem }) {
  if (!item.covers.length) return <span className="muted">{item.notCoveredReason ?? 'Not covered; no reason recorded.'}</span>;
  return (
    <ul className="plain small">
      {item.covers.map((c) => (
        <li key={`${c.kind}/${c.id}`}>
          {c.kind}{' '}
          <Link to={coverHref(c)} title={c.title}>
            {c.id}
          </Link>
          {c.note ? <span className="muted"> {c.note}</span> : null}
        </li>
      ))}
    </ul>
  );
}

const COLUMNS: Column<ComplianceItem>[] = [
  column('Item', (i) => <NameAndId name={i.name} id={i.id} />),
  column('State', (i) => <ComplianceStateBadge state={i.state} />),
  column('Covered by, or why not', (i) => <Covers item={i} />),
  column('Passed', (i) => i.pass, 'num'),
  column('Failed', (i) => i.fail, 'num'),
  column('Not evaluated', (i) => i.notEvaluated, 'num'),
  column('Open alerts', (i) => i.openAlerts, 'num'),
];

/** The counts of a framework's items: covered or not, and per state (items with open alerts apart). */
export function complianceSummary(fw: ComplianceFramework) {
  const n = (s: State) => fw.items.filter((i) => i.state === s).length;
  return {
    items: fw.items.length,
    covered: fw.covered,
    notCovered: fw.items.length - fw.covered,
    passing: n('pass'),
    failing: n('fail'),
    notEvaluated: n('not_evaluated'),
    withOpenAlerts: fw.items.filter((i) => i.openAlerts > 0).length,
  };
}

/** A framework's summary as a list of counts. */
function Summary({ fw }: { fw: ComplianceFramework }) {
  const s = complianceSummary(fw);
  return (
    <ul className="plain result-counts" aria-label={`Summary of ${fw.name}`}>
      <li>
        <span className="badge st-info">
          {s.covered} of {s.items} covered
        </span>
      </li>
      <li>
        <span className="badge st-muted">{s.notCovered} not covered</span>
      </li>
      <li>
        <span className="badge st-ok">{s.passing} passing</span>
      </li>
      <li>
        <span className="badge st-bad">{s.failing} failing</span>
      </li>
      <li>
        <span className="badge st-warn">{s.notEvaluated} not evaluated</span>
      </li>
      <li>
        <span className="badge st-bad">{s.withOpenAlerts} with open alerts</span>
      </li>
    </ul>
  );
}

/** A framework's source: its address as a link (long addresses would widen a narrow page), then any words after it. */
function Source({ source }: { source: string }) {
  const [url = '', ...rest] = source.split(' ');
  if (!/^https:\/\//.test(url)) return <>Source: {source}</>;
  return (
    <>
      <a href={url}>Source</a>
      {rest.length ? ` ${rest.join(' ')}` : ''}
    </>
  );
}

/**
 * The compliance view (`GET /compliance`): per framework or peer baseline, picked from those the API lists, a summary
 * and a table of its items with their state, what covers them (links to the check catalogue and to the alerts of a
 * detection) and the counts behind the state. The framework, integration and state filters are kept in the URL.
 */
export function CompliancePage() {
  useTitle('Compliance');
  const [params, setParams] = useSearchParams();
  const [framework, integrationId, state] = [params.get('framework') ?? '', params.get('integrationId') ?? '', params.get('state') ?? ''];
  const set = (k: string, v: string) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v);
    else p.delete(k);
    setParams(p);
  };
  const query = useApiQuery<ComplianceView>('/compliance', { integrationId: integrationId || undefined });
  const frameworks = query.data?.frameworks ?? [];
  const fw = frameworks.find((f) => f.id === framework) ?? frameworks[0];

  return (
    <>
      <h1>Compliance</h1>
      <p className="muted">
        Each framework and peer baseline Vigil maps to: the checks and detections covering each item, its state from the latest results and open alerts, and why
        an item is not covered. What a check could not read is not evaluated, never passing.
      </p>
      <FilterBar label="Compliance filters">
        <SelectFilter
          id="co-framework"
          label="Framework"
          options={frameworks.map((f) => ({ value: f.id, label: f.name }))}
          value={fw?.id ?? ''}
          onChange={(v) => set('framework', v)}
        />
        <IntegrationFilter id="co-integration" value={integrationId} onChange={(v) => set('integrationId', v)} />
        <SelectFilter id="co-state" label="State" all="All states" options={STATES} value={state} onChange={(v) => set('state', v)} />
      </FilterBar>
      <Loaded query={query}>
        {() =>
          fw ? (
            <section aria-labelledby="h-framework">
              <h2 id="h-framework">{fw.name}</h2>
              <p className="small muted">
                {fw.kind === 'peer' ? 'Peer baseline' : 'Framework'}
                {fw.version ? `, version ${fw.version}` : ''}. <Source source={fw.source} />
              </p>
              <Summary fw={fw} />
              <DataTable
                label={`Items of ${fw.name}`}
                rows={fw.items.filter((i) => !state || i.state === state)}
                columns={COLUMNS}
                empty="No item is in this state."
              />
            </section>
          ) : (
            <p className="muted">The API lists no framework.</p>
          )
        }
      </Loaded>
    </>
  );
}
