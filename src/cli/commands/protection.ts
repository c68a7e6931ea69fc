import type { Command } from 'commander';
import { VigilError } from '../../core/errors.ts';
import type { AgentStep, TranscriptTurn } from '../../contract/protection.ts';
import { protectionEndpointOf } from '../../protection/endpoints.ts';
import {
  conversationTimelineOf,
  enableProtectionFor,
  protectionPoliciesOf,
  protectionSetupOf,
  protectionStepsPage,
  setProtectionPolicyFor,
  transcriptConversationsOf,
} from '../../reporting/protection.ts';
import type { CommandHost } from '../host.ts';
import { parseLimit } from '../input.ts';
import { print, printJson, table } from '../output.ts';
import { operatorScope, ORGANIZATION_OBJECT_HELP } from '../scope.ts';

/** Options of `vigil protection policy set`. */
interface PolicySetOptions {
  environment?: string;
  agent?: string;
  mode?: string;
  detector?: string[];
  allowMcp?: string[];
  allowConnector?: string[];
  allowHost?: string[];
  internalDomain?: string[];
  deadlineMs?: string;
  onTimeout?: string;
  by?: string;
  organization?: string;
  json?: boolean;
}

/**
 * The policy fields the flags name, for the use case to validate (it names the field; the messages below name the flag).
 * @throws VigilError `invalid-input` for a `--detector` or `--deadline-ms` that cannot be read.
 */
function policyChanges(o: PolicySetOptions): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  if (o.mode !== undefined) changes.mode = o.mode;
  if (o.detector) {
    const detectors: Record<string, { action: string; threshold?: number }> = {};
    for (const d of o.detector) {
      const m = /^([a-z_]+)=([a-z]+)(?:@([0-9.]+))?$/.exec(d.trim());
      if (!m)
        throw new VigilError('INVALID_INPUT', `--detector '${d}' is not <id>=<action>[@<threshold>].`, {
          field: '--detector',
          remediation: 'Write e.g. --detector prompt_injection=block@0.8 jailbreak=alert.',
        });
      detectors[m[1]!] = { action: m[2]!, ...(m[3] !== undefined ? { threshold: Number(m[3]) } : {}) };
    }
    changes.detectors = detectors;
  }
  const allow: Record<string, string[]> = {};
  if (o.allowMcp) allow.mcpServers = o.allowMcp;
  if (o.allowConnector) allow.connectors = o.allowConnector;
  if (o.allowHost) allow.hosts = o.allowHost;
  if (o.internalDomain) allow.internalDomains = o.internalDomain;
  if (Object.keys(allow).length) changes.allow = allow;
  if (o.deadlineMs !== undefined) {
    const ms = Number(o.deadlineMs);
    if (!Number.isInteger(ms))
      throw new VigilError('INVALID_INPUT', `--deadline-ms '${o.deadlineMs}' is not a whole number of milliseconds.`, {
        field: '--deadline-ms',
        remediation: 'Give e.g. --deadline-ms 250.',
      });
    changes.deadlineMs = ms;
  }
  if (o.onTimeout !== undefined) changes.onTimeout = o.onTimeout;
  if (Object.keys(changes).length === 0)
    throw new VigilError('INVALID_INPUT', 'Nothing to set.', {
      field: '--mode',
      remediation: 'Name at least one of --mode, --detector, --allow-*, --internal-domain, --deadline-ms, --on-timeout.',
    });
  return changes;
}

