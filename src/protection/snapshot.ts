import type { AgentComponentAttrs } from '../sources/dataverse/streams/agentComponents.ts';
import type { DlpPolicyAttrs } from '../sources/powerPlatform/streams/dlpPolicies.ts';
import type { Executor } from '../store/db.ts';
import { listAgents, listEnvironments, listEstateObjects } from '../store/repositories/inventory.ts';
import { memberAddressPages } from '../store/repositories/protection.ts';
import { latestFinishedRun } from '../store/repositories/runs.ts';
import type { Logger } from '../platform/log/index.ts';
import type { AgentSnapshot, AgentToolSnapshot, ProtectionSnapshot } from './types.ts';

/**
 * The inventory snapshot detectors judge a tool execution against (types.ts {@link ProtectionSnapshot}), built from what
 * the last collections stored: agents (`agents` stream) with their tools and knowledge hosts (`agentComponents`), the
 * tenant's e-mail domains (member users' UPN and mail, `users`), and the connectors in the Business group of DLP
 * policies per environment (`dlpPolicies`; AllEnvironments and ExceptEnvironments policies apply tenant-wide under '*'
 * and to every collected environment not excepted, respectively). Built off the hot path and cached per integration.
 *
 * Sources: https://learn.microsoft.com/power-platform/admin/wp-data-loss-prevention (Business / Non-business groups,
 * environment scope), the streams' own documentation (src/sources/…).
 */

/** Tool components: connector and flow actions, MCP servers, child and connected agents. */
const TOOL_KINDS = new Set(['action', 'mcp', 'agent']);

const lower = (s: string | null | undefined): string | null => (s ? s.toLowerCase() : null);

/** The e-mail domain of an address or UPN, lower case, or null. */
function domainOf(address: string | null): string | null {
  if (!address) return null;
  const at = address.lastIndexOf('@');
  if (at < 0 || at === address.length - 1) return null;
  return address.slice(at + 1).toLowerCase();
}

/** A tool of an agent as detectors see it. */
function toolOf(a: AgentComponentAttrs): AgentToolSnapshot {
  return {
    schemaName: a.schemaName ?? '',
    kind: a.kind,
    actionKind: a.tool?.actionKind ?? null,
    connectorId: lower(a.tool?.connectorId),
    customConnector: a.tool?.customConnector ?? null,
    operationId: a.tool?.operationId ?? null,
    serverHost: lower(a.tool?.serverHost),
    httpHosts: (a.tool?.httpHosts ?? []).map((h) => h.toLowerCase()),
  };
}

/**
 * Builds the snapshot of an integration from the store.
 * @returns an empty snapshot (`collectedAt` null) for an integration never collected.
 */
export async function buildProtectionSnapshot(db: Executor, integrationId: string): Promise<ProtectionSnapshot> {
  const [run, agents, components, environments, dlp] = await Promise.all([
    latestFinishedRun(db, integrationId),
    listAgents(db, integrationId),
    listEstateObjects<AgentComponentAttrs>(db, integrationId, 'agentComponents'),
    listEnvironments(db, integrationId),
    listEstateObjects<DlpPolicyAttrs>(db, integrationId, 'dlpPolicies'),
  ]);
  const byAgent = new Map<string, AgentSnapshot>();
  for (const a of agents) {
    byAgent.set(a.id.toLowerCase(), {
      id: a.id.toLowerCase(),
      environmentId: a.environment_id,
      name: a.name,
      schemaName: a.schema_name,
      tools: [],
      knowledgeHosts: [],
    });
  }
  for (const c of components) {
    const bot = c.attrs.botId?.toLowerCase();
    const agent = bot ? byAgent.get(bot) : undefined;
    if (!agent || c.attrs.stateCode === 1) continue;
    if (TOOL_KINDS.has(c.attrs.kind)) agent.tools.push(toolOf(c.attrs));
    const host = c.attrs.knowledge?.host;
    if (c.attrs.kind === 'knowledge' && host && !agent.knowledgeHosts.includes(host.toLowerCase())) agent.knowledgeHosts.push(host.toLowerCase());
  }
  const tenantDomains = new Set<string>();
  for await (const page of memberAddressPages(db, integrationId)) {
    for (const u of page) {
      for (const d of [domainOf(u.upn), domainOf(u.mail)]) if (d) tenantDomains.add(d);
    }
  }
  const businessConnectors = new Map<string, Set<string>>();
  const add = (env: string, connectors: string[]) => {
    let set = businessConnectors.get(env);
    if (!set) businessConnectors.set(env, (set = new Set()));
    for (const c of connectors) set.add(c.toLowerCase());
  };
  for (const p of dlp) {
    const business = p.attrs.business ?? [];
    const type = p.attrs.environmentType ?? 'AllEnvironments';
    const listed = new Set((p.attrs.environments ?? []).map((e) => e.toLowerCase()));
    if (type === 'OnlyEnvironments') for (const e of listed) add(e, business);
    else if (type === 'ExceptEnvironments') {
      for (const e of environments) if (!listed.has(e.id.toLowerCase())) add(e.id.toLowerCase(), business);
    } else add('*', business);
  }
  return { collectedAt: run?.finished_at ?? null, agents: byAgent, tenantDomains, businessConnectors };
}

