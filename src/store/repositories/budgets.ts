import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely, Transaction } from 'kysely';
import {
  identityTier,
  limitsOf,
  type BudgetCharge,
  type BudgetLimit,
  type BudgetSettings,
  type ScopedLimit,
  type ThrottleBudget,
} from '../../platform/http/budget.ts';
import { dialectOf } from '../db.ts';
import type { Database } from '../schema.ts';

/**
 * Throttling budgets shared through the database: one token bucket per (scope, budget) row — scope a tenant id, or
 * `app:{client id}` for a limit per app across all tenants (see {@link appScopeId}) — read and updated in one transaction (`SELECT … FOR UPDATE` on
 * PostgreSQL, rows locked in key order; SQLite serialises writers), so any number of workers on any number of
 * machines together stay within what each documented limit allows, and a 429 seen by one slows the others.
 *
 * Pace (AIMD, as TCP congestion control and Dataverse's "ramp up gradually" guidance): each row keeps a
 * `rate_factor` in [{@link MIN_RATE_FACTOR}, 1] scaling the documented capacity and refill. A 429 halves it
 * (multiplicative decrease, once per throttling episode: while the row is still blocked by an earlier 429, later
 * ones only extend the block; and only when at least half the bucket was in use, see {@link throttle}), and each window's worth of units taken at the current pace gives back
 * {@link RECOVERY_PER_WINDOW} of the documented rate (additive increase: about five windows of sending without a 429
 * restore full pace from half, ten from the floor).
 */

/** Lowest pace after repeated 429s: 1/16 of the documented rate (Teams 30 rps → ≈ 1.9 rps). */
export const MIN_RATE_FACTOR = 1 / 16;
/** Pace regained per window's worth of units (at the current pace) taken without a 429, as a share of the documented rate. */
const RECOVERY_PER_WINDOW = 0.1;

/** One bucket an acquire draws on: its row key, the documented limit and the units to take. */
export interface BucketTake {
  scopeId: string;
  name: string;
  limit: BudgetLimit;
  cost: number;
}

/** A bucket's row, created full when absent, locked for the transaction (`FOR UPDATE` on PostgreSQL). */
async function lockedRow(trx: Transaction<Database>, postgres: boolean, take: BucketTake, nowMs: number) {
  await trx
    .insertInto('upstream_budgets')
    .values({ tenant_id: take.scopeId, api: take.name, tokens: take.limit.capacity, updated_ms: nowMs, blocked_until_ms: 0, rate_factor: 1 })
    .onConflict((oc) => oc.columns(['tenant_id', 'api']).doNothing())
    .execute();
  let q = trx.selectFrom('upstream_budgets').selectAll().where('tenant_id', '=', take.scopeId).where('api', '=', take.name);
  if (postgres) q = q.forUpdate();
  return q.executeTakeFirstOrThrow();
}

/**
 * Takes `cost` units from every bucket if all have them. Returns 0 when taken, else the milliseconds to wait before
 * trying again (nothing is taken then; the longest wait of the buckets, a block after a 429 included).
 */
export async function tryTake(db: Kysely<Database>, takes: BucketTake[], nowMs: number): Promise<number> {
  return (await tryLease(db, takes, nowMs, 1)).wait;
}

/**
 * Like {@link tryTake}, and when every bucket holds more than one request's units right now, takes up to `upTo`
 * requests' worth at once (`granted`), so a caller sending many requests while the budget is plentiful does not
 * write the store before each one (a lease; see {@link SharedBudget}). When units are scarce it takes one request's
 * worth, exactly as {@link tryTake}: pacing near a limit is unchanged.
 * @returns `wait` 0 and `granted` ≥ 1 when taken; else `wait` in milliseconds and `granted` 0.
 */
