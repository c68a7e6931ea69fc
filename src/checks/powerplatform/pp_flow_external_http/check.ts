import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';
import { dataverseHosts, hostUnder, MICROSOFT_SERVICE_HOSTS, organisationDomains } from '../shared.ts';

/**
 * Per cloud flow: fails a flow whose HTTP actions (`Http`, `HttpWebhook`, the HTTP connector) call a host outside
 * the organisation. Rule: a host is the organisation's when it equals or is under one of its domains — the domains
 * of members' user principal names (verified domains are not collected), the matching `{name}.sharepoint.com` hosts,
 * and the Dataverse hosts of its environments — or is a Microsoft service API host (Graph, ARM, sign-in, Power BI,
 * Power Platform). Shared Azure hosting suffixes (`azurewebsites.net`, …) are NOT the organisation's: they are reported
 * for review. A URL whose host is an expression is computed at run time and also fails (its destination cannot be
 * verified). Passes flows without HTTP actions or with only the organisation's hosts. Not evaluated: a flow with HTTP
 * actions whose definition was not read (`definitionRead: false`); unreadable environments; the tenant when the
 * `flows` or `users` stream did not run.
 * Source: Microsoft Learn "DLP connector classification" (HTTP connectors) and "Data policies — endpoint filtering".
 */
export const check: CheckFunction = (ctx) => {
  const internal = [...organisationDomains(ctx), ...dataverseHosts(ctx), ...MICROSOFT_SERVICE_HOSTS];
  return evaluateEstate(
    ctx,
    'flows',
    'flow',
    (flow) => {
      if (!flow.attrs.hasHttpAction) return { status: 'pass', reason: null };
      if (!flow.attrs.definitionRead)
        return { status: 'not_evaluated', reason: 'The flow has HTTP actions but its definition was not read: their URLs are unknown.' };
      const external = [...new Set(flow.attrs.httpTargets.filter((t) => t.host !== null && !hostUnder(t.host, internal)).map((t) => t.host!))];
      const dynamic = flow.attrs.httpTargets.filter((t) => t.host === null).map((t) => t.url);
      if (external.length === 0 && dynamic.length === 0)
        return { status: 'pass', reason: "HTTP actions call only the organisation's and Microsoft service hosts." };
      const parts = [
        external.length ? `calls host(s) outside the organisation: ${external.join(', ')}` : null,
        dynamic.length ? `${dynamic.length} URL(s) computed at run time` : null,
      ].filter(Boolean);
      return { status: 'fail', reason: `The flow ${parts.join('; ')}.`, detail: { externalHosts: external, dynamicUrls: dynamic.length } };
    },
    { requires: ['users'] },
  );
};
