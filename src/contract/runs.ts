import { z } from 'zod';
import { Json, Timestamp } from './common.ts';

/** Contract of collection runs: `/api/v1/runs/{id}`, `/api/v1/integrations/{id}/runs` and its live stream. */

/** A collection run. */
export const RunSchema = z
  .object({
    id: z.string(),
    integrationId: z.string(),
    status: z.string().describe('running, succeeded, partial, failed or interrupted'),
    startedAt: Timestamp,
    finishedAt: Timestamp.nullable(),
    durationMs: z.number().nullable(),
    attempts: z.number().int().describe('Times the run was started: 1, plus one per resumption after an interruption'),
    counts: Json.nullable().describe('Per stream: records, slices, errored slices (null while running)'),
    errors: z.array(z.unknown()).nullable().describe('Errored slices with their upstream request (null while running)'),
    http: Json.nullable().describe('HTTP requests per upstream service: counts, retries, throttling (null while running)'),
  })
  .meta({ id: 'Run' });
/** A collection run. */
export type Run = z.infer<typeof RunSchema>;

/** Slices done and errored and records stored, of one stream or of the whole run. */
const Counters = z.object({ done: z.number(), errored: z.number(), records: z.number() });

/** Per-stream progress of a run, from its checkpoints. */
const RunProgressSchema = Counters.extend({ streams: z.record(z.string(), Counters) }).meta({ id: 'RunProgress' });
/** Per-stream progress of a run. */
export type RunProgress = z.infer<typeof RunProgressSchema>;

/** One run with its progress. */
export const RunDetailSchema = RunSchema.extend({
  progress: RunProgressSchema,
  evaluated: z.boolean().describe("The checks were evaluated on this run's data (false while it runs, for a failed run, or before evaluation committed)"),
}).meta({ id: 'RunDetail' });
/** One run with its progress. */
export type RunDetail = z.infer<typeof RunDetailSchema>;

/** Answer of starting a collection. */
export const RunQueuedSchema = z.object({ queued: z.boolean(), jobId: z.string().nullable() });

/** Query of the recent runs of an integration. */
export const RunsQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).default(20) });

/** Recent runs of an integration. */
export const RunListSchema = z.object({ items: z.array(RunSchema) });

/**
 * One server-sent event of `/api/v1/integrations/{id}/runs/live` (not in the OpenAPI document, whose answer is the
 * `text/event-stream` text): the event's name and its JSON data.
 */
export type RunEvent =
  | { event: 'progress'; data: { run: Run; progress: RunProgress } }
  | { event: 'evaluating'; data: { run: Run } }
  | { event: 'finished'; data: Run & { evaluated: boolean } }
  | { event: 'idle'; data: { lastRun: Run | null } };

/** The live stream's body: `text/event-stream` lines carrying {@link RunEvent}s. */
export const RunEventStream = z.string().describe('text/event-stream');
