import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { CommandHost } from '../../src/cli/host.ts';
import { buildProgram, COMMAND_MODULES, commandNameOf } from '../../src/main/cli.ts';

/**
 * Start-up loads only the module of the command typed (src/main/cli.ts): these tests keep the manifest that makes
 * this possible true to what the modules register, so no command goes missing from `vigil <name>`.
 */
describe('CLI start-up: one command module per command typed', () => {
  const host: CommandHost = { action: () => async () => undefined };

  it('every module registers exactly the top-level names the manifest lists for it, and no name is listed twice', async () => {
    const listed = COMMAND_MODULES.flatMap((m) => m.names);
    expect(new Set(listed).size).toBe(listed.length);
    for (const m of COMMAND_MODULES) {
      const program = new Command();
      (await m.load())(program, host);
      expect(program.commands.map((c) => c.name()).sort(), `module of ${m.names.join(', ')}`).toEqual([...m.names].sort());
    }
  });

  it('the full program (help, unknown commands) holds every command of the manifest', async () => {
    const program = await buildProgram('all');
    expect(program.commands.map((c) => c.name()).sort()).toEqual(COMMAND_MODULES.flatMap((m) => m.names).sort());
  });

  it('finds the command name past global options and the value of --data-dir', () => {
    expect(commandNameOf(['--version'])).toBeUndefined();
    expect(commandNameOf([])).toBeUndefined();
    expect(commandNameOf(['collect', 'abc'])).toBe('collect');
    expect(commandNameOf(['--data-dir', 'findings', 'checks'])).toBe('checks');
    expect(commandNameOf(['--verbose', '--data-dir', '/tmp/x', 'findings', '--json'])).toBe('findings');
  });

  it('loads only the typed command (and nothing for --version), but everything for help and unknown names', async () => {
    expect((await buildProgram(['--version'])).commands).toHaveLength(0);
    expect((await buildProgram(['--data-dir', '/tmp/x', 'findings', '--json'])).commands.map((c) => c.name())).toEqual(['findings']);
    expect((await buildProgram(['audit'])).commands.map((c) => c.name())).toEqual(['audit', 'events', 'alerts']);
    const all = COMMAND_MODULES.flatMap((m) => m.names).length;
    expect((await buildProgram(['colect'])).commands).toHaveLength(all);
    expect((await buildProgram(['--help'])).commands).toHaveLength(all);
    expect((await buildProgram(['--version', '--help'])).commands).toHaveLength(all);
  });
});
