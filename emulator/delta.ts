/**
 * Change tracking behind Microsoft Graph delta query (`users/delta`, `groups/delta`, served by graph.ts): a per-tenant
 * change sequence that every control-API add, update or remove of a user or group bumps, the sequence of each
 * object's last change (a removal leaves a tombstone), a membership log (group changes plus member additions and
 * removals, for rounds whose `$select` names `members`), and the opaque state tokens of `@odata.nextLink`
 * (`$skiptoken`) and `@odata.deltaLink` (`$deltatoken`).
 *
 * Only changes made through `EmulatorControl.add/update/remove` are tracked: direct mutation of `tenant.users`,
 * `tenant.groups` or `tenant.memberships` is seen by a full (initial) round but not by a round started from a
 * deltaLink. Sources also: /graph/delta-query-groups (members@delta).
 *
 * Sources: https://learn.microsoft.com/graph/delta-query-overview, /graph/api/user-delta, /graph/api/group-delta.
 */
import { randomUUID } from 'node:crypto';
import type { Tenant } from './tenant.ts';

/** The collections served with delta query. */
export type DeltaCollection = 'users' | 'groups';

/** Every `DeltaCollection`. */
export const DELTA_COLLECTIONS: readonly DeltaCollection[] = ['users', 'groups'];

/** The last change of one object: its id (as stored), the change sequence, whether it was a removal. */
export interface DirectoryChange {
  id: string;
  seq: number;
  removed: boolean;
}

/**
 * One entry of the membership-aware group log (`groups/delta` with `members` in `$select`): either a change of the
 * group itself (`memberId` null; `removed` = the group was deleted) or one member added to or removed from it.
 * `kind` is the member's `@odata.type` suffix, kept so a removal of a deleted object still names its type.
 */
export interface MembershipChange {
  groupId: string;
  memberId: string | null;
  kind: 'user' | 'group' | 'servicePrincipal' | 'device' | null;
  seq: number;
  removed: boolean;
}

interface TenantChanges {
  /** Sequence of the latest change (0: none since the tenant was first seen). */
  seq: number;
  /**
   * Group changes and member changes in one log (`g:{groupId}` / `m:{groupId}/{memberId}`, lower case), re-inserted
   * on every change so iteration order is ascending `seq`: what a membership-tracking delta round walks.
   */
  membership: Map<string, MembershipChange>;
  /** Changes with every `expire()`; tokens carrying another epoch answer 410. */
  epoch: string;
  /** Lower-case id → last change. Re-inserted on every change, so iteration order is ascending `seq`. */
  byCollection: Record<DeltaCollection, Map<string, DirectoryChange>>;
}

/**
 * Per-tenant change log of users and groups (held outside the plain-data `Tenant`, keyed by the live tenant object:
 * a tenant served again as a new object starts a new log, and its old tokens answer 410).
 */
export class DirectoryChanges {
  readonly #byTenant = new WeakMap<Tenant, TenantChanges>();

  #state(tenant: Tenant): TenantChanges {
    let s = this.#byTenant.get(tenant);
    if (!s) {
      s = { seq: 0, epoch: newEpoch(), byCollection: { users: new Map(), groups: new Map() }, membership: new Map() };
      this.#byTenant.set(tenant, s);
    }
    return s;
  }

  /** Records an add or update (`removed` false) or a removal (tombstone) of an object; returns the new sequence. */
  record(tenant: Tenant, collection: DeltaCollection, id: string, removed = false): number {
    const s = this.#state(tenant);
    s.seq += 1;
    const map = s.byCollection[collection];
    const key = id.toLowerCase();
    map.delete(key);
    map.set(key, { id, seq: s.seq, removed });
    if (collection === 'groups') {
      s.membership.delete(`g:${key}`);
      s.membership.set(`g:${key}`, { groupId: id, memberId: null, kind: null, seq: s.seq, removed });
    }
    return s.seq;
  }

  /**
   * Records a member added to (`removed` false) or removed from a group, for `groups/delta` rounds that select
   * `members` (`members@delta`). Returns the new sequence. Group property changes are not implied: a round without
   * `members` does not see it.
   */
  recordMember(tenant: Tenant, groupId: string, memberId: string, kind: MembershipChange['kind'], removed: boolean): number {
    const s = this.#state(tenant);
    s.seq += 1;
    const key = `m:${groupId.toLowerCase()}/${memberId.toLowerCase()}`;
    s.membership.delete(key);
    s.membership.set(key, { groupId, memberId, kind, seq: s.seq, removed });
    return s.seq;
  }

  /** Membership-log entries with `after < seq ≤ upTo`, ascending by `seq`, at most `limit` of them. */
  membershipChanges(tenant: Tenant, after: number, upTo: number, limit = Number.POSITIVE_INFINITY): MembershipChange[] {
    const out: MembershipChange[] = [];
    for (const c of this.#state(tenant).membership.values()) {
      if (c.seq <= after) continue;
      if (c.seq > upTo || out.length >= limit) break;
      out.push(c);
    }
    return out;
  }

  /** The tenant's current change sequence. */
  sequence(tenant: Tenant): number {
    return this.#state(tenant).seq;
  }

  /** The tenant's current token epoch (part of every token issued now). */
  epoch(tenant: Tenant): string {
    return this.#state(tenant).epoch;
  }

  /** Invalidates every delta and skip token issued so far for the tenant (they answer 410 `syncStateNotFound`). */
  expire(tenant: Tenant): void {
    this.#state(tenant).epoch = newEpoch();
  }

  /** Last changes with `after < seq ≤ upTo`, ascending by `seq`, at most `limit` of them. */
  changes(tenant: Tenant, collection: DeltaCollection, after: number, upTo: number, limit = Number.POSITIVE_INFINITY): DirectoryChange[] {
    const out: DirectoryChange[] = [];
    for (const c of this.#state(tenant).byCollection[collection].values()) {
      if (c.seq <= after) continue;
      if (c.seq > upTo || out.length >= limit) break;
      out.push(c);
    }
    return out;
  }
}

