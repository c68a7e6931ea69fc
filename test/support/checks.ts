import { coverageFromCheckpoints } from '../../src/checks/evaluate.ts';
import { loadChecks } from '../../src/checks/loader.ts';
import { guardResults } from '../../src/checks/gaps.ts';
import { inventoryView, type InventorySource } from '../../src/checks/inventory.ts';
import { CORE_INVENTORY_PARTS, type CheckContext, type CheckInventory, type CheckResult, type EstateRow, type LoadedCheck } from '../../src/checks/types.ts';
import { STREAMS, type EstateAttrs, type EstateStreamName } from '../../src/sources/index.ts';
import { isEstateStream } from '../../src/store/stream-tables.ts';
import type { AgentsTable, DataverseUsersTable, DirectoryUsersTable, EnvironmentsTable } from '../../src/store/schema.ts';

/**
 * Builders for check tests: a check context from a few plain objects, with coverage from checkpoints (an errored
 * stream or slice makes the check "not evaluated"). Every stream named in `ran` (default: all estate streams given,
 * plus the six core streams) has a done root checkpoint.
 */

type Checkpoint = Parameters<typeof coverageFromCheckpoints>[1][number];

/** A store row of the `environments` table. */
export function environmentRow(over: Partial<EnvironmentsTable> = {}): EnvironmentsTable {
  return {
    integration_id: 'int_1',
    id: 'env1',
    display_name: 'Prod',
    sku: 'Production',
    is_default: 0,
    region: 'unitedstates',
    dataverse_url: 'https://org1.crm.dynamics.com/',
    state: 'Enabled',
    raw: '{}',
    first_seen_at: '',
    last_seen_at: '',
    last_seen_run: 'run',
    deleted_at: null,
    ...over,
  };
}

/** A store row of the `agents` table. */
export function agentRow(over: Partial<AgentsTable> = {}): AgentsTable {
  return {
    integration_id: 'int_1',
    environment_id: 'env1',
    id: 'bot1',
    name: 'Bot',
    schema_name: 'cr_bot',
    authentication_mode: 2,
    authentication_trigger: 1,
    access_control_policy: 1,
    owner_id: 'su1',
    published_on: '2026-10-01T00:00:00Z',
    modified_on: '2026-10-01T00:00:00Z',
    created_on: null,
    state_code: 0,
    status_code: 1,
    raw: '{}',
    first_seen_at: '',
    last_seen_at: '',
    last_seen_run: 'run',
    deleted_at: null,
    ...over,
  };
}

/** A directory user as checks see it. */
export function userRow(over: Partial<Pick<DirectoryUsersTable, 'id' | 'display_name' | 'user_principal_name' | 'account_enabled' | 'user_type'>> = {}) {
  return { id: 'u1', display_name: 'Ann', user_principal_name: 'ann@contoso.com', account_enabled: 1, user_type: 'Member', ...over };
}

/** A live estate object. */
export function estateRow<S extends EstateStreamName>(
  _stream: S,
  id: string,
  attrs: EstateAttrs[S],
  over: Partial<EstateRow<EstateAttrs[S]>> = {},
): EstateRow<EstateAttrs[S]> {
  return { id, sliceKey: '*', name: id, attrs, firstSeenAt: '2026-10-01T00:00:00Z', lastSeenAt: '2026-11-20T00:00:00Z', ...over };
}

/** Input of {@link checkContext}. */
export interface ContextInput {
  environments?: EnvironmentsTable[];
  agents?: AgentsTable[];
  dataverseUsers?: DataverseUsersTable[];
  users?: ReturnType<typeof userRow>[];
  estate?: { [S in EstateStreamName]?: EstateRow<EstateAttrs[S]>[] };
  /** Checkpoints beyond the default done ones (status `error` with an `error_code` makes a gap). */
  checkpoints?: Checkpoint[];
  /** No run at all: every stream is "not collected". */
  neverCollected?: boolean;
  integration?: Partial<CheckContext['integration']>;
  now?: string;
}

/** The inventory source behind each built context, so {@link runCheck} can hand a check only what it declares. */
const sources = new WeakMap<CheckInventory, InventorySource>();

/** Every inventory part readable: for contexts used outside {@link runCheck}. */
const ESTATE_STREAMS = Object.keys(STREAMS).filter(isEstateStream);
const EVERYTHING = { id: 'test', reads: [...CORE_INVENTORY_PARTS, ...ESTATE_STREAMS], paged: ESTATE_STREAMS };

/**
 * Builds a check context from plain rows. Estate streams read page by page come in pages of two rows, so a check's
 * folding across pages is exercised.
 */
export function checkContext(input: ContextInput = {}): CheckContext {
  const estate = new Map(Object.entries(input.estate ?? {}) as [string, EstateRow<unknown>[]][]);
  const source: InventorySource = {
    loaded: {
      environments: input.environments ?? [environmentRow()],
      agents: input.agents ?? [],
      dataverseUsers: new Map((input.dataverseUsers ?? []).map((u) => [`${u.environment_id}/${u.id}`, u])),
      directoryUsers: new Map((input.users ?? []).map((u) => [u.id, u])),
      estate,
    },
    async *pages(stream) {
      const rows = [...(estate.get(stream) ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      for (let i = 0; i < rows.length; i += 2) yield rows.slice(i, i + 2);
    },
  };
  const inventory: CheckInventory = inventoryView(source, EVERYTHING);
  const ctx: CheckContext = {
    integrationId: 'int_1',
    tenantId: 'tenant-1',
    integration: { mode: 'customer-app', secretExpiresAt: '2028-01-01T00:00:00Z', credentialState: 'ok', credentialError: null, ...input.integration },
    now: new Date(input.now ?? '2026-11-21T00:00:00Z'),
    coverage: coverageFromCheckpoints(input.neverCollected ? null : 'run', input.checkpoints ?? []),
    inventory,
  };
  sources.set(inventory, source);
  return ctx;
}

/** An errored root checkpoint: the whole stream was not collected (e.g. a missing permission). */
export function streamError(stream: string, code = 'MISSING_PERMISSION', message = `Not collected: ${stream}`): Checkpoint {
  return { stream, slice_key: '*', status: 'error', error_code: code, error_message: message };
}

/** An errored slice checkpoint (one environment, one user batch). */
export function sliceError(stream: string, sliceKey: string, code = 'Forbidden', message = `Not collected: ${stream}/${sliceKey}`): Checkpoint {
  return { stream, slice_key: sliceKey, status: 'error', error_code: code, error_message: message };
}

let loaded: Promise<LoadedCheck[]> | null = null;

/**
 * Runs one built-in check by id against a context built by {@link checkContext}, as evaluation does: the check sees
 * only the inventory its metadata declares (`reads`, `paged`), so a test fails when a declaration is missing, and its
 * results pass through the engine's gap rule ({@link guardResults}).
 */
export async function runCheck(id: string, ctx: CheckContext): Promise<CheckResult[]> {
  loaded ??= loadChecks();
  const check = (await loaded).find((c) => c.metadata.id === id);
  if (!check) throw new Error(`no check ${id}`);
  const source = sources.get(ctx.inventory);
  if (!source) throw new Error('runCheck needs a context built by checkContext()');
  return guardResults(check.metadata, ctx, source, await check.run({ ...ctx, inventory: inventoryView(source, check.metadata) }));
}

/** The results of a check for one resource id. */
export function resultFor(results: CheckResult[], resourceId: string): CheckResult | undefined {
  return results.find((r) => r.resourceId === resourceId);
}
