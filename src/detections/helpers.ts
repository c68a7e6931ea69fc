import type { AuditEvent } from '../core/audit.ts';
import type { DetectionContext } from './types.ts';

/** Helpers shared by detections. */

/** True when the user is a guest: UserType 10, or an Entra guest UPN (`…#EXT#@…`). */
export function isGuest(e: AuditEvent): boolean {
  return e.userType === 10 || /#EXT#/i.test(e.userId ?? '');
}

/** One user's events inside one window: what a bulk rule alerts on. */
export interface UserBurst {
  /** The user, lower case. */
  user: string;
  /** The id of the first event of the user's cluster the burst is in: the same burst has the same key. */
  key: string;
  /** Event ids, oldest first. */
  ids: string[];
  /** CreationTime of the first and last event (ISO 8601 UTC). */
  from: string;
  to: string;
}

/** How much further back `userBursts` reads when a user's activity runs up to the start of what it read. */
const LOOKBACK_MS = 24 * 3_600_000;

/**
 * Bursts of `operations` per user. The user's events are cut into clusters wherever two consecutive ones are more
 * than `windowMs` apart; a cluster holding one of the new events `fresh` and, within some `windowMs`, at least
 * `threshold(user)` events is one burst: the first such window's events, keyed by the cluster's first event (so every
 * page and run that meets the same cluster names the same burst, whichever part of it they read). Stored events
 * around the new ones are read through `find` (±`windowMs`, and 24 hours further back for a cluster that reaches the
 * start of what was read; a cluster chaining further back than that is cut there).
 */
export async function userBursts(
  ctx: Pick<DetectionContext, 'find'>,
  fresh: AuditEvent[],
  operations: string[],
  windowMs: number,
  threshold: (user: string) => number,
): Promise<UserBurst[]> {
  const mine = fresh.filter((e) => e.userId && operations.includes(e.operation ?? ''));
  if (mine.length === 0) return [];
  const freshIds = new Set(mine.map((e) => e.id));
  const times = mine.map((e) => Date.parse(e.creationTime));
  let from = Math.min(...times) - windowMs;
  const to = new Date(Math.max(...times) + windowMs).toISOString();
  const users = new Set(mine.map((e) => e.userId!.toLowerCase()));
  const read = async (a: number, b: string) =>
    (await ctx.find({ operations, from: new Date(a).toISOString(), to: b })).filter((e) => users.has(e.userId?.toLowerCase() ?? ''));
  let stored = await read(from, to);
  if (stored.some((e) => Date.parse(e.creationTime) < from + windowMs)) {
    const earlier = await read(from - LOOKBACK_MS, new Date(from).toISOString());
    const ids = new Set(stored.map((e) => e.id));
    stored = [...earlier.filter((e) => !ids.has(e.id)), ...stored];
    from -= LOOKBACK_MS;
  }
  const byUser = new Map<string, { t: number; id: string; time: string }[]>();
  for (const e of stored) {
    const user = e.userId!.toLowerCase();
    const list = byUser.get(user) ?? [];
    byUser.set(user, list);
    list.push({ t: Date.parse(e.creationTime), id: e.id, time: e.creationTime });
  }
  const out: UserBurst[] = [];
  for (const [user, list] of byUser) {
    list.sort((a, b) => a.t - b.t || a.id.localeCompare(b.id));
    const need = threshold(user);
    for (let start = 0; start < list.length;) {
      let end = start + 1;
      while (end < list.length && list[end]!.t - list[end - 1]!.t <= windowMs) end++;
      const cluster = list.slice(start, end);
      start = end;
      if (!cluster.some((r) => freshIds.has(r.id))) continue;
      for (let i = 0, j = 0; j < cluster.length; j++) {
        while (cluster[j]!.t - cluster[i]!.t > windowMs) i++;
        if (j - i + 1 < need) continue;
        let k = j;
        while (k + 1 < cluster.length && cluster[k + 1]!.t - cluster[i]!.t <= windowMs) k++;
        const run = cluster.slice(i, k + 1);
        out.push({ user, key: cluster[0]!.id, ids: run.map((r) => r.id), from: run[0]!.time, to: run.at(-1)!.time });
        break;
      }
    }
  }
  return out;
}
