import { evaluateAgentComponents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/** Fails agents grounded on public websites (knowledge source type `publicWebsite`), naming the hosts. */
export const check: CheckFunction = (ctx) =>
  evaluateAgentComponents(ctx, (_agent, components) => {
    const web = components.filter((c) => c.attrs.kind === 'knowledge' && c.attrs.knowledge?.sourceType === 'publicWebsite');
    if (web.length === 0) return { status: 'pass', reason: null };
    const hosts = [...new Set(web.map((c) => c.attrs.knowledge?.host).filter((h): h is string => !!h))];
    return {
      status: 'fail',
      reason: `Grounded on public website(s): ${hosts.join(', ') || `${web.length} source(s)`}.`,
      detail: { components: web.map((c) => c.id), hosts },
    };
  });