/** Options of {@link SnapshotCache}. */
export interface SnapshotCacheOptions {
  /** Age after which a snapshot is rebuilt in the background, milliseconds. @default 60000 */
  maxAgeMs?: number;
  now?: () => number;
  logger?: Logger;
  /** Builds a snapshot (default {@link buildProtectionSnapshot}). */
  build?: (db: Executor, integrationId: string) => Promise<ProtectionSnapshot>;
}

interface Entry {
  snapshot: ProtectionSnapshot;
  builtAt: number;
  refreshing: Promise<void> | null;
}

/**
 * Snapshots per integration, stale-while-revalidate: the first call waits for the build; later calls get the cached
 * snapshot at once and, once it is older than `maxAgeMs`, start one background rebuild (a failed rebuild keeps the old
 * snapshot and is logged). Concurrent first calls share one build.
 */
export class SnapshotCache {
  readonly #entries = new Map<string, Entry>();
  readonly #first = new Map<string, Promise<ProtectionSnapshot>>();
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  readonly #build: (db: Executor, integrationId: string) => Promise<ProtectionSnapshot>;

  constructor(
    private readonly db: Executor,
    private readonly options: SnapshotCacheOptions = {},
  ) {
    this.#maxAgeMs = options.maxAgeMs ?? 60_000;
    this.#now = options.now ?? Date.now;
    this.#build = options.build ?? buildProtectionSnapshot;
  }

  /** The integration's snapshot (see the class documentation for freshness). */
  async get(integrationId: string): Promise<ProtectionSnapshot> {
    const entry = this.#entries.get(integrationId);
    if (entry) {
      if (!entry.refreshing && this.#now() - entry.builtAt >= this.#maxAgeMs) {
        entry.refreshing = this.#build(this.db, integrationId)
          .then((snapshot) => {
            this.#entries.set(integrationId, { snapshot, builtAt: this.#now(), refreshing: null });
          })
          .catch((e: unknown) => {
            entry.refreshing = null;
            entry.builtAt = this.#now();
            this.options.logger?.warn(
              { integrationId, err: { message: (e as Error).message } },
              'protection snapshot refresh failed; the previous one is kept',
            );
          });
      }
      return entry.snapshot;
    }
    let pending = this.#first.get(integrationId);
    if (!pending) {
      pending = this.#build(this.db, integrationId)
        .then((snapshot) => {
          this.#entries.set(integrationId, { snapshot, builtAt: this.#now(), refreshing: null });
          return snapshot;
        })
        .finally(() => this.#first.delete(integrationId));
      this.#first.set(integrationId, pending);
    }
    return pending;
  }

  /** Waits for background rebuilds in flight (tests, shutdown). */
  async settle(): Promise<void> {
    await Promise.all([...this.#entries.values()].map((e) => e.refreshing));
  }
}