function newEpoch(): string {
  return randomUUID().slice(0, 8);
}

/** What every delta state token carries. */
interface DeltaTokenBase {
  collection: DeltaCollection;
  /** Tenant id (lower case) the token was issued for. */
  tenantId: string;
  /** `DirectoryChanges.epoch` at issue time. */
  epoch: string;
  /** `$select` of the round's initial request (null: the default property set). */
  select: string[] | null;
  /** `$top` of the initial request (null: none). */
  pageSize: number | null;
}

/**
 * The state a token stands for:
 * - `delta` (`$deltatoken` of a deltaLink): every change up to `seq` has been delivered;
 * - `full` (`$skiptoken` inside an initial round): keyset cursor over the live list (`index` of the next element,
 *   `last` id of the previous one; `members`: entries of that element's `members@delta` already sent, when a large
 *   group is split over pages); the deltaLink at the end covers changes up to `upTo`;
 * - `changes` (`$skiptoken` inside a round started from a deltaLink): changes with `after < seq ≤ upTo` remain.
 */
export type DeltaToken =
  | (DeltaTokenBase & { kind: 'delta'; seq: number })
  | (DeltaTokenBase & { kind: 'full'; upTo: number; index: number; last: string; members?: number })
  | (DeltaTokenBase & { kind: 'changes'; after: number; upTo: number });

/** Encodes a token as opaque base64url JSON (`v` 1; short keys). */
export function encodeDeltaToken(t: DeltaToken): string {
  const o: Record<string, unknown> = { v: 1, k: t.kind, c: t.collection, t: t.tenantId, e: t.epoch, sel: t.select, n: t.pageSize };
  if (t.kind === 'delta') o.s = t.seq;
  else if (t.kind === 'full') Object.assign(o, { u: t.upTo, i: t.index, l: t.last, ...(t.members ? { m: t.members } : {}) });
  else Object.assign(o, { a: t.after, u: t.upTo });
  return Buffer.from(JSON.stringify(o), 'utf8').toString('base64url');
}

const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** Decodes a token from `encodeDeltaToken`; null when it is malformed. */
export function decodeDeltaToken(token: string): DeltaToken | null {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) return null;
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof o !== 'object' || o === null || o.v !== 1) return null;
  if (!DELTA_COLLECTIONS.includes(o.c as DeltaCollection) || typeof o.t !== 'string' || typeof o.e !== 'string') return null;
  const sel = o.sel;
  if (sel !== null && (!Array.isArray(sel) || sel.length === 0 || sel.some((p) => typeof p !== 'string'))) return null;
  const n = o.n;
  if (n !== null && (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 999)) return null;
  const base: DeltaTokenBase = { collection: o.c as DeltaCollection, tenantId: o.t, epoch: o.e, select: sel as string[] | null, pageSize: n };
  switch (o.k) {
    case 'delta':
      return isSeq(o.s) ? { ...base, kind: 'delta', seq: o.s } : null;
    case 'full':
      if (o.m !== undefined && !isSeq(o.m)) return null;
      return isSeq(o.u) && isSeq(o.i) && typeof o.l === 'string'
        ? { ...base, kind: 'full', upTo: o.u, index: o.i, last: o.l, ...(o.m ? { members: o.m as number } : {}) }
        : null;
    case 'changes':
      return isSeq(o.a) && isSeq(o.u) && o.a <= o.u ? { ...base, kind: 'changes', after: o.a, upTo: o.u } : null;
    default:
      return null;
  }
}
