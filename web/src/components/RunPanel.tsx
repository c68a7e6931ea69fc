// The collection panel of an integration's page. Its state is the server's, held by TanStack Query
// (tanstack.com/query/v5/docs/framework/react/guides/query-keys, .../reference/useQuery `refetchInterval`): the recent
// runs are fetched again every few seconds while a run is active or one was just asked for (and now and then
// otherwise, so a run started elsewhere shows), the active run's progress comes from GET /runs/{id}, and when it has
// finished (and its checks were evaluated) every cached answer is marked stale, so the checklist, the environments,
// findings and inventory on screen fetch again without a reload.
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { api, seg } from '../api.ts';
import { apiScope, useApiMutation, useApiQuery } from '../query.ts';
import type { Run, RunDetail, RunPage, RunQueued } from '../types.ts';
import { column, DataTable, statusColumn, timeColumn, type Column } from './DataTable.tsx';
import { ErrorMessage, formatDuration, JsonValue, Loaded, StatusBadge, Time } from './ui.tsx';

/** How often the runs and the active run are fetched while a run is active or was just asked for (ms). */
const ACTIVE_MS = 1500;
/** How often the runs are fetched otherwise, to notice a run started elsewhere (ms). */
const IDLE_MS = 10_000;
/** How long to wait for a worker to start a run just asked for before saying so (ms). */
const START_WAIT_MS = 60_000;
/** How long a finished run's check evaluation is waited for before the run is shown as finished anyway (ms). */
const EVALUATION_WAIT_MS = 60_000;

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

/** The run of `page` that is still running, if any. */
const runningOf = (page: RunPage | undefined): Run | undefined => page?.items.find((r) => r.status === 'running');

/**
 * The recent runs of an integration (GET /integrations/{id}/runs, the 20 newest), fetched again every
 * {@link ACTIVE_MS} while one is running (or `eager`), else every {@link IDLE_MS}; and the one running, if any. Every
 * caller shares one cache entry.
 */
export function useRuns(integrationId: string, eager = false) {
  const runs = useApiQuery<RunPage>(
    `/integrations/${seg(integrationId)}/runs`,
    { limit: 20 },
    {
      refetchInterval: (q) => (eager || runningOf(q.state.data) ? ACTIVE_MS : IDLE_MS),
    },
  );
  return { runs, running: runningOf(runs.data) };
}

/** Whether a followed run is over: not running, and its checks evaluated (or failed, or waited for long enough). */
function isOver(run: RunDetail | undefined, overSince: number | null): boolean {
  if (!run || run.status === 'running') return false;
  return run.evaluated || run.status === 'failed' || (overSince !== null && Date.now() - overSince > EVALUATION_WAIT_MS);
}

/**
 * Run collection, its progress and the recent runs. A finished run changes findings, inventory, alerts and the
 * integration's state, so every cached answer is fetched again.
 */
export function RunPanel({ integrationId, isAdmin }: { integrationId: string; isAdmin: boolean }) {
  const client = useQueryClient();
  const runsPath = `/integrations/${seg(integrationId)}/runs`;
  // Asked for and not seen yet: the newest run before asking, and until when to wait for a worker.
  const [awaiting, setAwaiting] = useState<{ after: string | null; until: number } | null>(null);
  const [notStarted, setNotStarted] = useState(false);
  // The run this page follows (started here or elsewhere), and when it was first seen no longer running.
  const [followId, setFollowId] = useState<string | null>(null);
  const overSince = useRef<number | null>(null);
  const { runs, running } = useRuns(integrationId, awaiting !== null);
  const startRun = useApiMutation(() => api.post<RunQueued>(runsPath), {
    invalidates: [runsPath],
    onSuccess: () => {
      setNotStarted(false);
      setAwaiting({ after: runs.data?.items[0]?.id ?? null, until: Date.now() + START_WAIT_MS });
    },
  });

  // Follow a run once the list shows it: the one running, or (a run quicker than a poll) a new one after asking.
  const newest = runs.data?.items[0];
  const seen = running ?? (awaiting && newest && newest.id !== awaiting.after ? newest : undefined);
  if (seen && seen.id !== followId) {
    setFollowId(seen.id);
    overSince.current = null;
  }
  if (awaiting && seen) setAwaiting(null);

  const followed = useApiQuery<RunDetail>(`/runs/${seg(followId ?? '-')}`, undefined, {
    enabled: followId !== null,
    refetchInterval: (q) => (isOver(q.state.data, overSince.current) ? false : ACTIVE_MS),
  });
  const run = followed.data?.id === followId ? followed.data : undefined;
  if (run && run.status !== 'running' && overSince.current === null) overSince.current = Date.now();
  const over = isOver(run, overSince.current);

  // When the followed run is over, everything it may have changed is fetched again, once.
  const refreshed = useRef<string | null>(null);
  useEffect(() => {
    if (over && run && refreshed.current !== run.id) {
      refreshed.current = run.id;
      void client.invalidateQueries({ queryKey: apiScope('/') });
    }
  }, [over, run, client]);

  // No worker started the run in time: say so, and keep looking at the usual pace.
  useEffect(() => {
    if (!awaiting) return;
    const t = setTimeout(
      () => {
        setAwaiting(null);
        setNotStarted(true);
      },
      Math.max(0, awaiting.until - Date.now()),
    );
    return () => clearTimeout(t);
  }, [awaiting]);

  const busy = startRun.isPending || awaiting !== null || (run !== undefined && !over);
  function start() {
    if (!busy) startRun.mutate(undefined);
  }
  const note = startRun.data && !startRun.data.queued ? 'A collection of this integration was already waiting; following it.' : null;
  const counters = run?.progress;
  return (
    <section aria-labelledby="h-runs" className="card">
      <h2 id="h-runs">Collection</h2>
      {isAdmin ? (
        <button type="button" onClick={start} aria-disabled={busy} className={busy ? 'is-busy' : undefined}>
          Run collection
        </button>
      ) : null}
      <ErrorMessage error={startRun.error} />
      <div className="live" role="status" aria-live="polite">
        {awaiting && !run ? <p>Collection queued; waiting for a worker to start it…</p> : null}
        {notStarted ? <p>The collection is queued, but no worker has started it yet. It shows here when one does.</p> : null}
        {note ? <p>{note}</p> : null}
        {run && !over ? (
          <div className="progress">
            <p>
              <StatusBadge status={run.status} /> Collection started <Time value={run.startedAt} />
              {run.status !== 'running' ? ' — evaluating the checks…' : null}
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
        {run && over ? (
          <p>
            Collection finished: <StatusBadge status={run.status} /> in {formatDuration(run.durationMs)}.
          </p>
        ) : null}
      </div>
      <ErrorMessage error={followed.error} />

      <h3>Recent runs</h3>
      <Loaded query={runs}>{(page) => <DataTable label="Recent runs" rows={page.items} columns={RUNS} empty="No collection has run yet." />}</Loaded>
    </section>
  );
}
