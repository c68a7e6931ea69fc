import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, apiUrl, ApiError, seg } from '../api.ts';
import { apiScope, useApiMutation, useApiQuery } from '../query.ts';
import type { LiveProgress, Run, RunPage, RunQueued } from '../types.ts';
import { column, DataTable, statusColumn, timeColumn, type Column } from './DataTable.tsx';
import { ErrorMessage, formatDuration, JsonValue, Loaded, StatusBadge, Time } from './ui.tsx';

/** How long to keep asking the live stream after starting a run that a worker has not picked up yet. */
const START_RETRIES = 20;
const RETRY_MS = 1000;

function countsSummary(counts: Record<string, unknown> | null): string {
  if (!counts) return '—';
  // Per stream {records, slices, erroredSlices} (the sync engine's outcome); plain numbers are shown as they are.
  let records = 0;
  let streams = 0;
  let errored = 0;
  const scalars: string[] = [];
  for (const [k, v] of Object.entries(counts)) {
    if (v && typeof v === 'object') {
      const o = v as { records?: unknown; erroredSlices?: unknown };
      if (typeof o.records === 'number') {
        records += o.records;
        if (o.records > 0) streams++;
      }
      if (typeof o.erroredSlices === 'number') errored += o.erroredSlices;
    } else if (typeof v === 'number' || typeof v === 'string') {
      scalars.push(`${k}: ${String(v)}`);
    }
  }
  if (scalars.length) return scalars.slice(0, 4).join(', ');
  return `${records} records from ${streams} streams${errored ? `, ${errored} errored slices` : ''}`;
}

const RUNS: Column<Run>[] = [
  timeColumn('Started', (r) => r.startedAt),
  statusColumn((r) => r.status),
  column('Duration', (r) => formatDuration(r.durationMs)),
  column('Counts', (r) => (
    <>
      {countsSummary(r.counts)}
      {r.counts ? <JsonValue value={r.counts} summary="All counts" /> : null}
    </>
  )),
  column('Errors', (r) =>
    r.errors?.length ? (
      <JsonValue value={r.errors} summary={`${r.errors.length} error${r.errors.length === 1 ? '' : 's'}`} />
    ) : (
      <span className="muted">none</span>
    ),
  ),
];

/**
 * Run collection, its live progress over server-sent events, and the recent runs. A finished run changes findings,
 * inventory, alerts and the integration's state, so every cached answer is fetched again.
 */
