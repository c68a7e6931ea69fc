import { type Command, Option } from 'commander';
import { invalidInput } from '../../core/errors.ts';
import {
  addCustomerAppIntegration,
  addManagedAppIntegration,
  listIntegrationSummaries,
  removeIntegration,
  rotateSecret,
  verifyStoredIntegration,
  type IntegrationSummary,
} from '../../onboarding/integrations.ts';
import { print, printJson, table } from '../output.ts';
import { actionOf } from '../flags.ts';
import { secretExpiryWarning } from '../../integration/index.ts';
import { getOrganizationByName } from '../../access/index.ts';
import { operatorScope, ORGANIZATION_FILTER_HELP, ORGANIZATION_OBJECT_HELP } from '../scope.ts';
import { regionById } from '../../config/regions.ts';
import type { IntegrationDetail } from '../../contract/integrations.ts';
import { renderSteps, setupSteps, showIntegration } from '../../onboarding/doctor.ts';
import type { CommandHost, Runtime } from '../host.ts';
import { shortIds } from '../../core/ids.ts';
import { limitRows, listOptions, readStdin, type ListOptions } from '../input.ts';

/**
 * Reads the client secret from the environment variable named by `--client-secret-env` or from stdin
 * (`--client-secret-stdin`): never from an argument, which would show in the process list and shell history.
 * @throws VigilError `invalid-input` naming the flag.
 */
async function readSecret(opts: { clientSecretEnv?: string; clientSecretStdin?: boolean }): Promise<string> {
  if (opts.clientSecretEnv && opts.clientSecretStdin)
    throw invalidInput('--client-secret-env', 'Give the secret one way only.', 'Use either --client-secret-env VAR or --client-secret-stdin.');
  if (opts.clientSecretStdin) return readStdin();
  if (opts.clientSecretEnv) {
    const secret = process.env[opts.clientSecretEnv];
    if (secret === undefined)
      throw invalidInput(
        '--client-secret-env',
        `Environment variable ${opts.clientSecretEnv} is not set.`,
        `Export it first: export ${opts.clientSecretEnv}='<secret value>'`,
      );
    return secret;
  }
  throw invalidInput('--client-secret-env', 'No client secret given.', 'Use --client-secret-env VAR or --client-secret-stdin.');
}

/** Renders the verification of an integration (its application, tenant and mode) for people. */
function renderReport(r: NonNullable<IntegrationDetail['verification']>, of: Pick<IntegrationSummary, 'clientId' | 'tenantId' | 'mode'>): string {
  const mode = of.mode;
  const lines = [
    `Verification of application ${of.clientId} in tenant ${of.tenantId}`,
    `  credentials        ok (service principal Object ID ${r.servicePrincipalObjectId ?? 'unknown'})`,
  ];
  lines.push(`  permission list    ${r.permissionList === 'partial' ? 'incomplete' : `matches the ${r.permissionList} list`}`);
  for (const c of r.capabilities) {
    if (c.detail !== undefined) {
      // Judged by the API's answer (Power BI): no permission to add; the detail names the tenant setting and the fix.
      lines.push(`  ${c.status === 'granted' ? 'ok     ' : 'MISSING'}  ${c.title} — ${c.detail}`);
      continue;
    }
    const fix =
      mode === 'managed-app'
        ? `${c.api} ${c.add} is not granted (revoked after consent?): this capability is not evaluated`
        : `add ${c.api} application permission ${c.add}, then grant admin consent`;
    lines.push(`  ${c.status === 'granted' ? 'ok     ' : 'MISSING'}  ${c.title}${c.status === 'granted' ? ` (${c.grantedBy})` : ` — ${fix}`}`);
  }
  lines.push(
    `  ${r.managementApp.registered ? 'ok     ' : 'MISSING'}  Power Platform admin management application${r.managementApp.registered ? '' : ` — ${r.managementApp.detail}`}`,
  );
  for (const e of r.environments) {
    const state = !e.dataverse ? 'no Dataverse' : e.agentsReadable ? 'agents readable' : `NOT READABLE — ${e.reason}`;
    lines.push(`    environment ${e.name ?? e.id}: ${state}`);
  }
  for (const w of r.warnings) lines.push(`  note: ${w}`);
  return lines.join('\n');
}

function renderView(v: IntegrationSummary): string {
  const expiry = v.secretExpiresAt ? `${v.secretExpiresAt.slice(0, 10)} (${v.secretDaysLeft} days left)` : 'unknown';
  return [
    `${v.name} (${v.id})`,
    `  mode               ${v.mode}`,
    `  tenant id          ${v.tenantId}`,
    `  client id          ${v.clientId}`,
    `  SP Object ID       ${v.servicePrincipalObjectId ?? '-'}`,
    `  secret expires     ${expiry}`,
    `  last verified      ${v.verifiedAt ?? 'never'}`,
    `  credentials        ${v.credentialState === 'ok' ? 'ok' : `${v.credentialState.toUpperCase()} — ${v.credentialError ?? ''}`}`,
  ].join('\n');
}

