import type { Command } from 'commander';
import type { JobQueue } from '../../jobs/queue.ts';
import { enqueueNow } from '../../sync/scheduler.ts';
import type { Runtime } from '../host.ts';
import { getIntegration } from '../../integration/index.ts';
import type { CommandHost } from '../host.ts';
import { limitRows, listOptions, type ListOptions } from '../input.ts';
import { print, printJson, table } from '../output.ts';

/** `vigil jobs enqueue <integration>` and `vigil jobs dead-letters` — the queue factory is injected by main/. */
export function registerJobs(program: Command, host: CommandHost, createQueue: (rt: Runtime) => JobQueue | Promise<JobQueue>): void {
  const cmd = program.command('jobs').description('The shared collection queue (PostgreSQL): enqueue a collection, list dead letters');
  cmd
    .command('enqueue <integration>')
    .description('Queue a collection of an integration now, for the workers (no-op when one is already queued)')
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, integration: string, opts: { json?: boolean }) => {
        const row = await getIntegration(rt.db, integration);
        const queue = await createQueue(rt);
        await queue.start();
        try {
          const jobId = await enqueueNow(queue, row);
          if (opts.json) printJson({ integrationId: row.id, jobId, queued: jobId !== null });
          else print(jobId ? `Queued collection job ${jobId} for ${row.name}.` : `A collection of ${row.name} is already queued.`);
        } finally {
          await queue.stop({ timeoutSeconds: 1 });
        }
      }),
    )
    .addHelpText('after', '\nOn SQLite the queue lives inside `vigil serve`: use `vigil collect` instead.');
  listOptions(cmd.command('dead-letters').description('List collection jobs that failed every retry'), 100)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, opts: ListOptions) => {
        limitRows([], opts, 100);
        const queue = await createQueue(rt);
        await queue.start();
        try {
          const { rows: dead, more } = limitRows(await queue.deadLetters(), opts, 100);
          if (opts.json) return printJson(dead);
          if (dead.length === 0) return print('No dead-lettered jobs.');
          print(
            table([['JOB', 'INTEGRATION', 'FAILED', 'ERROR'], ...dead.map((d) => [d.id, d.integrationId, d.failedAt ?? '-', d.error ?? ''])], {
              wide: opts.wide,
              shrink: [3],
            }),
          );
          if (more) print(more);
        } finally {
          await queue.stop({ timeoutSeconds: 1 });
        }
      }),
    );
}
