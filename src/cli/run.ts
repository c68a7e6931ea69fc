import { type Command, CommanderError } from 'commander';
import { EXIT } from './output.ts';

/**
 * Runs the command tree with the exit codes of `vigil --help` for what Commander itself refuses.
 *
 * Commander exits 1 for a usage error (unknown command or option, missing required option, bad choice, an option
 * value its parser refused) and prints the whole help after it when `showHelpAfterError()` is on. Here a usage error
 * exits 2 (invalid input; 1 is kept for bugs), help and `--version` exit 0, and after the error comes its one-line
 * suggestion ("(Did you mean collect?)", printed by Commander) and one line naming the command's `--help`, not the help
 * itself. Errors inside an action are reported by the command host (src/cli/host.ts) and set `process.exitCode`.
 */
export async function runProgram(program: Command, argv: readonly string[]): Promise<void> {
  prepare(program);
  try {
    await program.parseAsync(argv as string[]);
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    process.exitCode = e.exitCode === 0 ? EXIT.ok : EXIT.invalidInput;
  }
}

/** Every command of the tree, root first (for checks that walk it, e.g. the docs test). */
export function allCommands(program: Command): Command[] {
  return [program, ...program.commands.flatMap((c) => allCommands(c))];
}

/** The command's path as typed, e.g. `vigil integrations add`. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

function prepare(program: Command): void {
  for (const cmd of allCommands(program)) {
    // Throw instead of process.exit: the exit code is chosen above; Commander has printed its message already.
    cmd.exitOverride();
    cmd.showHelpAfterError(`(run \`${commandPath(cmd)} --help\` for usage)`);
  }
}
