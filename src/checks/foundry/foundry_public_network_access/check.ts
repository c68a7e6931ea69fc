import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails Foundry / Azure OpenAI accounts reachable from any network: `publicNetworkAccess` not `Disabled` and no
 * network rule set that denies by default (`networkAcls.defaultAction` not `Deny`). ARM's default is enabled.
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'foundryAccounts', 'foundryAccount', (a) =>
    a.attrs.publicNetworkAccess !== 'Disabled' && a.attrs.networkDefaultAction !== 'Deny'
      ? { status: 'fail', reason: `Public network access is ${a.attrs.publicNetworkAccess ?? 'enabled (default)'} with no deny-by-default network rules.` }
      : { status: 'pass', reason: null },
  );
