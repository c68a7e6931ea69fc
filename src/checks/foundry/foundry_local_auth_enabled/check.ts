import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/** Fails accounts that accept API keys (`disableLocalAuth` not true): keys bypass Entra ID, Conditional Access and per-user audit. */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'foundryAccounts', 'foundryAccount', (a) =>
    a.attrs.disableLocalAuth === true ? { status: 'pass', reason: null } : { status: 'fail', reason: 'API key (local) authentication is enabled.' },
  );
