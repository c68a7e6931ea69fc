import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { integrationOf, requireOwned } from '../../access/scope.ts';
import { VigilError } from '../../core/errors.ts';
import { runView } from '../../reporting/index.ts';
import { findRunningRun, getRun, latestFinishedRun, listCheckpoints } from '../../store/repositories/runs.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { commonErrors, ErrorSchema, IdParams, RunSchema } from '../schemas.ts';

/** Seconds between two looks at the store while streaming progress. */
const LIVE_POLL_MS = 1000;
/** A comment line at least this often keeps proxies from closing an idle stream. */
const LIVE_HEARTBEAT_MS = 15_000;

/** Per-stream progress of a run from its checkpoints: slices done, errored, and records stored. */
async function progressOf(ctx: ApiContext, runId: string) {
  const cps = await listCheckpoints(ctx.db, runId);
  const streams: Record<string, { done: number; errored: number; records: number }> = {};
  let done = 0;
  let errored = 0;
  let records = 0;
  for (const c of cps) {
    const s = (streams[c.stream] ??= { done: 0, errored: 0, records: 0 });
    if (c.status === 'error') {
      s.errored++;
      errored++;
    } else if (c.status === 'done') {
      s.done++;
      done++;
    }
    s.records += c.records;
    records += c.records;
  }
  return { done, errored, records, streams };
}

/**
 * Collection runs: start one (queued; one per integration at a time), read one with its checkpoints, and follow the
 * running one live as server-sent events (HTML Living Standard, "Server-sent events": `event:` / `data:` lines).
 * Progress is read from the store, so it works whichever process (`vigil serve` or a `vigil worker`) runs the job.
 */
export function runRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post('/integrations/:id/runs', {
    config: { access: 'admin' },
    schema: {
      tags: ['runs'],
      summary: 'Start a collection (and evaluation) of the integration',
      description: 'Queued: at most one collection per integration is queued and one runs at a time. `queued: false` means one was already waiting.',
      params: IdParams,
      response: { 202: z.object({ queued: z.boolean(), jobId: z.string().nullable() }), 409: ErrorSchema, ...commonErrors },
    },
  }, async (request, reply) => {
    const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
    if (row.credential_state !== 'ok') {
      throw new VigilError('conflict', 'CREDENTIALS_REFUSED', `The credentials of ${row.name} were refused (${row.credential_state}); collection waits for a fix.`, { remediation: row.credential_error ?? 'Rotate the client secret, then start the collection again.' });
    }
    const jobId = await ctx.queue.enqueueCollection(row.id);
    return reply.code(202).send({ queued: jobId !== null, jobId });
  });

  r.get('/runs/:id', {
    schema: {
      tags: ['runs'],
      summary: 'One collection run with its per-stream progress',
      params: IdParams,
      response: { 200: RunSchema.extend({ progress: z.object({ done: z.number(), errored: z.number(), records: z.number(), streams: z.record(z.string(), z.object({ done: z.number(), errored: z.number(), records: z.number() })) }) }), ...commonErrors },
    },
  }, async (request) => {
    const run = await requireOwned(ctx.db, principalOf(request), 'run', request.params.id, await getRun(ctx.db, request.params.id));
    return { ...runView(run), progress: await progressOf(ctx, run.id) };
  });

  r.get('/integrations/:id/runs/live', {
    schema: {
      tags: ['runs'],
      summary: 'Follow the running collection as server-sent events',
      description: 'Content type text/event-stream. Events: `progress` (data: {run, progress}) about every second while a collection runs; `evaluating` (data: {run}) while its checks are evaluated; `finished` (data: the run and `evaluated`) when both are done; `idle` (data: {lastRun}) when none starts within 30 seconds. The stream ends after `finished` or `idle`.',
      params: IdParams,
      response: { 200: z.string().describe('text/event-stream'), ...commonErrors },
    },
  }, async (request, reply) => {
    const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    let closed = false;
    request.raw.on('close', () => (closed = true));
    const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    const idleMs = (ctx.liveIdleSeconds ?? 30) * 1000;
    const started = Date.now();
    let lastBeat = Date.now();
    let following: string | null = null;
    try {
      res.write('retry: 3000\n\n');
      while (!closed) {
        const running = await findRunningRun(ctx.db, row.id);
        if (running) {
          following = running.id;
          send('progress', { run: runView(running), progress: await progressOf(ctx, running.id) });
          lastBeat = Date.now();
        } else if (following) {
          // The run row ends with the collection; the checks are evaluated next, in one transaction that writes
          // results stamped with the run. `finished` waits for them, so a client reloading findings sees the new ones.
          const done = await getRun(ctx.db, following);
          const evaluated = async () => Boolean(await ctx.db.selectFrom('check_results').select('run_id').where('integration_id', '=', row.id).where('run_id', '=', following).limit(1).executeTakeFirst());
          const until = Date.now() + (ctx.evaluationWaitSeconds ?? 300) * 1000;
          while (done && done.status !== 'failed' && !closed && Date.now() < until && !(await evaluated())) {
            send('evaluating', { run: runView(done) });
            await new Promise((resolve) => setTimeout(resolve, LIVE_POLL_MS));
          }
          if (done) send('finished', { ...runView(done), evaluated: done.status !== 'failed' && (await evaluated()) });
          break;
        } else if (Date.now() - started >= idleMs) {
          const last = await latestFinishedRun(ctx.db, row.id);
          send('idle', { lastRun: last ? runView(last) : null });
          break;
        }
        if (Date.now() - lastBeat >= LIVE_HEARTBEAT_MS) {
          res.write(': keep-alive\n\n');
          lastBeat = Date.now();
        }
        await new Promise((resolve) => setTimeout(resolve, LIVE_POLL_MS));
      }
    } catch (e) {
      if (!closed) send('error', { code: 'INTERNAL', message: 'Progress could not be read; the error is logged.' });
      ctx.logger.error({ integrationId: row.id, err: { message: (e as Error).message } }, 'live progress stream failed');
    } finally {
      res.end();
    }
  });
}
