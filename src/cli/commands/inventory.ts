import { type Command, Option } from 'commander';
import { listInventory } from '../../reporting/index.ts';
import { InventoryParams, InventoryQuery } from '../../contract/inventory.ts';
import type { CommandHost } from '../host.ts';
import { listOptions, parseLimit, type ListOptions } from '../input.ts';
import { print, printJson, table } from '../output.ts';
import { operatorScope, ORGANIZATION_FILTER_HELP } from '../scope.ts';

/** Page size the command reads the inventory in (the API's largest). */
const PAGE_SIZE = 500;

/**
 * `vigil inventory <kind>`: the live objects of one inventory kind, through the use case of `GET
 * /api/v1/inventory/{kind}` (the operator's caller), so `--json` prints the API's items for the same filters.
 */
export function registerInventory(program: Command, host: CommandHost): void {
  listOptions(
    program
      .command('inventory')
      .description('Live inventory objects of one kind (agents, apps, flows, environments, users, …), by name unless another order is asked')
      .addArgument(program.createArgument('<kind>', 'inventory kind').choices(InventoryParams.shape.kind.options)),
    100,
  )
    .option('--integration <integration>', 'only this integration (id or name)')
    .option('--organization <name>', ORGANIZATION_FILTER_HELP)
    .option('--environment <id>', 'only objects of this Power Platform environment (agents, apps, flows, connectors, connections)')
    .addOption(new Option('--name <text>', 'only objects whose name or id contains this text (any case)'))
    .addOption(
      new Option('--sort <key>', 'order by name, environment (its name), firstSeenAt or lastSeenAt').choices(InventoryQuery.shape.sort.unwrap().options),
    )
    .addOption(new Option('--order <direction>', 'asc (the default) or desc').choices(['asc', 'desc']))
    .option('--json', 'print JSON (the items of GET /api/v1/inventory/{kind})')
    .action(
      host.action(
        async (
          rt,
          kind: (typeof InventoryParams.shape.kind.options)[number],
          opts: ListOptions & {
            integration?: string;
            organization?: string;
            environment?: string;
            name?: string;
            sort?: (typeof InventoryQuery.shape.sort.def.innerType.options)[number];
            order?: 'asc' | 'desc';
          },
        ) => {
          const { caller, integrationId } = await operatorScope(rt.db, opts);
          // Scripts get every object unless --limit says otherwise (as every list); people the first 100.
          const limit = opts.limit !== undefined ? parseLimit(opts.limit, 100) : opts.json ? Infinity : 100;
          const items: Awaited<ReturnType<typeof listInventory>>['items'] = [];
          let cursor: string | undefined;
          let more = false;
          let total = 0;
          do {
            const page = await listInventory(rt.db, caller, kind, {
              integrationId,
              environmentId: opts.environment,
              q: opts.name,
              sort: opts.sort,
              order: opts.order,
              cursor,
              limit: Math.min(PAGE_SIZE, limit - items.length + 1),
            });
            items.push(...page.items);
            total = page.total;
            cursor = page.nextCursor ?? undefined;
            more = cursor !== undefined || items.length > limit;
          } while (cursor && items.length <= limit);
          const rows = items.slice(0, limit);
          if (opts.json) return printJson(rows);
          if (rows.length === 0) return print(`No ${kind} collected${opts.name ? ` named like "${opts.name}"` : ''} (run \`vigil collect <integration>\`).`);
          print(
            table(
              [
                ['NAME', 'ID', 'ENVIRONMENT', 'SUMMARY', 'LAST SEEN'],
                ...rows.map((o) => [
                  o.name ?? '-',
                  o.id,
                  o.environmentName ?? o.environmentId ?? '-',
                  o.summary.map((f) => `${f.label}: ${f.value}`).join('; ') || '-',
                  o.lastSeenAt.slice(0, 19),
                ]),
              ],
              { wide: opts.wide, shrink: [0, 2, 3] },
            ),
          );
          if (more) print(`… more (showing ${rows.length} of ${total}; --limit <n> shows more)`);
        },
      ),
    );
}
