import { useMemo } from 'react';
import { Link, useSearchParams } from 'react-router';
import { column, DataTable, NameAndId, severityColumn, type Column } from '../components/DataTable.tsx';
import { FilterBar, SelectFilter } from '../components/ListPage.tsx';
import { Loaded } from '../components/ui.tsx';
import { useTitle } from '../hooks.ts';
import { useApiQuery } from '../query.ts';
import { SEVERITIES, type Check, type CheckList } from '../types.ts';

/** A check's framework controls as `framework: control, control`. */
function Frameworks({ c }: { c: Check }) {
  const entries = Object.entries(c.frameworks).filter(([, controls]) => controls.length);
  if (!entries.length) return <span className="muted">—</span>;
  return (
    <ul className="plain small">
      {entries.map(([f, controls]) => (
        <li key={f}>
          <strong>{f}</strong>: {controls.join(', ')}
        </li>
      ))}
    </ul>
  );
}

const COLUMNS: Column<Check>[] = [
  severityColumn(),
  column('Check', (c) => (
    <>
      <NameAndId name={c.title} id={c.id} />
      <details className="small">
        <summary>Risk and remediation</summary>
        <p>{c.risk}</p>
        <p>
          <strong>Fix: </strong>
          {c.remediation}
        </p>
      </details>
    </>
  )),
  column('Area', (c) => c.area),
  column('Applies to', (c) => c.resourceType),
  column('Frameworks', (c) => <Frameworks c={c} />),
  column('Peers', (c) =>
    c.peers.length ? (
      <ul className="plain small">
        {c.peers.map((p) => (
          <li key={p}>{p}</li>
        ))}
      </ul>
    ) : (
      <span className="muted">—</span>
    ),
  ),
  column('Findings', (c) => (
    <Link to={`/findings?checkId=${encodeURIComponent(c.id)}&status=all`} aria-label={`Findings of ${c.title}`}>
      Findings
    </Link>
  )),
];

/** The words a check is found by: its id, title, area, resource type, risk, frameworks and their controls, and peers. */
const haystack = (c: Check) => [c.id, c.title, c.area, c.resourceType, c.risk, ...Object.entries(c.frameworks).flat(2), ...c.peers].join('\n').toLowerCase();

/** The check catalogue: every check's metadata, searchable, filtered by area and severity (kept in the URL). */
export function ChecksPage() {
  useTitle('Checks');
  const [params, setParams] = useSearchParams();
  const [q, area, severity] = [params.get('q') ?? '', params.get('area') ?? '', params.get('severity') ?? ''];
  const set = (k: string, v: string) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v);
    else p.delete(k);
    setParams(p, { replace: k === 'q' });
  };
  const query = useApiQuery<CheckList>('/checks');
  const items = query.data?.items;
  const areas = useMemo(() => [...new Set((items ?? []).map((c) => c.area))].sort(), [items]);
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = (items ?? []).filter(
    (c) => (!area || c.area === area) && (!severity || c.severity === severity) && words.every((w) => haystack(c).includes(w)),
  );

  return (
    <>
      <h1>Checks</h1>
      <p className="muted">
        Every check Vigil evaluates: what it looks at, why it matters, how to fix it, and the framework controls and peer checks it matches.
      </p>
      <FilterBar label="Check filters">
        <div className="field">
          <label htmlFor="c-q">Search</label>
          <input id="c-q" type="search" value={q} onChange={(e) => set('q', e.target.value)} placeholder="title, id, framework, peer…" />
        </div>
        <SelectFilter id="c-area" label="Area" all="All areas" options={areas} value={area} onChange={(v) => set('area', v)} />
        <SelectFilter id="c-severity" label="Severity" all="All severities" options={SEVERITIES} value={severity} onChange={(v) => set('severity', v)} />
      </FilterBar>
      <Loaded query={query}>
        {(data) => (
          <>
            <p role="status" className="muted">
              {shown.length === data.items.length ? `${data.items.length} checks.` : `${shown.length} of ${data.items.length} checks match.`}
            </p>
            <DataTable label="Checks" rows={shown} columns={COLUMNS} empty="No check matches these filters." />
          </>
        )}
      </Loaded>
    </>
  );
}
