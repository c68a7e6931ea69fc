import { DATAVERSE_ACCESS_REASONS } from '../core/remediation.ts';
import type { SliceError } from '../sync/engine.ts';
import { wrap } from './output.ts';

/**
 * The errors of a collection run as a person reads them: grouped by where they happened (an environment, shown by
 * its display name, or the tenant), one entry per distinct problem with the streams it stopped and its fix — instead
 * of one line per errored slice with the raw upstream request.
 */

/** One distinct problem in one place. */
interface ErrorProblem {
  code: string;
  /** What went wrong, without the upstream URL. */
  reason: string;
  fix?: string;
  /** Streams it stopped, in run order. */
  streams: string[];
  /** Errored slices behind it (users, groups, environments…). */
  slices: number;
}

/** The problems of one place. */
export interface ErrorGroup {
  /** `environment` when the slices are environments, else `tenant` (tenant-wide streams, users, groups, …). */
  scope: 'environment' | 'tenant';
  /** Environment display name (its id when the run did not store one); the tenant's label otherwise. */
  name: string;
  /** Environment id (shown with --verbose). */
  id?: string;
  problems: ErrorProblem[];
}

/**
 * The reason of an error stored before runs kept one: the message without the request ("dataverse GET https://… answered
 * 403 …" → "dataverse answered 403 …") and without an inline "Fix: …".
 */
function reasonOf(e: Pick<SliceError, 'message' | 'reason'>): string {
  if (e.reason) return e.reason;
  return e.message
    .replace(/^(\w+) [A-Z]+ https?:\/\/\S+ answered/, '$1 answered')
    .replace(/https?:\/\/\S+/g, '(link)')
    .replace(/\s*Fix: [\s\S]*$/, '');
}

/**
 * Groups errored slices per place, then per problem (code and reason).
 * @param environments display names of the integration's environments by id (null when unknown)
 */
export function groupRunErrors(errors: readonly SliceError[], environments: ReadonlyMap<string, string | null>): ErrorGroup[] {
  const groups = new Map<string, ErrorGroup>();
  for (const e of errors) {
    const env = environments.has(e.slice) ? e.slice : undefined;
    const key = env ? `env:${env}` : 'tenant';
    let g = groups.get(key);
    if (!g) {
      g = env ? { scope: 'environment', name: environments.get(env) ?? env, id: env, problems: [] } : { scope: 'tenant', name: 'tenant', problems: [] };
      groups.set(key, g);
    }
    const reason = reasonOf(e);
    let p = g.problems.find((x) => x.code === e.code && x.reason === reason);
    if (!p) {
      const fix = e.fix ?? DATAVERSE_ACCESS_REASONS[e.code];
      p = { code: e.code, reason, ...(fix ? { fix } : {}), streams: [], slices: 0 };
      g.problems.push(p);
    }
    if (!p.streams.includes(e.stream)) p.streams.push(e.stream);
    p.slices++;
  }
  // Environments first (by name), the tenant last: the tenant's problems often follow from an environment's.
  return [...groups.values()].sort((a, b) => (a.scope === b.scope ? a.name.localeCompare(b.name) : a.scope === 'environment' ? -1 : 1));
}

/**
 * Lines for people: per place, per problem, the streams it stopped, the reason and the fix, wrapped to `width`.
 * Environment ids only with `verbose`; no upstream URLs.
 */
export function renderErrorGroups(groups: readonly ErrorGroup[], options: { verbose?: boolean; width: number }): string[] {
  const streams = new Set(groups.flatMap((g) => g.problems.flatMap((p) => p.streams)));
  if (streams.size === 0) return [];
  const lines = [`Errors in ${streams.size} stream${streams.size === 1 ? '' : 's'}:`];
  for (const g of groups) {
    lines.push(g.scope === 'environment' ? `  environment ${g.name}${options.verbose && g.id ? ` (${g.id})` : ''}` : '  tenant-wide');
    for (const p of g.problems) {
      const what = `${p.streams.length} stream${p.streams.length === 1 ? '' : 's'} (${p.streams.join(', ')})${p.slices > p.streams.length ? `, ${p.slices} slices` : ''}`;
      lines.push(`    ${wrap(`${what}: ${p.reason}`, options.width - 4, '      ')}`);
      if (p.fix) lines.push(`      fix: ${wrap(p.fix, options.width - 11, '           ')}`);
    }
  }
  return lines;
}
