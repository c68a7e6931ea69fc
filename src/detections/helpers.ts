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
  /** Event ids, oldest first. */
  ids: string[];
  /** CreationTime of the first and last event (ISO 8601 UTC). */
  from: string;
  to: string;
}

/**
 * Bursts of `operations` per user: for each user of the new events `fresh` (of those operations), every run of at
 * least `threshold(user)` of the user's stored events within `windowMs` that holds one of the new events. Stored
 * events around the new ones (±`windowMs`) are read through `find`, so a burst that straddles collection runs or pages
 * counts whole; runs do not overlap (the next starts after the last event of the previous one).
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
  const stored = await ctx.find({
    operations,
    from: new Date(Math.min(...times) - windowMs).toISOString(),
    to: new Date(Math.max(...times) + windowMs).toISOString(),
  });
  const users = new Set(mine.map((e) => e.userId!.toLowerCase()));
  const byUser = new Map<string, { t: number; id: string; time: string }[]>();
  for (const e of stored) {
    const user = e.userId?.toLowerCase();
    if (!user || !users.has(user)) continue;
    const list = byUser.get(user) ?? [];
    byUser.set(user, list);
    list.push({ t: Date.parse(e.creationTime), id: e.id, time: e.creationTime });
  }
  const out: UserBurst[] = [];
  for (const [user, list] of byUser) {
    list.sort((a, b) => a.t - b.t || a.id.localeCompare(b.id));
    const need = threshold(user);
    for (let i = 0, j = 0; j < list.length; j++) {
      while (list[j]!.t - list[i]!.t > windowMs) i++;
      if (j - i + 1 < need) continue;
      // Extend the run to every event still inside the window of its first one.
      let k = j;
      while (k + 1 < list.length && list[k + 1]!.t - list[i]!.t <= windowMs) k++;
      const run = list.slice(i, k + 1);
      if (run.some((r) => freshIds.has(r.id))) out.push({ user, ids: run.map((r) => r.id), from: run[0]!.time, to: run.at(-1)!.time });
      i = j = k + 1;
      if (i >= list.length) break;
      j--;
    }
  }
  return out;
}
