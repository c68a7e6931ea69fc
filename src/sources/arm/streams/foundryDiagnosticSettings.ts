import { bool, obj, objects, str } from '../../../core/json.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import type { Stream } from '../../stream.ts';
import { accountChildStream, type AccountChildAttrs } from '../cognitiveServices.ts';

/**
 * `foundryDiagnosticSettings` (parent `foundryAccounts`, slice = account id): `GET {accountId}/providers/
 * Microsoft.Insights/diagnosticSettings?api-version=2021-05-01-preview` — where the account's resource logs (Audit,
 * RequestResponse, Trace, AzureOpenAIRequestUsage) and metrics are sent. An account read with no setting has no row:
 * checks tell "read, none" (slice read) from "not read" (errored slice). Permission: Reader
 * (which allows every read action, `Microsoft.Insights/diagnosticSettings/read` included).
 *
 * Sources: azure-rest-api-specs `Microsoft.Insights/preview/2021-05-01-preview/examples/getDiagnosticSetting.json`
 * and "Diagnostic Settings - List" (`{ value: [ { id, name, properties: { workspaceId, storageAccountId,
 * eventHubAuthorizationRuleId, logs: [ { category | categoryGroup, enabled } ], metrics } } ] }`);
 * learn.microsoft.com `/azure/azure-monitor/essentials/diagnostic-settings` (reading settings needs
 * `Microsoft.Insights/diagnosticSettings/read`), `/azure/role-based-access-control/built-in-roles` (Reader: all read actions).
 */

/** A diagnostic setting of an account. `id` = ARM id as returned. */
export interface FoundryDiagnosticSettingAttrs {
  accountId: string;
  subscriptionId: string;
  /** `properties.workspaceId` (Log Analytics), or null. */
  workspaceId: string | null;
  /** `properties.storageAccountId`, or null. */
  storageAccountId: string | null;
  /** `properties.eventHubAuthorizationRuleId`, or null. */
  eventHubAuthorizationRuleId: string | null;
  /** `properties.marketplacePartnerId`, or null. */
  marketplacePartnerId: string | null;
  /** Log categories or category groups (`allLogs`, `audit`) with `enabled: true`. */
  enabledLogs: string[];
}

/** api-version of `Microsoft.Insights/diagnosticSettings`. */
const DIAGNOSTIC_SETTINGS_API = '2021-05-01-preview';

/** The diagnostic settings of every collected account. */
export const foundryDiagnosticSettingsStream: Stream<'foundryDiagnosticSettings', EstateObject<FoundryDiagnosticSettingAttrs>> = accountChildStream(
  'foundryDiagnosticSettings',
  'providers/Microsoft.Insights/diagnosticSettings',
  (j): AccountChildAttrs<FoundryDiagnosticSettingAttrs> => {
    const p = obj(j.properties);
    return {
      workspaceId: str(p.workspaceId),
      storageAccountId: str(p.storageAccountId),
      eventHubAuthorizationRuleId: str(p.eventHubAuthorizationRuleId),
      marketplacePartnerId: str(p.marketplacePartnerId),
      enabledLogs: objects(p.logs)
        .filter((l) => bool(l.enabled) === true)
        .map((l) => str(l.category) ?? str(l.categoryGroup))
        .filter((c): c is string => c !== null),
    };
  },
  undefined,
  DIAGNOSTIC_SETTINGS_API,
);