/**
 * One integration with its setup checklist as the API answers for it (`GET /api/v1/integrations/{id}`; also what
 * creating, verifying and rotating answer), through the same use case, for the operator narrowed to `organization`.
 * @throws VigilError `not-found` for an unknown integration or one of another organization.
 */
async function detailOf(rt: Runtime, integration: string, organization?: string): Promise<IntegrationDetail> {
  const { caller, integrationId } = await operatorScope(rt.db, { integration, organization });
  return showIntegration(rt.db, caller, integrationId!, regionById(rt.config.region.id, 'VIGIL_REGION'));
}

/** `vigil integrations …` */
export function registerIntegrations(program: Command, host: CommandHost): void {
  const cmd = program.command('integrations').description('Add, verify, list, show and remove tenant integrations');

  cmd
    .command('add')
    .description('Add an integration after verifying its credentials and setup against the tenant')
    .addOption(new Option('--mode <mode>', 'setup mode').choices(['customer-app', 'managed-app']).makeOptionMandatory())
    .option('--tenant-id <guid>', 'Directory (tenant) ID')
    .option('--client-id <guid>', 'Application (client) ID of the customer-created app')
    .option('--client-secret-env <var>', 'name of the environment variable holding the client secret value')
    .option('--client-secret-stdin', 'read the client secret value from standard input')
    .option('--secret-expires <date>', 'client secret expiry, YYYY-MM-DD (default: 24 months from today)')
    .option('--sp-object-id <guid>', "managed-app: Object ID of Vigil's service principal in your tenant (Enterprise applications)")
    .option('--primary-domain <domain>', "managed-app: the tenant's primary domain, checked against --tenant-id")
    .option('--name <name>', 'display name of the integration (default: tenant-<first 8 of tenant id>)')
    .option('--organization <name>', 'the organization whose users see it (must exist: `vigil organizations create <name>`)', 'Default')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nThe secret is never taken as an argument (it would show in the process list and shell history).\nExamples:\n  VIGIL_CLIENT_SECRET=... vigil integrations add --mode customer-app --tenant-id <guid> --client-id <guid> --client-secret-env VIGIL_CLIENT_SECRET\n  vigil integrations add --mode managed-app --tenant-id <guid> --sp-object-id <Object ID>   (after `vigil consent-url`)',
    )
    .action(
      host.action(
        async (
          rt,
          opts: {
            mode: string;
            organization: string;
            tenantId?: string;
            clientId?: string;
            clientSecretEnv?: string;
            clientSecretStdin?: boolean;
            secretExpires?: string;
            name?: string;
            spObjectId?: string;
            primaryDomain?: string;
            json?: boolean;
          },
        ) => {
          const organizationId = (await getOrganizationByName(rt.db, opts.organization)).id;
          if (opts.mode === 'managed-app') {
            if (opts.clientSecretEnv || opts.clientSecretStdin || opts.clientId) {
              throw invalidInput(
                '--client-id',
                'Mode managed-app uses the operator-managed application: it takes no client id or secret.',
                "Give --tenant-id and --sp-object-id (the Object ID of Vigil's service principal in your tenant).",
              );
            }
            const { integration, report } = await addManagedAppIntegration(rt, {
              organizationId,
              name: opts.name,
              tenantId: opts.tenantId,
              spObjectId: opts.spObjectId,
              primaryDomain: opts.primaryDomain,
            });
            if (opts.json) printJson(await detailOf(rt, integration.id));
            else
              print(
                `Added integration ${integration.name} (${integration.id}).`,
                renderReport(report, integration),
                `Next: vigil integrations verify ${integration.id}, then vigil collect ${integration.id}`,
              );
            return;
          }
          const secret = await readSecret(opts);
          const { integration, report } = await addCustomerAppIntegration(rt, {
            organizationId,
            name: opts.name,
            tenantId: opts.tenantId,
            clientId: opts.clientId,
            clientSecret: secret,
            secretExpires: opts.secretExpires,
          });
          if (opts.json) printJson(await detailOf(rt, integration.id));
          else print(`Added integration ${integration.name} (${integration.id}).`, renderReport(report, integration), `Next: vigil collect ${integration.id}`);
        },
      ),
    );

  listOptions(cmd.command('list').description('List integrations (of every organization unless --organization)'), 100)
    .option('--organization <name>', ORGANIZATION_FILTER_HELP)
    .option('--json', 'print JSON (the items of GET /api/v1/integrations)')
    .action(
      host.action(async (rt, opts: ListOptions & { organization?: string }) => {
        const { caller } = await operatorScope(rt.db, opts);
        const { rows: views, more } = limitRows(await listIntegrationSummaries(rt.db, caller), opts, 100);
        if (opts.json) return printJson(views);
        if (views.length === 0) return print('No integrations. Add one with `vigil integrations add`.');
        const short = opts.wide ? undefined : shortIds(views.map((v) => v.id));
        print(
          table(
            [
              ['ID', 'NAME', 'MODE', 'TENANT', 'SECRET EXPIRES'],
              ...views.map((v) => [short?.get(v.id) ?? v.id, v.name, v.mode, v.tenantId, v.secretExpiresAt?.slice(0, 10) ?? '-']),
            ],
            { wide: opts.wide },
          ),
        );
        if (more) print(more);
        for (const v of views) {
          const warning = secretExpiryWarning(v, actionOf);
          if (warning) process.stderr.write(`warning: ${warning}\n`);
        }
      }),
    );

  cmd
    .command('show <integration>')
    .description('Show an integration and its last verification (id or name)')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON (as GET /api/v1/integrations/{id}: the integration, its last verification, the setup steps, the IP safelist)')
    .action(
      host.action(async (rt, integration: string, opts: { organization?: string; json?: boolean }) => {
        const d = await detailOf(rt, integration, opts.organization);
        if (opts.json) return printJson(d);
        print(renderView(d.integration));
        // The API's detail words its warning and steps for any reader; the terminal names the vigil commands.
        const warning = secretExpiryWarning(d.integration, actionOf);
        if (warning) print(`  warning: ${warning}`);
        if (d.verification) print(renderReport(d.verification, d.integration));
      }),
    );

  cmd
    .command('verify <integration>')
    .description("Setup doctor: check every setup step of the integration's mode in order, with the fix for each one not done")
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON (as POST /api/v1/integrations/{id}/verify: the integration, the new verification, the setup steps)')
    .action(
      host.action(async (rt, integration: string, opts: { organization?: string; json?: boolean }) => {
        const { integrationId } = await operatorScope(rt.db, { integration, organization: opts.organization });
        const { integration: view, report } = await verifyStoredIntegration(rt, integrationId!);
        const d = await detailOf(rt, view.id);
        if (opts.json) return printJson(d);
        // The API's steps are worded for any reader; the terminal's name the vigil commands.
        const steps = setupSteps(view, report, regionById(rt.config.region.id, 'VIGIL_REGION'), actionOf);
        print(`Setup of ${view.name} (${view.mode}), step by step:`, renderSteps(steps));
        if (steps.some((s) => s.state === 'missing' || s.state === 'incomplete'))
          print('', 'Capabilities whose step is not done are reported as "not evaluated", never as passing.');
      }),
    );

  cmd
    .command('rotate-secret <integration>')
    .description(
      'Replace the client secret of a customer-created app: the new secret is verified against the tenant first, and the old one stays until it works',
    )
    .option('--client-secret-env <var>', 'name of the environment variable holding the NEW client secret value')
    .option('--client-secret-stdin', 'read the new client secret value from standard input')
    .option('--secret-expires <date>', 'expiry of the new secret, YYYY-MM-DD (default: 24 months from today)')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(
        async (
          rt,
          integration: string,
          opts: { clientSecretEnv?: string; clientSecretStdin?: boolean; secretExpires?: string; organization?: string; json?: boolean },
        ) => {
          const { integrationId } = await operatorScope(rt.db, { integration, organization: opts.organization });
          const v = await rotateSecret(rt, integrationId!, { clientSecret: await readSecret(opts), secretExpires: opts.secretExpires });
          if (opts.json) return printJson(await detailOf(rt, v.id));
          print(
            `The new client secret of ${v.name} works and replaced the old one; it expires ${v.secretExpiresAt?.slice(0, 10)} (${v.secretDaysLeft} days).`,
            'You can now delete the old secret under App registrations > your app > Certificates & secrets.',
          );
        },
      ),
    );

  cmd
    .command('remove <integration>')
    .description('Remove an integration and everything collected for it')
    .option('--organization <name>', ORGANIZATION_OBJECT_HELP)
    .option('--json', 'print JSON')
    .action(
      host.action(async (rt, integration: string, opts: { organization?: string; json?: boolean }) => {
        const { integrationId } = await operatorScope(rt.db, { integration, organization: opts.organization });
        const v = await removeIntegration(rt.db, integrationId!);
        if (opts.json) printJson({ removed: v.id });
        else print(`Removed integration ${v.name} (${v.id}) and its collected data.`);
      }),
    );
}
