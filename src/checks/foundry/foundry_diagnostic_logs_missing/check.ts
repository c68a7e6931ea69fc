import { sliceGapVerdict, streamsNotEvaluated } from '../../helpers.ts';
import type { CheckFunction, CheckResult } from '../../types.ts';

/**
 * Fails Foundry / Azure OpenAI accounts that send their resource logs nowhere: no diagnostic setting
 * (`Microsoft.Insights/diagnosticSettings` on the account), or settings with no log category enabled or no
 * destination (Log Analytics workspace, storage account, event hub, partner). Not evaluated — never a pass — for the
 * tenant when the accounts or diagnostic settings stream did not run, and for an account whose settings could not be
 * read (errored slice, e.g. 403 AuthorizationFailed). Source: Microsoft Learn "Diagnostic settings in Azure Monitor"
 * (azure/azure-monitor/essentials/diagnostic-settings); "Monitor Azure OpenAI" (azure/ai-foundry/openai/how-to/monitor-openai).
 */
export const check: CheckFunction = (ctx) => {
  const notEvaluated = streamsNotEvaluated(ctx, ['foundryAccounts', 'foundryDiagnosticSettings']);
  if (notEvaluated) return notEvaluated;
  const settings = ctx.inventory.estate('foundryDiagnosticSettings');
  const results: CheckResult[] = [];
  for (const a of ctx.inventory.estate('foundryAccounts')) {
    const base = { resourceType: 'foundryAccount' as const, resourceId: a.id, resourceName: a.name };
    const gap = sliceGapVerdict(ctx, 'foundryDiagnosticSettings', a.id, "The account's diagnostic settings");
    if (gap) {
      results.push({ ...base, ...gap });
      continue;
    }
    const mine = settings.filter((s) => s.sliceKey.toLowerCase() === a.id.toLowerCase());
    const logging = mine.filter(
      (s) =>
        s.attrs.enabledLogs.length > 0 &&
        (s.attrs.workspaceId || s.attrs.storageAccountId || s.attrs.eventHubAuthorizationRuleId || s.attrs.marketplacePartnerId),
    );
    const detail = { settings: mine.map((s) => s.name), logs: [...new Set(logging.flatMap((s) => s.attrs.enabledLogs))] };
    if (mine.length === 0)
      results.push({ ...base, status: 'fail', reason: "No diagnostic setting: the account's audit and request logs are not kept.", detail });
    else if (logging.length === 0)
      results.push({
        ...base,
        status: 'fail',
        reason: 'The diagnostic settings send no resource log category to any destination (metrics only, or none enabled).',
        detail,
      });
    else
      results.push({
        ...base,
        status: 'pass',
        reason: `Resource logs (${detail.logs.join(', ')}) are sent by ${logging.length} diagnostic setting(s).`,
        detail,
      });
  }
  return results;
};
