import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { integrationOf } from '../../access/scope.ts';
import { enqueueNow } from '../../sync/scheduler.ts';
import { followRun, runDetail } from '../../reporting/index.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';
import { commonErrors, ErrorSchema, IdParams } from '../../contract/common.ts';
import { RunDetailSchema, RunEventStream, RunQueuedSchema } from '../../contract/runs.ts';

/** Milliseconds between two looks at the store while streaming progress. */
const LIVE_POLL_MS = 1000;
/** A comment line at least this often keeps proxies from closing an idle stream. */
const LIVE_HEARTBEAT_MS = 15_000;

/**
 * Collection runs: start one (queued; one per integration at a time), read one with its checkpoints, and follow the
 * running one live as server-sent events (HTML Living Standard, "Server-sent events": `event:` / `data:` lines).
 * Progress is read from the store, so it works whichever process (`vigil serve` or a `vigil worker`) runs the job.
 */
export function runRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/integrations/:id/runs',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['runs'],
        summary: 'Start a collection (and evaluation) of the integration',
        description: 'Queued: at most one collection per integration is queued and one runs at a time. `queued: false` means one was already waiting.',
        params: IdParams,
        response: { 202: RunQueuedSchema, 422: ErrorSchema.describe('The credentials were refused: rotate the secret first'), ...commonErrors },
      },
    },
    async (request, reply) => {
      const jobId = await enqueueNow(ctx.queue, await integrationOf(ctx.db, principalOf(request), request.params.id));
      return reply.code(202).send({ queued: jobId !== null, jobId });
    },
  );

  r.get(
    '/runs/:id',
    {
      schema: {
        tags: ['runs'],
        summary: 'One collection run with its per-stream progress',
        params: IdParams,
        response: { 200: RunDetailSchema, ...commonErrors },
      },
    },
    async (request) => runDetail(ctx.db, principalOf(request), request.params.id),
  );

  r.get(
    '/integrations/:id/runs/live',
    {
      schema: {
        tags: ['runs'],
        summary: 'Follow the running collection as server-sent events',
        description:
          'Content type text/event-stream. Events: `progress` (data: {run, progress}) about every second while a collection runs; `evaluating` (data: {run}) while its checks are evaluated; `finished` (data: the run and `evaluated`) when both are done; `idle` (data: {lastRun}) when none starts within 30 seconds. The stream ends after `finished` or `idle`.',
        params: IdParams,
        response: { 200: RunEventStream, ...commonErrors },
      },
    },
    async (request, reply) => {
      const row = await integrationOf(ctx.db, principalOf(request), request.params.id);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      let closed = false;
      request.raw.on('close', () => (closed = true));
      const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), LIVE_HEARTBEAT_MS);
      try {
        res.write('retry: 3000\n\n');
        const events = followRun(ctx.db, row.id, {
          pollMs: LIVE_POLL_MS,
          idleMs: (ctx.liveIdleSeconds ?? 30) * 1000,
          evaluationWaitMs: (ctx.evaluationWaitSeconds ?? 300) * 1000,
          stopped: () => closed,
        });
        for await (const { event, data } of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      } catch (e) {
        if (!closed) res.write(`event: error\ndata: ${JSON.stringify({ code: 'INTERNAL', message: 'Progress could not be read; the error is logged.' })}\n\n`);
        ctx.logger.error({ integrationId: row.id, err: { message: (e as Error).message } }, 'live progress stream failed');
      } finally {
        clearInterval(heartbeat);
        res.end();
      }
    },
  );
}