/** `vigil protection enable|setup|show|events|policy`: Copilot Studio runtime protection (the threat-detection webhook, issue 19). */
export function registerProtection(program: Command, host: CommandHost): void {
  const protection = program.command('protection').description("Runtime protection: Vigil as Copilot Studio's external threat-detection provider");
  protection
    .command('enable <integration>')
    .description(
      "Create the integration's threat-detection endpoint and print its base URL (the Entra application's ID URI and the endpoint link of the admin center); again with --app-id once the application exists",
    )
    .option('--app-id <guid>', "the Application (client) ID of the tenant's single-tenant Entra app whose tokens Copilot Studio presents")
    .option('--audience <value...>', 'accepted token audiences (default: the app id, api://<app id> and the base URL)')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, named: string, opts: { appId?: string; audience?: string[]; organization?: string; json?: boolean }) => {
        const { caller, integrationId } = await operatorScope(rt.db, { integration: named, organization: opts.organization });
        const endpoint = await enableProtectionFor(
          rt.db,
          caller,
          integrationId!,
          { appId: opts.appId, audiences: opts.audience },
          rt.config.region.apiUrl ?? null,
        );
        if (opts.json) return printJson(endpoint);
        print(
          `Protection endpoint ${endpoint.id} of ${named}.`,
          endpoint.baseUrl
            ? `Base URL (the application's Application ID URI, and the endpoint link in Power Platform admin center > Security > Threat detection): ${endpoint.baseUrl}`
            : `Base URL: <VIGIL_API_URL>/protection/${endpoint.id} (set VIGIL_API_URL to this deployment's public HTTPS address to see it whole).`,
          endpoint.appId
            ? `Application: ${endpoint.appId}; accepted audiences: ${endpoint.audiences.join(', ')}`
            : `No application yet: every call is refused. Next: \`vigil protection setup ${named}\` gives the steps; then \`vigil protection enable ${named} --app-id <guid>\`.`,
        );
      }),
    );
  protection
    .command('setup <integration>')
    .description(
      'The set-up steps with the exact values (Entra application, federated credential, admin center), and what Vigil observed of it: validation, analyses per environment, refused calls',
    )
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON (the steps, the Graph calls and a PowerShell script that create the application)')
    .action(
      host.action(async (rt, named: string, opts: { organization?: string; json?: boolean }) => {
        const { caller, integrationId } = await operatorScope(rt.db, { integration: named, organization: opts.organization });
        const report = await protectionSetupOf(rt.db, caller, integrationId!, { apiUrl: rt.config.region.apiUrl ?? null, cloud: rt.config.cloud });
        if (opts.json) return printJson(report);
        if (report.setup) {
          report.setup.steps.forEach((step, i) => print(`${i + 1}. ${step.title}`, ...step.detail.map((d) => `   ${d}`), ''));
        }
        print(
          'Observed by Vigil:',
          `  validated: ${report.endpoint?.validatedAt ?? 'never'}`,
          ...(report.environments.length
            ? [
                table(
                  [
                    ['ENVIRONMENT', 'NAME', 'AGENTS GENERATIVE/CLASSIC', 'CALLING', 'ANALYSES', 'FIRST', 'LAST'],
                    ...report.environments.map((e) => [
                      e.environmentId,
                      e.displayName ?? '-',
                      `${e.agents.generative}/${e.agents.classic}${e.agents.unknown ? ` (+${e.agents.unknown} ?)` : ''}`,
                      String(e.agentsCalling),
                      String(e.calls),
                      e.firstAnalysisAt ?? '-',
                      e.lastAnalysisAt ?? '-',
                    ]),
                  ],
                  { shrink: [1] },
                ),
              ]
            : ['  no environment collected or seen yet (vigil collect lists them)']),
          ...(report.problems.length ? ['', 'To do:', ...report.problems.map((p) => `  - ${p}`)] : ['', 'Everything Vigil can observe is in place.']),
        );
      }),
    );
  const policy = protection
    .command('policy')
    .description('Protection policies: monitor or block, detector actions and thresholds, allow-lists, the decision budget');
  policy
    .command('show <integration>')
    .description('The policies that apply to the integration and the effective policy (for an environment and an agent when given)')
    .option('--environment <id>', 'the effective policy in this environment')
    .option('--agent <id>', 'the effective policy for this agent (bot id)')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, named: string, opts: { environment?: string; agent?: string; organization?: string; json?: boolean }) => {
        const { caller, integrationId } = await operatorScope(rt.db, { integration: named, organization: opts.organization });
        const r = await protectionPoliciesOf(rt.db, caller, integrationId!, { environmentId: opts.environment, agentId: opts.agent });
        if (opts.json) return printJson(r);
        const e = r.effective;
        print(
          `Mode: ${e.mode}; budget ${e.deadlineMs} ms, then ${e.onTimeout}${e.policyIds.length ? ` (from ${e.policyIds.join(' > ')})` : ' (defaults: no policy set)'}`,
          table([['DETECTOR', 'ACTION', 'THRESHOLD'], ...Object.entries(e.detectors).map(([id, d]) => [id, d.action, String(d.threshold)])]),
          `Allowed MCP servers: ${e.allow.mcpServers.join(', ') || '-'}`,
          `Allowed connectors:  ${e.allow.connectors.join(', ') || '- (no connector allow-list)'}`,
          `Allowed HTTP hosts:  ${e.allow.hosts.join(', ') || '-'}`,
          `Internal domains:    ${e.allow.internalDomains.join(', ') || "- (the tenant's own)"}`,
        );
      }),
    );
  policy
    .command('set <integration>')
    .description('Set fields of the policy of the integration (or of one environment or agent); fields not named are kept')
    .option('--environment <id>', 'narrow the policy to this environment')
    .option('--agent <id>', 'narrow the policy to this agent (bot id)')
    .option('--mode <mode>', 'monitor (decide and record, never block) or block')
    .option(
      '--detector <setting...>',
      'detector settings as <id>=<action>[@<threshold>], e.g. prompt_injection=block@0.8 jailbreak=alert (actions: block, alert, record, off; threshold 0–1)',
    )
    .option('--allow-mcp <host...>', 'MCP server hosts agents may use')
    .option('--allow-connector <id...>', 'connector ids agents may use (e.g. shared_office365); none = no connector allow-list')
    .option('--allow-host <host...>', 'hosts agents may send data to over HTTP')
    .option('--internal-domain <domain...>', "e-mail domains counted as internal besides the tenant's own")
    .option('--deadline-ms <ms>', 'the internal decision budget in milliseconds (10–900; Copilot Studio waits 1,000)')
    .option('--on-timeout <answer>', 'the answer when the budget runs out: allow or block')
    .option('--by <name>', 'who makes the change (default: the operating-system user)')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, named: string, opts: PolicySetOptions) => {
        const { caller, integrationId } = await operatorScope(rt.db, { integration: named, organization: opts.organization }, opts.by);
        const changes = policyChanges(opts);
        const saved = await setProtectionPolicyFor(rt.db, caller, integrationId!, { environmentId: opts.environment, agentId: opts.agent }, changes);
        if (opts.json) return printJson(saved);
        print(`Policy ${saved.id} saved: ${JSON.stringify(saved.fields)}`);
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
    .description('Tool calls Copilot Studio asked about and what Vigil answered, newest first (--json: the items of GET /api/v1/protection/{id}/steps)')
    .option('--conversation <id>', 'only this conversation')
    .option('--limit <n>', 'at most this many (1–500)', '50')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, named: string, opts: { conversation?: string; limit?: string; organization?: string; json?: boolean }) => {
        const { caller, integrationId } = await operatorScope(rt.db, { integration: named, organization: opts.organization });
        const page = await protectionStepsPage(rt.db, caller, integrationId!, { conversationId: opts.conversation, limit: parseLimit(opts.limit, 50) });
        if (opts.json) return printJson(page.items);
        if (page.items.length === 0) return print('No tool calls recorded yet (is the endpoint set up? see `vigil protection enable`).');
        print(stepTable(page.items, true));
      }),
    );
  protection
    .command('decisions <integration>')
    .description(
      'Tool calls Vigil blocked or would have blocked (monitor mode), newest first (--json: the items of GET /api/v1/protection/{id}/steps?outcome=decision)',
    )
    .option('--outcome <outcome>', 'only blocked or wouldBlock')
    .option('--agent <id>', 'only this agent (bot id)')
    .option('--environment <id>', 'only this environment')
    .option('--detector <id>', 'only the decisions of this detector (e.g. prompt_injection; `vigil protection policy show` lists them)')
    .option('--since <time>', 'only steps received at or after this ISO 8601 time')
    .option('--until <time>', 'only steps received before this ISO 8601 time')
    .option('--search <text>', 'only steps whose tool name or reason holds this text (case-insensitive)')
    .option('--limit <n>', 'at most this many (1–500)', '50')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(
        async (
          rt,
          named: string,
          opts: {
            outcome?: string;
            agent?: string;
            environment?: string;
            detector?: string;
            since?: string;
            until?: string;
            search?: string;
            limit?: string;
            organization?: string;
            json?: boolean;
          },
        ) => {
          if (opts.outcome !== undefined && opts.outcome !== 'blocked' && opts.outcome !== 'wouldBlock')
            throw new VigilError('INVALID_INPUT', `--outcome '${opts.outcome}' is not blocked or wouldBlock.`, {
              field: '--outcome',
              remediation: 'Leave it out for both, or give --outcome blocked or --outcome wouldBlock.',
            });
          const { caller, integrationId } = await operatorScope(rt.db, { integration: named, organization: opts.organization });
          const page = await protectionStepsPage(rt.db, caller, integrationId!, {
            outcome: opts.outcome ?? 'decision',
            agentId: opts.agent,
            environmentId: opts.environment,
            detector: opts.detector,
            since: opts.since,
            until: opts.until,
            q: opts.search,
            limit: parseLimit(opts.limit, 50),
          });
          if (opts.json) return printJson(page.items);
          if (page.items.length === 0) return print('No tool call was blocked or would have been.');
          print(stepTable(page.items, false));
        },
      ),
    );
  protection
    .command('conversation <integration> <conversationId>')
    .description(
      "A conversation's runtime-protection steps and collected transcript turns, in the order they happened (--json: GET /api/v1/protection/{id}/conversations/{conversationId})",
    )
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, named: string, conversationId: string, opts: { organization?: string; json?: boolean }) => {
        const { caller, integrationId } = await operatorScope(rt.db, { integration: named, organization: opts.organization });
        const timeline = await conversationTimelineOf(rt.db, caller, integrationId!, conversationId);
        if (opts.json) return printJson(timeline);
        print(
          `Conversation ${timeline.conversationId}: agent ${timeline.agentName ?? timeline.agentId ?? '-'}, environment ${timeline.environmentName ?? timeline.environmentId ?? '-'}, user ${timeline.userId ?? '-'}`,
          ...(timeline.steps.length ? ['', 'Runtime-protection steps (source: runtime):', stepTable(timeline.steps, false)] : []),
          ...(timeline.turns.length ? ['', 'Transcript turns (source: transcript), text redacted:', turnTable(timeline.turns)] : []),
        );
      }),
    );
  protection
    .command('transcripts <integration>')
    .description(
      'Conversations of the collected Copilot Studio transcripts, latest first, with findings and markers (--json: the items of GET /api/v1/protection/{id}/transcripts)',
    )
    .option('--limit <n>', 'at most this many (1–500)', '50')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, named: string, opts: { limit?: string; organization?: string; json?: boolean }) => {
        const { caller, integrationId } = await operatorScope(rt.db, { integration: named, organization: opts.organization });
        const list = await transcriptConversationsOf(rt.db, caller, integrationId!, parseLimit(opts.limit, 50));
        if (opts.json) return printJson(list.items);
        if (list.items.length === 0) return print('No conversation transcripts collected yet (run `vigil collect`).');
        const pct = (v: number | null) => (v === null ? '-' : v.toFixed(2));
        print(
          table(
            [
              ['LAST TURN', 'CONVERSATION', 'AGENT', 'ENVIRONMENT', 'TURNS', 'SECRETS', 'PERSONAL', 'INJECTION', 'JAILBREAK'],
              ...list.items.map((c) => [
                c.lastAt ?? '-',
                c.conversationId ?? '-',
                c.agentName ?? c.agentId ?? '-',
                c.environmentName ?? c.environmentId,
                String(c.turns),
                String(c.secrets),
                String(c.personal),
                pct(c.injection),
                pct(c.jailbreak),
              ]),
            ],
            { shrink: [1, 2, 3] },
          ),
        );
      }),
    );
}

