import type { Command } from 'commander';
import { dialectOf, migrate, migrationStatus } from '../../store/db.ts';
import type { CommandHost } from '../host.ts';
import { print, printJson, table } from '../output.ts';

/** `vigil db migrate` and `vigil db status`. */
export function registerDb(program: Command, host: CommandHost): void {
  const cmd = program.command('db').description('Database schema: apply and inspect migrations');
  cmd
    .command('migrate')
    .description('Apply pending migrations (other commands also apply them on start)')
    .option('--json', 'print JSON')
    .action(
      host.action(
        async (rt, opts: { json?: boolean }) => {
          const applied = await migrate(rt.db);
          if (opts.json) return printJson({ dialect: dialectOf(rt.db), applied });
          print(applied.length ? `Applied ${applied.join(', ')} (${dialectOf(rt.db)}).` : `Nothing to apply: the ${dialectOf(rt.db)} schema is up to date.`);
        },
        { migrate: false },
      ),
    );
  cmd
    .command('status')
    .description('List migrations and when each was applied')
    .option('--json', 'print JSON')
    .action(
      host.action(
        async (rt, opts: { json?: boolean }) => {
          const status = (await migrationStatus(rt.db)).map((m) => ({ name: m.name, appliedAt: m.executedAt?.toISOString() ?? null }));
          if (opts.json) return printJson({ dialect: dialectOf(rt.db), migrations: status });
          print(`Dialect: ${dialectOf(rt.db)}`, table([['MIGRATION', 'APPLIED'], ...status.map((m) => [m.name, m.appliedAt ?? 'pending'])]));
        },
        { migrate: false },
      ),
    );
}
