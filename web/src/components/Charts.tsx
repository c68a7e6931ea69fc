// The dashboard's charts, drawn by Recharts (recharts.github.io/en-US/api: ResponsiveContainer, BarChart, LineChart).
// Each chart is one image for assistive technology (role="img" with a sentence naming what it shows, the chart's own
// keyboard layer off), and offers the same numbers as a table. Recharts styles its elements through the DOM's style
// object, not style attributes in markup, so the portal's CSP (style-src 'self') holds.
import { useEffect, useRef, type ReactNode } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { SEVERITIES, type Dashboard, type ProtectionSummary } from '../types.ts';

type SeverityPoint = Dashboard['severityOverTime'][number];
type DecisionPoint = ProtectionSummary['series'][number];
type TrendPoint = Dashboard['posture']['trend'][number];
type AreaRow = Dashboard['areas'][number];

/** The severity colours of styles.css (`--sev-*`): SVG fills take colours, not custom properties. */
const SEVERITY_COLOUR: Record<(typeof SEVERITIES)[number], string> = {
  critical: '#7a0a1f',
  high: '#c9361c',
  medium: '#b06d00',
  low: '#2f6fbd',
  info: '#6e7781',
};
/** Passed, failed and not evaluated (styles.css `--ok`, `--bad`, `--muted`). */
const RESULT_COLOUR = { passed: '#116329', failed: '#a40e26', notEvaluated: '#8c959f' };
const AXIS = { fontSize: 12, fill: '#57606a' };
/** Legend and tooltip items in the order the series are drawn (Recharts sorts them by name unless told). */
const DRAWN_ORDER = null;
/** Tooltip items by severity, most severe first (items of other charts keep their order). */
const bySeverity = (item: { dataKey?: unknown }) => SEVERITIES.indexOf(item.dataKey as (typeof SEVERITIES)[number]);

/** A chart as one image named `summary`, and its numbers as a table behind "Show the numbers as a table". */
function ChartFigure({ summary, height, chart, table }: { summary: string; height: number; chart: ReactNode; table: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => untabbableLayers(box.current), []);
  return (
    <figure className="chart">
      <div role="img" aria-label={summary} className="chart-box" ref={box}>
        <ResponsiveContainer width="100%" height={height}>
          {chart}
        </ResponsiveContainer>
      </div>
      <details>
        <summary>Show the numbers as a table</summary>
        {table}
      </details>
    </figure>
  );
}

/**
 * Keeps Recharts' layers out of the Tab order. Each layer is a `<g>` React renders a portal into, and React listens
 * for focus events on a portal's container, which makes Chromium treat the `<g>` as focusable: Tab stopped on an
 * invisible, empty group in every chart. The chart is one image (its numbers are in the table), so the layers get
 * `tabindex="-1"`, also those drawn later (the chart is drawn once its container has a size). Returns the clean-up.
 */
function untabbableLayers(box: HTMLElement | null): (() => void) | undefined {
  if (!box) return undefined;
  const untab = () => {
    for (const g of box.querySelectorAll('g[class^="recharts-zIndex-layer"]:not([tabindex])')) g.setAttribute('tabindex', '-1');
  };
  untab();
  const observer = new MutationObserver(untab);
  observer.observe(box, { childList: true, subtree: true });
  return () => observer.disconnect();
}