/** A table of transcript turns: time, role, tool, findings, markers, redacted text. */
function turnTable(turns: TranscriptTurn[]): string {
  return table(
    [
      ['TIME', 'ROLE', 'TOOL', 'FINDINGS', 'MARKERS', 'TEXT'],
      ...turns.map((t) => [t.at ?? '-', t.role, t.toolName ?? '-', t.findingTypes.join(', ') || '-', t.markers.join(', ') || '-', t.text.replace(/\s+/g, ' ')]),
    ],
    { shrink: [5, 2, 4] },
  );
}

/** The outcome of a step in a word or two. */
function outcomeOf(s: AgentStep): string {
  return s.blockAction ? 'BLOCKED' : s.wouldBlock ? 'would block' : s.timedOut ? 'timeout' : 'allowed';
}

/** A table of steps: time, outcome, agent, tool, (conversation,) detector, reason, latency. */
function stepTable(steps: AgentStep[], withConversation: boolean): string {
  return table(
    [
      ['TIME', 'OUTCOME', 'AGENT', 'TOOL', ...(withConversation ? ['CONVERSATION'] : []), 'DETECTOR', 'REASON', 'MS'],
      ...steps.map((s) => [
        s.receivedAt,
        outcomeOf(s),
        s.agentName ?? s.agentId ?? '-',
        s.toolName ?? s.toolId ?? '-',
        ...(withConversation ? [s.conversationId ?? '-'] : []),
        s.decidedBy ?? '-',
        s.reason,
        String(s.latencyMs),
      ]),
    ],
    { shrink: withConversation ? [6, 4] : [5, 3] },
  );
}