async function tryLease(db: Kysely<Database>, takes: BucketTake[], nowMs: number, upTo: number): Promise<{ wait: number; granted: number }> {
  const sorted = [...takes].sort((a, b) => (a.scopeId + a.name < b.scopeId + b.name ? -1 : 1));
  return db.transaction().execute(async (trx) => {
    const states: { take: BucketTake; tokens: number; factor: number; updated: number; wait: number; capacity: number }[] = [];
    for (const take of sorted) {
      const row = await lockedRow(trx, dialectOf(db) === 'postgres', take, nowMs);
      const factor = Number(row.rate_factor);
      const capacity = take.limit.capacity * factor;
      const rate = capacity / take.limit.windowSeconds / 1000; // units per millisecond
      const updated = Number(row.updated_ms);
      const tokens = Math.min(capacity, Number(row.tokens) + Math.max(0, nowMs - updated) * rate);
      const blockedFor = Math.max(0, Number(row.blocked_until_ms) - nowMs);
      const need = Math.min(take.cost, capacity);
      states.push({ take, tokens, factor, updated, capacity, wait: Math.max(blockedFor, tokens >= need ? 0 : Math.ceil((need - tokens) / rate)) });
    }
    const wait = Math.max(0, ...states.map((s) => s.wait));
    // Requests' worth every bucket can give now; a lease never takes more than a quarter of a bucket, nor more than
    // the bucket refills in a second (so units a lease leaves unused cost at most a second of the limit's rate).
    const granted =
      wait > 0
        ? 0
        : Math.max(
            1,
            Math.min(
              upTo,
              ...states.map((s) =>
                Math.floor(Math.min(s.tokens, s.capacity / 4, s.capacity / s.take.limit.windowSeconds) / Math.max(s.take.cost, Number.EPSILON)),
              ),
            ),
          );
    // Nothing taken: the rows stay as they are. Storing the refilled tokens would change nothing a later take computes
    // (a refill from the stored time to now, capped at the bucket's size, is the same in one step or two), and a
    // transaction that writes nothing costs no WAL frames: most takes of a paced stream are such waits.
    if (wait > 0) return { wait, granted };
    for (const s of states) {
      const { take } = s;
      // The whole cost is taken even above the bucket's size (a $batch of 20 at a reduced pace): the debt is paid
      // back before the next take, so the long-run rate holds.
      const taken = take.cost * granted;
      // Additive increase: a window's worth of units at the current pace, sent without a 429, buys back a tenth of
      // the documented rate (so recovery takes windows of time, whatever the pace: ≈ 10 windows from the floor).
      // At most a tenth per take: a take larger than the bucket (a batch at a low pace) is paid back over several
      // windows, and credits the pace only once.
      const factor = Math.min(1, s.factor + RECOVERY_PER_WINDOW * Math.min(1, taken / (take.limit.capacity * s.factor)));
      await trx
        .updateTable('upstream_budgets')
        .set({ tokens: s.tokens - taken, updated_ms: Math.max(nowMs, s.updated), rate_factor: factor })
        .where('tenant_id', '=', take.scopeId)
        .where('api', '=', take.name)
        .execute();
    }
    return { wait, granted };
  });
}

/**
 * A 429 on a bucket: blocks it until `untilMs` (never shortens an existing block) and halves its pace down to
 * {@link MIN_RATE_FACTOR} (its tokens with it) — unless it was still blocked (the same throttling episode), or less
 * than half of the bucket was in use: a 429 while Vigil sends well below its pace is not its pace's doing (another
 * app of the tenant, load on the service), and halving a pace it does not use would slow nothing; the block is then
 * what answers it, as Microsoft asks (honour `Retry-After`).
 */
async function throttle(db: Kysely<Database>, take: BucketTake, untilMs: number, nowMs: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await lockedRow(trx, dialectOf(db) === 'postgres', take, nowMs);
    const blockedUntil = Number(row.blocked_until_ms);
    const sameEpisode = blockedUntil > nowMs;
    const was = Number(row.rate_factor);
    const capacity = take.limit.capacity * was;
    const updated = Number(row.updated_ms);
    const tokens = Math.min(capacity, Number(row.tokens) + (Math.max(0, nowMs - updated) * capacity) / take.limit.windowSeconds / 1000);
    const busy = tokens < capacity / 2;
    const factor = sameEpisode || !busy ? was : Math.max(MIN_RATE_FACTOR, was / 2);
    await trx
      .updateTable('upstream_budgets')
      .set({
        blocked_until_ms: Math.max(blockedUntil, untilMs),
        rate_factor: factor,
        tokens: Math.min(tokens, take.limit.capacity * factor),
        updated_ms: Math.max(nowMs, updated),
      })
      .where('tenant_id', '=', take.scopeId)
      .where('api', '=', take.name)
      .execute();
  });
}