export function RunPanel({ integrationId, isAdmin }: { integrationId: string; isAdmin: boolean }) {
  const runsPath = `/integrations/${seg(integrationId)}/runs`;
  const runs = useApiQuery<RunPage>(runsPath, { limit: 20 });
  const client = useQueryClient();
  const [live, setLive] = useState<LiveProgress | null>(null);
  const [phase, setPhase] = useState<'idle' | 'queued' | 'running'>('idle');
  const [finished, setFinished] = useState<Run | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const esRef = useRef<EventSource | null>(null);
  const timerRef = useRef<ReturnType<typeof setTimeout> | null>(null);
  const reloadRuns = useCallback(() => void client.invalidateQueries({ queryKey: apiScope(runsPath) }), [client, runsPath]);
  const reloadAll = useCallback(() => void client.invalidateQueries({ queryKey: apiScope('/') }), [client]);
  const startRun = useApiMutation(() => api.post<RunQueued>(runsPath));

  const stop = useCallback(() => {
    esRef.current?.close();
    esRef.current = null;
    if (timerRef.current) clearTimeout(timerRef.current);
    timerRef.current = null;
  }, []);

  const watch = useCallback(
    (retriesLeft: number) => {
      stop();
      const es = new EventSource(apiUrl(`/integrations/${seg(integrationId)}/runs/live`));
      esRef.current = es;
      es.addEventListener('progress', (ev) => {
        try {
          const p = JSON.parse((ev as MessageEvent<string>).data) as LiveProgress;
          setLive(p);
          setPhase('running');
        } catch {
          /* a malformed event is skipped; the next one carries the whole state */
        }
      });
      es.addEventListener('finished', (ev) => {
        stop();
        try {
          setFinished(JSON.parse((ev as MessageEvent<string>).data) as Run);
        } catch {
          setFinished(null);
        }
        setLive(null);
        setPhase('idle');
        reloadAll();
      });
      es.addEventListener('idle', (ev) => {
        try {
          const d = JSON.parse((ev as MessageEvent<string>).data) as { lastRun?: Run | null };
          if (d.lastRun && retriesLeft === 0) setFinished(d.lastRun);
        } catch {
          /* no data */
        }
        stop();
        if (retriesLeft > 0) {
          // Queued but not started yet: look again shortly.
          timerRef.current = setTimeout(() => watch(retriesLeft - 1), RETRY_MS);
        } else {
          setPhase((p) => (p === 'queued' ? 'idle' : p === 'running' ? 'idle' : p));
          setLive(null);
          reloadRuns();
        }
      });
      es.onerror = (ev) => {
        // The server's own `error` event (data {code, message}) arrives here too, as a MessageEvent.
        const data = (ev as MessageEvent<unknown>).data;
        if (typeof data === 'string' && data) {
          try {
            const e = JSON.parse(data) as { code?: string; message?: string; remediation?: string };
            setError(
              new ApiError(
                0,
                e.code ?? 'LIVE_ERROR',
                e.message ?? 'Progress could not be read.',
                undefined,
                e.remediation ?? 'The run list below still shows the outcome; reload the page to follow again.',
              ),
            );
          } catch {
            /* not JSON */
          }
          stop();
          setPhase('idle');
          return;
        }
        if (es.readyState === EventSource.CLOSED) {
          stop();
          setPhase('idle');
        }
        // Otherwise the browser reconnects by itself.
      };
    },
    [integrationId, stop, reloadRuns, reloadAll],
  );

  // A run may already be in progress when the page opens.
  useEffect(() => {
    watch(0);
    return stop;
  }, [watch, stop]);

  function start() {
    if (phase !== 'idle') return;
    setError(null);
    setFinished(null);
    setPhase('queued');
    startRun.mutate(undefined, { onSuccess: () => watch(START_RETRIES), onError: () => setPhase('idle') });
  }
  const note = startRun.data && !startRun.data.queued ? 'A collection of this integration was already waiting; following it.' : null;

  const run = live?.run;
  const counters = live?.progress ?? live?.checkpoints;
  return (
    <section aria-labelledby="h-runs" className="card">
      <h2 id="h-runs">Collection</h2>
      {isAdmin ? (
        <button type="button" onClick={start} aria-disabled={phase !== 'idle'} className={phase !== 'idle' ? 'is-busy' : undefined}>
          Run collection
        </button>
      ) : null}
      <ErrorMessage error={error ?? startRun.error} />
      <div className="live" role="status" aria-live="polite">
        {phase === 'queued' && !run ? <p>Collection queued; waiting for a worker to start it…</p> : null}
        {note ? <p>{note}</p> : null}
        {run ? (
          <div className="progress">
            <p>
              <StatusBadge status={run.status} /> Collection started <Time value={run.startedAt} />
            </p>
            <p>
              Streams done: <strong>{counters?.done ?? 0}</strong>, errored: <strong>{counters?.errored ?? 0}</strong>, records stored:{' '}
              <strong>{counters?.records ?? 0}</strong>
            </p>
            <progress aria-label="Collection in progress" />
            {counters?.streams && Object.keys(counters.streams).length ? (
              <details>
                <summary>Progress per stream</summary>
                <ul className="small plain">
                  {Object.entries(counters.streams).map(([name, c]) => (
                    <li key={name}>
                      {name}: {c.done} done{c.errored ? `, ${c.errored} errored` : ''}, {c.records} records
                    </li>
                  ))}
                </ul>
              </details>
            ) : null}
          </div>
        ) : null}
        {finished && phase === 'idle' ? (
          <p>
            Collection finished: <StatusBadge status={finished.status} /> in {formatDuration(finished.durationMs)}.
          </p>
        ) : null}
      </div>

      <h3>Recent runs</h3>
      <Loaded query={runs}>{(page) => <DataTable label="Recent runs" rows={page.items} columns={RUNS} empty="No collection has run yet." />}</Loaded>
    </section>
  );
}
