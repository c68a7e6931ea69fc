import type { Command } from 'commander';
import { agentQuarantineStatus, containAgent, releaseAgent, type ContainmentView } from '../../protection/containment.ts';
import { ContainmentSessions, containmentActionsOf } from '../../reporting/containment.ts';
import type { CommandHost } from '../host.ts';
import { print, printJson } from '../output.ts';
import { operatorScope, ORGANIZATION_OBJECT_HELP } from '../scope.ts';

/** Options of `vigil protection contain|release|quarantine-status`. */
interface ContainmentOptions {
  agent?: string;
  environment?: string;
  alert?: string;
  step?: string;
  clientId?: string;
  by?: string;
  organization?: string;
  json?: boolean;
}

const AFTER_HELP = `
The call needs a delegated token of an administrator (Global Administrator, AI Administrator or Power Platform
Administrator), signed in with the device code shown (open the link, enter the code, sign in; MFA works), through an
app registration that allows public client flows and has the delegated Power Platform API permission
CopilotStudio.AdminActions.Invoke (default: the integration's own application; another with --client-id).
The agent and its environment are taken from --alert or --step when not given.
Source: https://learn.microsoft.com/microsoft-copilot-studio/admin-quarantine-api`;

/** Adds the options every containment command shares. */
function withTarget(c: Command): Command {
  return c
    .option('--agent <botId>', 'the Copilot Studio bot id of the agent (default: the agent of --alert or --step)')
    .option('--environment <id>', "the agent's environment id (default: from --alert, --step or the collected inventory)")
    .option('--alert <alertId>', 'the alert the action answers (recorded with it)')
    .option('--step <stepId>', 'an agent step (threat-detection call) of the agent (recorded with it)')
    .option('--client-id <guid>', "sign in through this app registration instead of the integration's own")
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .addHelpText('after', AFTER_HELP);
}

/** The device-code prompt, on standard error as `vigil register-management-app` prints it. */
const deviceCode = { kind: 'device-code' as const, prompt: (message: string) => process.stderr.write(`${message}\n`) };

function render(v: ContainmentView, json: boolean | undefined): void {
  if (json) return printJson(v);
  const state = v.quarantined ? 'quarantined (visible to makers; users cannot interact with it in any channel)' : 'not quarantined';
  const verb = v.action === 'contain' ? 'Quarantined' : v.action === 'release' ? 'Released' : 'Status of';
  print(
    `${verb} agent ${v.agentId} in environment ${v.environmentId}: ${state}${v.lastUpdateTimeUtc ? ` (last change ${v.lastUpdateTimeUtc})` : ''}.`,
    ...(v.actionId
      ? [
          `Recorded as ${v.actionId}: by ${v.requestedBy}, signed in as ${v.signedInAs}, at ${v.at}${v.alertId ? `, for alert ${v.alertId}` : ''}${v.stepId ? `, for step ${v.stepId}` : ''}.`,
        ]
      : [`Read as ${v.signedInAs} at ${v.at}.`]),
  );
}

/**
 * `vigil protection contain|release|quarantine-status <integration>`: containment of Copilot Studio agents through the
 * Power Platform API (issue 19, "Respond"). Added to the `protection` command `registerProtection` creates.
 */
export function registerContainment(program: Command, host: CommandHost): void {
  const protection = program.commands.find((c) => c.name() === 'protection') ?? program.command('protection');
  for (const [name, description, run] of [
    ['contain', 'Quarantine a Copilot Studio agent (from an alert): users can no longer use it in any channel; recorded with its author', containAgent],
    ['release', 'Lift the quarantine of a Copilot Studio agent; recorded with its author', releaseAgent],
  ] as const) {
    withTarget(protection.command(`${name} <integration>`).description(description))
      .option('--by <name>', 'who asks (recorded as the author; default the operating-system user)')
      .action(
        host.action(async (rt, named: string, opts: ContainmentOptions) => {
          const { caller, integrationId } = await operatorScope(rt.db, { integration: named, organization: opts.organization }, opts.by);
          const view = await run(rt, {
            integration: integrationId!,
            agentId: opts.agent,
            environmentId: opts.environment,
            alertId: opts.alert,
            stepId: opts.step,
            clientId: opts.clientId,
            requestedBy: caller.name,
            signIn: deviceCode,
          });
          render(view, opts.json);
        }),
      );
  }
  withTarget(protection.command('quarantine-status <integration>').description("Read a Copilot Studio agent's quarantine state")).action(
    host.action(async (rt, named: string, opts: ContainmentOptions) => {
      const { integrationId } = await operatorScope(rt.db, { integration: named, organization: opts.organization });
      const view = await agentQuarantineStatus(rt, {
        integration: integrationId!,
        agentId: opts.agent,
        environmentId: opts.environment,
        alertId: opts.alert,
        stepId: opts.step,
        clientId: opts.clientId,
        signIn: deviceCode,
      });
      render(view, opts.json);
    }),
  );
  protection
    .command('actions <integration>')
    .description('The recorded quarantines and releases of agents of an integration, newest first, with their authors and outcomes')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON (what GET /api/v1/protection/{integrationId}/containment answers)')
    .action(
      host.action(async (rt, named: string, opts: { organization?: string; json?: boolean }) => {
        const { caller, integrationId } = await operatorScope(rt.db, { integration: named, organization: opts.organization });
        // The CLI starts no sign-in in the background, so it has no action in flight: the recorded ones only.
        const { items } = await containmentActionsOf(rt, new ContainmentSessions(), caller, integrationId!);
        if (opts.json) return printJson(items);
        if (!items.length) return print('No agent was contained or released in this integration.');
        print(
          ...items.map(
            (a) =>
              `${a.requestedAt}  ${a.action.padEnd(7)} ${a.status.padEnd(9)} agent ${a.agentId} (environment ${a.environmentId}) by ${a.requestedBy}${a.signedInAs ? `, signed in as ${a.signedInAs}` : ''}${a.alertId ? `, alert ${a.alertId}` : ''}${a.error ? `: ${a.error.code}: ${a.error.message}` : ''}`,
          ),
        );
      }),
    );
}
