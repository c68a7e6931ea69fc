// A small stacked-bar chart drawn as inline SVG: one chart, five series, no interaction, so a charting library
// (and its bundle weight and CSP needs) is not worth it. The same numbers are offered as a table for screen readers.
import { SEVERITIES, type Dashboard } from '../types.ts';

type Point = Dashboard['severityOverTime'][number];

const W = 720;
const H = 240;
const PAD = { top: 12, right: 12, bottom: 36, left: 44 };

/** A round step for about four grid lines (1, 2 or 5 times a power of ten), and the top of the axis. */
function axis(maxTotal: number): { step: number; top: number } {
  const raw = Math.max(maxTotal, 4) / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * p >= raw) ?? 10) * p;
  return { step, top: step * Math.max(1, Math.ceil(maxTotal / step)) };
}

export function SeverityChart({ points }: { points: Point[] }) {
  if (!points.length) return <p className="muted">No findings recorded yet: run a collection to evaluate the checks.</p>;
  const totals = points.map((p) => SEVERITIES.reduce((s, k) => s + (p[k] ?? 0), 0));
  const { step, top: max } = axis(Math.max(...totals, 1));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / points.length;
  const barW = Math.max(2, Math.min(28, slot * 0.7));
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const ticks = Array.from({ length: Math.round(max / step) + 1 }, (_, i) => i * step);
  const labelEvery = Math.ceil(points.length / 8);
  const last = points[points.length - 1];
  const lastTotal = totals[totals.length - 1] ?? 0;
  const summary = last
    ? `Open findings by severity per day, ${points[0]?.date} to ${last.date}. On ${last.date}: ${lastTotal} open (${SEVERITIES.map((s) => `${last[s] ?? 0} ${s}`).join(', ')}).`
    : '';

  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary} preserveAspectRatio="xMidYMid meet">
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} className="grid" />
            <text x={PAD.left - 6} y={y(t) + 4} textAnchor="end" className="axis">
              {t}
            </text>
          </g>
        ))}
        {points.map((p, i) => {
          const x = PAD.left + i * slot + (slot - barW) / 2;
          let acc = 0;
          return (
            <g key={p.date}>
              {SEVERITIES.map((s) => {
                const v = p[s] ?? 0;
                if (!v) return null;
                const y1 = y(acc + v);
                const h = y(acc) - y1;
                acc += v;
                return <rect key={s} x={x} y={y1} width={barW} height={h} className={`bar-${s}`} />;
              })}
              {i % labelEvery === 0 ? (
                <text x={x + barW / 2} y={H - PAD.bottom + 16} textAnchor="middle" className="axis">
                  {p.date.slice(5)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul className="legend">
          {SEVERITIES.map((s) => (
            <li key={s}>
              <span className={`swatch bar-${s}`} aria-hidden="true" /> {s}
            </li>
          ))}
        </ul>
      </figcaption>
      <details>
        <summary>Show the numbers as a table</summary>
        <div className="table-scroll" role="region" aria-label="Open findings by severity per day" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Date</th>
                {SEVERITIES.map((s) => (
                  <th key={s} scope="col" className="num">
                    {s}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {points.map((p) => (
                <tr key={p.date}>
                  <th scope="row">{p.date}</th>
                  {SEVERITIES.map((s) => (
                    <td key={s} className="num">
                      {p[s] ?? 0}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