/** The stored pace of a bucket (1 = the documented rate; absent rows are at full pace). */
export async function rateFactor(db: Kysely<Database>, scopeId: string, name: string): Promise<number> {
  const row = await db.selectFrom('upstream_budgets').select('rate_factor').where('tenant_id', '=', scopeId).where('api', '=', name).executeTakeFirst();
  return row ? Number(row.rate_factor) : 1;
}

/**
 * The row key of a per-app limit: `app:{client id}` (40 characters, within the column's 64), or `*` for charges of no
 * app (sent outside an integration's context).
 */
function appScopeId(appId: string | undefined): string {
  return appId ? `app:${appId.toLowerCase()}` : '*';
}

/** Row key of a scoped limit for a charge. */
function bucketOf(limit: ScopedLimit, charge: BudgetCharge): BucketTake {
  const l = { capacity: limit.capacity, windowSeconds: limit.windowSeconds };
  if (limit.scope === 'app') return { scopeId: appScopeId(charge.appId), name: limit.name, limit: l, cost: charge.cost };
  if (limit.scope === 'environment') {
    // The environment's host in 12 hex digits keeps the name within the column's 32 characters.
    const host = createHash('sha256')
      .update(charge.environment ?? '')
      .digest('hex')
      .slice(0, 12);
    return { scopeId: charge.tenantId, name: `${limit.name}:${host}`, limit: l, cost: charge.cost };
  }
  return { scopeId: charge.tenantId, name: limit.name, limit: l, cost: charge.cost };
}

/**
 * Users of a tenant as its last collections stored them (the most of its integrations' counts, deleted users left
 * out), or `undefined` when none was collected yet: the size that picks the identity tier.
 */
