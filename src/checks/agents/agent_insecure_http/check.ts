import { evaluateAgentComponents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails agents whose topics or tools send HTTP requests (`HttpRequestAction`) over plain `http://` or to a
 * non-standard port (anything but 443 for HTTPS). URLs built with Power Fx expressions cannot be judged and are
 * left out; an agent whose only HTTP calls are such expressions passes with that said.
 */
export const check: CheckFunction = (ctx) =>
  evaluateAgentComponents(ctx, (_agent, components) => {
    const origins = [...new Set(components.flatMap((c) => [...(c.attrs.topic?.httpOrigins ?? []), ...(c.attrs.tool?.httpOrigins ?? [])]))].sort();
    const insecure = origins.filter((o) => o.startsWith('http://') || /:\d+$/.test(o));
    if (insecure.length)
      return { status: 'fail', reason: `HTTP requests to ${insecure.join(', ')} (plain HTTP or a non-standard port).`, detail: { origins: insecure } };
    const dynamic = components.reduce((n, c) => n + (c.attrs.topic?.dynamicHttpUrls ?? 0), 0);
    return { status: 'pass', reason: dynamic ? `${dynamic} HTTP request(s) use URLs built at run time and were not judged.` : null };
  });
