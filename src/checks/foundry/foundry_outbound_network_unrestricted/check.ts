import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails Foundry / Azure OpenAI accounts that may call out to any destination: `properties.restrictOutboundNetworkAccess`
 * not true (absent = unrestricted). When restricted, the allowed FQDNs are in the detail. Source: Microsoft Learn "Data
 * loss prevention for Azure AI services" (azure/ai-services/cognitive-services-data-loss-prevention).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'foundryAccounts', 'foundryAccount', (a) =>
    a.attrs.restrictOutboundNetworkAccess === true
      ? {
          status: 'pass',
          reason: `Outbound access is restricted to ${a.attrs.allowedFqdnList.length} allowed destination(s).`,
          detail: { allowedFqdnList: a.attrs.allowedFqdnList },
        }
      : {
          status: 'fail',
          reason: 'Outbound network access is not restricted: the resource can send data to any URL it is given.',
          detail: { restrictOutboundNetworkAccess: a.attrs.restrictOutboundNetworkAccess },
        },
  );