/** A table of `rows` under `headers`, in a scrollable region named `label`; the first cell of each row heads it. */
function NumbersTable({ label, headers, rows }: { label: string; headers: string[]; rows: (string | number)[][] }) {
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      <table>
        <thead>
          <tr>
            {headers.map((h, i) => (
              <th key={h} scope="col" className={i ? 'num' : undefined}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map(([head, ...cells]) => (
            <tr key={String(head)}>
              <th scope="row">{head}</th>
              {cells.map((c, i) => (
                <td key={headers[i + 1]} className="num">
                  {c}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** `MM-DD` of a `YYYY-MM-DD` date, for axis ticks. */
const shortDate = (d: string) => d.slice(5);

/** Open findings per day, stacked by severity (most severe at the bottom). */
export function SeverityTrendChart({ points }: { points: SeverityPoint[] }) {
  const last = points.at(-1);
  if (!last || points.every((p) => SEVERITIES.every((s) => !p[s])))
    return <p className="muted">No findings recorded yet: run a collection to evaluate the checks.</p>;
  const total = SEVERITIES.reduce((n, s) => n + last[s], 0);
  const summary = `Open findings by severity per day, ${points[0]!.date} to ${last.date}. On ${last.date}: ${total} open (${SEVERITIES.map((s) => `${last[s]} ${s}`).join(', ')}).`;
  return (
    <ChartFigure
      summary={summary}
      height={260}
      chart={
        <BarChart data={points} accessibilityLayer={false} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
          <CartesianGrid stroke="#e1e4e8" vertical={false} />
          <XAxis dataKey="date" tickFormatter={shortDate} tick={AXIS} minTickGap={12} />
          <YAxis allowDecimals={false} tick={AXIS} />
          <Tooltip itemSorter={bySeverity} />
          <Legend itemSorter={DRAWN_ORDER} />
          {SEVERITIES.map((s) => (
            <Bar key={s} dataKey={s} stackId="open" fill={SEVERITY_COLOUR[s]} isAnimationActive={false} />
          ))}
        </BarChart>
      }
      table={
        <NumbersTable
          label="Open findings by severity per day"
          headers={['Date', ...SEVERITIES]}
          rows={points.map((p) => [p.date, ...SEVERITIES.map((s) => p[s])])}
        />
      }
    />
  );
}

/** The posture score per day (a gap on days before the first evaluation). */
export function PostureTrendChart({ trend }: { trend: TrendPoint[] }) {
  const scored = trend.filter((t) => t.score !== null);
  if (!scored.length) return <p className="muted">No evaluation recorded yet: the trend starts with the first collection.</p>;
  const first = scored[0]!;
  const last = scored.at(-1)!;
  const summary = `Posture score per day: ${first.score}% on ${first.date}, ${last.score}% on ${last.date}.`;
  return (
    <ChartFigure
      summary={summary}
      height={180}
      chart={
        <LineChart data={trend} accessibilityLayer={false} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
          <CartesianGrid stroke="#e1e4e8" vertical={false} />
          <XAxis dataKey="date" tickFormatter={shortDate} tick={AXIS} minTickGap={12} />
          <YAxis domain={[0, 100]} tick={AXIS} unit="%" />
          <Tooltip formatter={(v) => [`${String(v)}%`, 'score']} />
          <Line type="monotone" dataKey="score" stroke="#0b5cad" strokeWidth={2} dot={scored.length < 3} connectNulls={false} isAnimationActive={false} />
        </LineChart>
      }
      table={
        <NumbersTable
          label="Posture score per day"
          headers={['Date', 'Score (%)', 'Passed', 'Failed', 'Not evaluated']}
          rows={scored.map((t) => [t.date, t.score ?? '—', t.counts?.passed ?? 0, t.counts?.failed ?? 0, t.counts?.notEvaluated ?? 0])}
        />
      }
    />
  );
}

/** Passed, failed and not-evaluated results per check area, as horizontal stacked bars. */
export function AreaResultsChart({ areas }: { areas: AreaRow[] }) {
  const shown = areas.filter((a) => a.passed + a.failed + a.notEvaluated > 0);
  if (!shown.length) return <p className="muted">No check has results yet.</p>;
  const summary = `Results per check area: ${shown.map((a) => `${a.area} ${a.passed} passed, ${a.failed} failed, ${a.notEvaluated} not evaluated`).join('; ')}.`;
  return (
    <ChartFigure
      summary={summary}
      height={Math.max(160, 36 * shown.length + 60)}
      chart={
        <BarChart data={shown} layout="vertical" accessibilityLayer={false} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid stroke="#e1e4e8" horizontal={false} />
          <XAxis type="number" allowDecimals={false} tick={AXIS} />
          <YAxis type="category" dataKey="area" width={110} tick={AXIS} interval={0} />
          <Tooltip itemSorter={(item) => ['passed', 'failed', 'notEvaluated'].indexOf(String(item.dataKey))} />
          <Legend itemSorter={DRAWN_ORDER} />
          <Bar dataKey="passed" name="passed" stackId="r" fill={RESULT_COLOUR.passed} isAnimationActive={false} />
          <Bar dataKey="failed" name="failed" stackId="r" fill={RESULT_COLOUR.failed} isAnimationActive={false} />
          <Bar dataKey="notEvaluated" name="not evaluated" stackId="r" fill={RESULT_COLOUR.notEvaluated} isAnimationActive={false} />
        </BarChart>
      }
      table={
        <NumbersTable
          label="Results per check area"
          headers={['Area', 'Checks', 'Score (%)', 'Passed', 'Failed', 'Not evaluated']}
          rows={areas.map((a) => [a.area, a.checks, a.score ?? '—', a.passed, a.failed, a.notEvaluated])}
        />
      }
    />
  );
}

/** The disjoint outcomes of runtime protection's steps, in drawing order (bottom first), with their labels and colours. */
const DECISION_SERIES = [
  { key: 'blocked', label: 'blocked', colour: RESULT_COLOUR.failed },
  { key: 'wouldBlock', label: 'would block', colour: SEVERITY_COLOUR.medium },
  { key: 'timedOut', label: 'timed out', colour: RESULT_COLOUR.notEvaluated },
  { key: 'allowed', label: 'allowed', colour: RESULT_COLOUR.passed },
] as const;

/** `MM-DD HH:00` of a `YYYY-MM-DDTHH` hour, `MM-DD` of a `YYYY-MM-DD` day. */
const shortPeriod = (p: string) => (p.length > 10 ? `${p.slice(5, 10)} ${p.slice(11, 13)}:00` : p.slice(5));

/** Runtime protection's steps per hour or day (UTC), stacked by outcome: blocked at the bottom, allowed on top. */
export function DecisionsTrendChart({ points, bucket }: { points: DecisionPoint[]; bucket: 'hour' | 'day' }) {
  const first = points[0];
  const last = points.at(-1);
  if (!first || !last || points.every((p) => !p.total))
    return <p className="muted">No tool call analysed in this period: agents call Vigil once an environment is connected.</p>;
  const sum = (k: (typeof DECISION_SERIES)[number]['key']) => points.reduce((n, p) => n + p[k], 0);
  const per = bucket === 'hour' ? 'hour' : 'day';
  const summary = `Tool calls analysed per ${per} (UTC) by outcome, ${first.period} to ${last.period}: ${DECISION_SERIES.map((s) => `${sum(s.key)} ${s.label}`).join(', ')}.`;
  return (
    <ChartFigure
      summary={summary}
      height={240}
      chart={
        <BarChart data={points} accessibilityLayer={false} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
          <CartesianGrid stroke="#e1e4e8" vertical={false} />
          <XAxis dataKey="period" tickFormatter={shortPeriod} tick={AXIS} minTickGap={12} />
          <YAxis allowDecimals={false} tick={AXIS} />
          <Tooltip labelFormatter={(p) => `${shortPeriod(String(p))} UTC`} itemSorter={(item) => DECISION_SERIES.findIndex((s) => s.key === item.dataKey)} />
          <Legend itemSorter={DRAWN_ORDER} />
          {DECISION_SERIES.map((s) => (
            <Bar key={s.key} dataKey={s.key} name={s.label} stackId="steps" fill={s.colour} isAnimationActive={false} />
          ))}
        </BarChart>
      }
      table={
        <NumbersTable
          label={`Tool calls per ${per} by outcome`}
          headers={[bucket === 'hour' ? 'Hour (UTC)' : 'Date (UTC)', 'Total', ...DECISION_SERIES.map((s) => s.label)]}
          rows={points.map((p) => [shortPeriod(p.period), p.total, ...DECISION_SERIES.map((s) => p[s.key])])}
        />
      }
    />
  );
}
