import type { Command } from 'commander';
import { forgetUnreadableSecrets } from '../../onboarding/master-key.ts';
import type { CommandHost } from '../host.ts';
import { print, printJson } from '../output.ts';

/** `vigil master-key reset --forget-secrets`: the knowing way out of a lost master key (issue 14, point 7). */
export function registerMasterKey(program: Command, host: CommandHost): void {
  const cmd = program.command('master-key').description('The key that encrypts stored client secrets (VIGIL_MASTER_KEY or <data dir>/master.key)');
  cmd
    .command('reset')
    .description(
      'The master key is lost for good: write a new key file and forget the secrets it can no longer open (enter them again with `vigil integrations rotate-secret`). Restore the original key instead if you can.',
    )
    .requiredOption('--forget-secrets', 'confirm that the stored secrets encrypted with the lost key are to be forgotten')
    .option('--json', 'print JSON')
    .action(
      host.action(
        async (rt, opts: { forgetSecrets: boolean; json?: boolean }) => {
          const forgotten = await forgetUnreadableSecrets(rt);
          if (opts.json) return printJson({ keyId: rt.kek.id, forgotten });
          if (!forgotten.length) return print(`Master key ${rt.kek.id} opens every stored secret: nothing was forgotten.`);
          print(
            `Master key ${rt.kek.id} is in use. The secrets of ${forgotten.length} integration(s) were encrypted with a lost key and were forgotten; their collections stop until you enter them again:`,
            ...forgotten.map((f) => `  vigil integrations rotate-secret ${f.name}`),
          );
        },
        { replaceLostKey: true },
      ),
    );
}