export async function tenantUserCount(db: Kysely<Database>, tenantId: string): Promise<number | undefined> {
  const rows = await db
    .selectFrom('directory_users as u')
    .innerJoin('integrations as i', 'i.id', 'u.integration_id')
    .select(['u.integration_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('i.tenant_id', '=', tenantId)
    .where('u.deleted_at', 'is', null)
    .groupBy('u.integration_id')
    .execute();
  return rows.length === 0 ? undefined : Math.max(...rows.map((r) => Number(r.n)));
}

/**
 * Resolves when `turn` settles, or rejects with the signal's reason once it is aborted (a request waiting in line
 * stops with its run, not after the requests before it).
 */
function waitOrAbort(turn: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return turn;
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    void turn.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

/** Most requests' worth one store transaction reserves for a worker (see {@link SharedBudget.acquire}). */
const LEASE_REQUESTS = 10;
/** How long reserved units stay usable, milliseconds. */
const LEASE_MS = 1000;

/** How long a tenant's user count is reused before it is read again. */
const TENANT_SIZE_TTL_MS = 10 * 60_000;

/**
 * {@link ThrottleBudget} over the store. The identity tier of a tenant comes from `tenantUsers` (the users stored for
 * it by the last collection, read again every 10 minutes): until a first collection has stored them, the smallest
 * tier applies.
 */
export class SharedBudget implements ThrottleBudget {
  private readonly sizes = new Map<string, { users: number | undefined; at: number }>();
  /** Requests' worth taken ahead from the store and not yet sent, per set of buckets and cost, with their expiry. */
  private readonly leases = new Map<string, { left: number; expiresMs: number }>();
  /** The last request of this process in line for the store, per set of buckets and cost (see {@link acquire}). */
  private readonly lines = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly settings: BudgetSettings,
    private readonly tenantUsers: (tenantId: string) => Promise<number | undefined> = async () => undefined,
    private readonly now: () => number = Date.now,
    private readonly sleepMs: (ms: number, signal?: AbortSignal) => Promise<unknown> = (ms, signal) => sleep(ms, undefined, { signal }),
  ) {}

  private async buckets(charge: BudgetCharge): Promise<BucketTake[]> {
    let tier = identityTier(undefined);
    if (charge.service === 'graphIdentity' && this.settings.identityRuPer10s === undefined) {
      let size = this.sizes.get(charge.tenantId);
      if (!size || this.now() - size.at > TENANT_SIZE_TTL_MS) {
        size = { users: await this.tenantUsers(charge.tenantId), at: this.now() };
        this.sizes.set(charge.tenantId, size);
      }
      tier = identityTier(size.users);
    }
    return limitsOf(charge.service, this.settings, tier).map((l) => bucketOf(l, charge));
  }

  /**
   * Takes the charge's units from every limit of its service, waiting while any is spent. While the buckets are
   * plentiful a take reserves up to {@link LEASE_REQUESTS} requests' worth (never more than a quarter of a bucket, nor
   * more than it refills in a second) and
   * hands them out locally for {@link LEASE_MS}: one store transaction per several requests instead of one each (a
   * transaction per request was 15 % of an audit ingestion's CPU). Units a lease did not use expire with it — at most
   * a few requests' worth per worker, so together the workers still stay within each limit. A 429 on a bucket drops the
   * leases that draw on it.
   */
  async acquire(charge: BudgetCharge, signal?: AbortSignal): Promise<void> {
    const takes = await this.buckets(charge);
    const key = takes.map((t) => `${t.scopeId}\u0000${t.name}\u0000${t.cost}`).join('\u0001');
    if (this.fromLease(key)) return;
    // Requests of this process for the same buckets ask the store one after another, in the order they came: while
    // the buckets are short, the others would each wake at the same instant, and all but one find the units taken
    // (in a paced collection three takes in four were such misses, a store transaction each).
    const before = this.lines.get(key);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const line = before ? before.then(() => mine) : mine;
    this.lines.set(key, line);
    try {
      if (before) {
        await waitOrAbort(before, signal);
        if (this.fromLease(key)) return;
      }
      await this.take(takes, key, signal);
    } finally {
      done();
      if (this.lines.get(key) === line) this.lines.delete(key);
    }
  }

  /** Takes one request's worth from this process's unexpired lease on the buckets of `key`, if it holds one. */
  private fromLease(key: string): boolean {
    const lease = this.leases.get(key);
    if (lease && lease.left > 0 && this.now() < lease.expiresMs) {
      lease.left--;
      return true;
    }
    return false;
  }

  /** Takes the units from the store, waiting while any bucket is short; keeps the lease of what it took ahead. */
  private async take(takes: BucketTake[], key: string, signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this.now();
      const { wait, granted } = await tryLease(this.db, takes, now, LEASE_REQUESTS);
      if (wait === 0) {
        // Requests of one process reach here together (slices in flight): their grants add up, none is dropped.
        const held = this.leases.get(key);
        if (held && now < held.expiresMs) held.left += granted - 1;
        else if (granted > 1) this.leases.set(key, { left: granted - 1, expiresMs: now + LEASE_MS });
        return;
      }
      // An abort ends the wait with the signal's reason (the run's stop), not a bare AbortError.
      await this.sleepMs(Math.min(wait, 60_000), signal).catch((e: unknown) => {
        signal?.throwIfAborted();
        throw e;
      });
    }
  }

  /**
   * Penalizes the service's narrowest limit (the first: per tenant or environment), so a 429 in one tenant does not
   * slow the app's other tenants. A service whose only limit spans every tenant (Graph's global one, for the Graph
   * requests of no listed service) is not penalized: its 429s come from limits Vigil does not track (per user, per
   * resource), and the request waits alone.
   */
  async penalize(charge: BudgetCharge, seconds: number): Promise<boolean> {
    const now = this.now();
    const [first] = await this.buckets(charge);
    if (!first || first.scopeId === appScopeId(charge.appId)) return false;
    const bucket = `${first.scopeId}\u0000${first.name}\u0000`;
    for (const key of this.leases.keys()) if (key.split('\u0001').some((k) => k.startsWith(bucket))) this.leases.delete(key);
    await throttle(this.db, first, now + seconds * 1000, now);
    return true;
  }
}
