import { evaluateEstate } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Per cloud flow: fails a flow started by an HTTP request trigger (`Request` of kind `Http` in the definition
 * summary, attrs `hasHttpTrigger`): its callback URL carries a SAS signature, so anyone holding the URL can start
 * it unless the trigger restricts callers to the tenant or named users — a setting the inventory does not collect,
 * so every such flow fails for review (the state, e.g. `Stopped`, is in the reason). Passes other flows; not
 * evaluated for unreadable environments or when the `flows` stream did not run.
 * Source: Microsoft Learn "Add OAuth authentication for HTTP request triggers" (power-automate/oauth-authentication)
 * and "Receive and respond to inbound HTTPS calls" (azure/connectors/connectors-native-reqres).
 */
export const check: CheckFunction = (ctx) =>
  evaluateEstate(ctx, 'flows', 'flow', (flow) =>
    flow.attrs.hasHttpTrigger
      ? {
          status: 'fail',
          reason: `Started by an HTTP request trigger: anyone with its URL can run it (state ${flow.attrs.state ?? 'unknown'}).`,
          detail: { state: flow.attrs.state },
        }
      : { status: 'pass', reason: null },
  );
