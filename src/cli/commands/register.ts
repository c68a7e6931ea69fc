import type { Command } from 'commander';
import { invalidInput } from '../../core/errors.ts';
import { powershellInstructions, registerManagementApp, registrationTarget } from '../../onboarding/registration.ts';
import type { CommandHost } from '../host.ts';
import { readStdin } from '../input.ts';
import { print, printJson } from '../output.ts';

/** `vigil register-management-app` (seed step 2, both modes). */
export function registerRegister(program: Command, host: CommandHost): void {
  program
    .command('register-management-app')
    .description('Register the application as a Power Platform admin management application (needs a Power Platform or Global Administrator)')
    .option('--integration <integration>', 'the integration whose application to register (id or name)')
    .option('--tenant-id <guid>', 'tenant, when there is no integration yet (Mode B: after consent, before creating the integration)')
    .option('--application-id <guid>', 'application (client) ID to register, with --tenant-id')
    .option('--username <upn>', 'use the password grant (seed call 2) for this administrator instead of the device code')
    .option('--password-stdin', "read the administrator's password from standard input (with --username); used once, never stored")
    .option('--powershell', 'print the PowerShell alternative instead of registering')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nThe default sign-in is the device code: open the link shown, enter the code, and sign in (MFA works).\nThe password grant fails for accounts that need MFA or Conditional Access (AADSTS50076, 50079, 53003).',
    )
    .action(
      host.action(
        async (
          rt,
          opts: {
            integration?: string;
            tenantId?: string;
            applicationId?: string;
            username?: string;
            passwordStdin?: boolean;
            powershell?: boolean;
            json?: boolean;
          },
        ) => {
          const { tenantId, applicationId } = await registrationTarget(rt, { ...opts, tenantRequired: !opts.powershell });
          if (opts.powershell) {
            const lines = powershellInstructions(applicationId);
            return opts.json ? printJson({ tenantId, applicationId, powershell: lines }) : print(...lines);
          }
          if (opts.passwordStdin && !opts.username)
            throw invalidInput(
              '--username',
              '--password-stdin needs --username.',
              "Give the administrator's user principal name with --username, or drop both to use the device code.",
            );
          if (opts.username && !opts.passwordStdin)
            throw invalidInput(
              '--password-stdin',
              '--username needs the password on standard input.',
              'Pipe the password: printf %s "$PW" | vigil register-management-app … --username admin@contoso.com --password-stdin',
            );
          const signIn = opts.username
            ? { kind: 'password' as const, username: opts.username, password: await readStdin() }
            : { kind: 'device-code' as const, prompt: (message: string) => process.stderr.write(`${message}\n`) };
          const result = await registerManagementApp(rt, {
            tenantId: tenantId!,
            applicationId,
            signIn,
            clientId: rt.config.adminSignIn.clientId,
            scope: rt.config.adminSignIn.scope,
          });
          if (opts.json) return printJson(result);
          print(
            `Application ${result.applicationId} is registered as a Power Platform admin management application in tenant ${tenantId} (by ${result.registeredBy}; confirmed by reading it back).`,
            opts.integration
              ? `Next: give it System Administrator in every environment: vigil environments grant-access --integration ${opts.integration}`
              : `Next: create the integration (vigil integrations add --mode managed-app --tenant-id ${tenantId} --sp-object-id <Object ID>), then vigil environments grant-access --integration <id>.`,
          );
        },
      ),
    );
}
