import type { Command } from 'commander';
import { enableProtection, protectionEndpointOf, protectionEvents } from '../../protection/endpoints.ts';
import type { CommandHost } from '../host.ts';
import { parseLimit } from '../input.ts';
import { print, printJson, table } from '../output.ts';
import { operatorScope, ORGANIZATION_OBJECT_HELP } from '../scope.ts';

/** `vigil protection enable|events`: Copilot Studio runtime protection (the threat-detection webhook, issue 19). */
export function registerProtection(program: Command, host: CommandHost): void {
  const protection = program.command('protection').description("Runtime protection: Vigil as Copilot Studio's external threat-detection provider");
  protection
    .command('enable <integration>')
    .description("Create the integration's threat-detection endpoint and print the base URL to enter in the Power Platform admin center")
    .requiredOption('--app-id <guid>', "the Application (client) ID of the tenant's single-tenant Entra app whose tokens Copilot Studio presents")
    .option('--audience <value...>', 'accepted token audiences (default: the app id, api://<app id> and the base URL)')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, named: string, opts: { appId: string; audience?: string[]; organization?: string; json?: boolean }) => {
        const integrationId = (await operatorScope(rt.db, { integration: named, organization: opts.organization })).integrationId!;
        const endpoint = await enableProtection(rt.db, {
          integrationId,
          appId: opts.appId,
          ...(opts.audience ? { audiences: opts.audience } : {}),
          apiUrl: rt.config.region.apiUrl ?? null,
        });
        if (opts.json) return printJson(endpoint);
        print(
          `Protection endpoint ${endpoint.id} created for application ${endpoint.appId}.`,
          endpoint.baseUrl
            ? `Base URL (enter it in Power Platform admin center > Security > Threat detection, and as the app's Application ID URI): ${endpoint.baseUrl}`
            : `Base URL: <VIGIL_API_URL>/protection/${endpoint.id} (set VIGIL_API_URL to this deployment's public HTTPS address to see it whole).`,
          `Accepted audiences: ${endpoint.audiences.join(', ')}`,
        );
      }),
    );
  protection
    .command('show <integration>')
    .description("The integration's endpoint and what Copilot Studio did with it: validated, analyses, refused calls and why")
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, named: string, opts: { organization?: string; json?: boolean }) => {
        const integrationId = (await operatorScope(rt.db, { integration: named, organization: opts.organization })).integrationId!;
        const endpoint = await protectionEndpointOf(rt.db, integrationId, rt.config.region.apiUrl ?? null);
        if (opts.json) return printJson(endpoint);
        if (!endpoint) return print(`Runtime protection is not enabled for ${named} (vigil protection enable ${named} --app-id <guid>).`);
        print(
          `Endpoint:        ${endpoint.id}`,
          `Base URL:        ${endpoint.baseUrl ?? `<VIGIL_API_URL>/protection/${endpoint.id}`}`,
          `Application:     ${endpoint.appId}`,
          `Audiences:       ${endpoint.audiences.join(', ')}`,
          `Validated:       ${endpoint.validatedAt ?? 'never (save the provider in the Power Platform admin center)'}`,
          `Analyses:        ${endpoint.lastAnalysisAt ? `first ${endpoint.firstAnalysisAt}, last ${endpoint.lastAnalysisAt}` : 'none yet'}`,
          `Refused calls:   ${endpoint.authFailures}${endpoint.lastAuthFailureAt ? ` (last ${endpoint.lastAuthFailureAt}: ${endpoint.lastAuthFailureReason})` : ''}`,
        );
      }),
    );
  protection
    .command('events <integration>')
    .description('Tool calls Copilot Studio asked about and what Vigil answered, newest first')
    .option('--conversation <id>', 'only this conversation')
    .option('--limit <n>', 'at most this many', '50')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, named: string, opts: { conversation?: string; limit?: string; organization?: string; json?: boolean }) => {
        const integrationId = (await operatorScope(rt.db, { integration: named, organization: opts.organization })).integrationId!;
        const limit = parseLimit(opts.limit, 50);
        const steps = await protectionEvents(rt.db, integrationId, {
          ...(opts.conversation !== undefined ? { conversationId: opts.conversation } : {}),
          limit,
        });
        if (opts.json) return printJson(steps);
        if (steps.length === 0) return print('No tool calls recorded yet (is the endpoint set up? see `vigil protection enable`).');
        const outcome = (s: (typeof steps)[number]) => (s.blockAction ? 'BLOCKED' : s.wouldBlock ? 'would block' : s.timedOut ? 'timeout' : 'allowed');
        print(
          table(
            [
              ['TIME', 'OUTCOME', 'AGENT', 'TOOL', 'CONVERSATION', 'REASON', 'MS'],
              ...steps.map((s) => [
                s.receivedAt,
                outcome(s),
                s.agentName ?? s.agentId ?? '-',
                s.toolName ?? s.toolId ?? '-',
                s.conversationId ?? '-',
                s.reason,
                String(s.latencyMs),
              ]),
            ],
            { shrink: [5, 4] },
          ),
        );
      }),
    );
}
