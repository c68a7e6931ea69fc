import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { allCommands, commandPath } from '../../src/cli/run.ts';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config/index.ts';
import { isVigilError } from '../../src/core/errors.ts';
import { buildProgram } from '../../src/main/cli.ts';

/**
 * Keeps the README, the docs, `--help` and docs/configuration.md in step with what the code accepts (as
 * docs/checks.md is kept in step with the checks): the environment variables of the config schema, and every `vigil`
 * command line written in the documentation, resolved against the real command tree.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

let program: Command;
beforeAll(async () => {
  // The whole command tree, built without running it (src/main/cli.ts runs only when it is the main module).
  program = await buildProgram('all');
});

/** Not configuration: the variable name the docs choose for `--client-secret-env` (any name works). */
const NOT_CONFIGURATION = ['VIGIL_CLIENT_SECRET'];

/** Variables read outside the config schema, by the test suites only (named in the README's layout section). */
function readByTests(name: string): boolean {
  try {
    return execFileSync('grep', ['-rlF', name, 'test'], { cwd: ROOT, encoding: 'utf8' }).trim().length > 0;
  } catch {
    return false;
  }
}

/** Everything `vigil <command> --help` prints, the text added after the options included. */
function helpOf(cmd: Command): string {
  let text = '';
  cmd.configureOutput({ writeOut: (s) => void (text += s), writeErr: (s) => void (text += s) });
  cmd.outputHelp();
  return text;
}

/** `vigil …` command lines of code blocks and code spans, continuation lines joined, comments and pipes cut off. */
function commandLines(markdown: string): string[] {
  const code: string[] = [];
  for (const block of markdown.matchAll(/```[a-z]*\n([\s\S]*?)```/g)) code.push(...block[1]!.replace(/\\\n\s*/g, ' ').split('\n'));
  for (const span of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)) code.push(span[1]!);
  const lines: string[] = [];
  for (const line of code) {
    // `vigil` at the start of a command (after `npx`, `sudo`, a pipe, `;`, `&&`, `$(` or VAR=value assignments), or
    // `node bin/vigil.mjs` anywhere — not a container or image that happens to be called vigil.
    const starts = /(?:^\s*|[|;&(]\s*|(?:npx|sudo)\s+|\b[A-Z_]+=\S*\s+)vigil\s+([^|;#&)]*)|node bin\/vigil\.mjs\s+([^|;#&)]*)/g;
    for (const m of line.matchAll(starts)) lines.push((m[1] ?? m[2]!).trim());
  }
  return lines;
}

/**
 * Resolves one documented command line against the tree.
 * @returns what does not exist (an unknown command or option), or nothing.
 */
function problemsOf(line: string): string[] {
  const tokens = line.split(/\s+/).filter(Boolean);
  let cmd = program;
  let i = 0;
  // Global options may come first (`vigil --data-dir <dir> findings`).
  while (tokens[i]?.startsWith('--') && program.options.some((o) => o.long === tokens[i]))
    i += program.options.find((o) => o.long === tokens[i])!.required ? 2 : 1;
  for (; i < tokens.length; i++) {
    const sub = cmd.commands.find((c) => c.name() === tokens[i] || c.aliases().includes(tokens[i]!));
    if (!sub) break;
    cmd = sub;
  }
  const problems: string[] = [];
  const next = tokens[i];
  // A bare word where a subcommand must come (no default subcommand, no arguments of its own) is an unknown command.
  const hasDefault = cmd.commands.some((c) => (cmd as unknown as { _defaultCommandName?: string })._defaultCommandName === c.name());
  if (cmd.commands.length > 0 && !hasDefault && next && /^[a-z][a-z-]*$/.test(next) && cmd.registeredArguments.length === 0)
    problems.push(`\`${commandPath(cmd)} ${next}\`: no such command`);
  const effective = hasDefault ? cmd.commands.find((c) => (cmd as unknown as { _defaultCommandName?: string })._defaultCommandName === c.name())! : cmd;
  const known = new Set(['--help', ...[effective, ...ancestors(effective)].flatMap((c) => c.options.map((o) => o.long).filter((l): l is string => !!l))]);
  for (const t of tokens.slice(i)) {
    const option = /^(--[a-z][a-z0-9-]*)/.exec(t)?.[1];
    if (option && !known.has(option)) problems.push(`\`${commandPath(effective)}\` has no option ${option}`);
  }
  return problems;
}

function ancestors(cmd: Command): Command[] {
  const out: Command[] = [];
  for (let c = cmd.parent; c; c = c.parent) out.push(c);
  return out;
}

describe('docs in step with the configuration', () => {
  it('documents every environment variable the config schema reads in docs/configuration.md, and only those', () => {
    const documented = new Set([...read('docs/configuration.md').matchAll(/^\| `([A-Z][A-Z0-9_]+)`/gm)].map((m) => m[1]!));
    expect(CONFIG_VARIABLES.filter((v) => !documented.has(v))).toEqual([]);
    expect([...documented].filter((v) => !CONFIG_VARIABLES.includes(v))).toEqual([]);
  });

  it('names in the README, the docs and --help only variables that exist', () => {
    const texts = [...DOCS.map((f) => [f, read(f)] as const), ...allCommands(program).map((c) => [`${commandPath(c)} --help`, helpOf(c)] as const)];
    const unknown = texts.flatMap(([where, text]) =>
      [...new Set([...text.matchAll(/\b(VIGIL_[A-Z0-9_]+|DATABASE_URL)\b/g)].map((m) => m[1]!))]
        .filter((v) => !CONFIG_VARIABLES.includes(v) && !NOT_CONFIGURATION.includes(v) && !readByTests(v))
        .map((v) => `${where}: ${v}`),
    );
    expect(unknown).toEqual([]);
  });

  it('refuses a bad value of every variable with a configuration error naming it (exit code 2), never a crash', () => {
    const bad = ['not-a-value', '-1', '99999999', 'ftp://x', '!'];
    const outcomes = CONFIG_VARIABLES.flatMap((name) =>
      bad.map((value) => {
        try {
          loadConfig({ [name]: value }, { dataDir: '/nonexistent-vigil-test' });
          return null;
        } catch (e) {
          return isVigilError(e) && e.kind === 'configuration' ? null : `${name}=${value}: ${(e as Error).message}`;
        }
      }),
    );
    expect(outcomes.filter(Boolean)).toEqual([]);
  });
});

describe('docs in step with the command tree', () => {
  it('every `vigil` command line in the README and docs names commands and options that exist', () => {
    const problems = DOCS.flatMap((file) => commandLines(read(file)).flatMap((line) => problemsOf(line).map((p) => `${file}: ${p} (in \`vigil ${line}\`)`)));
    expect(problems).toEqual([]);
  });

  it('finds the command lines it checks (the check itself can fail)', () => {
    expect(problemsOf('colect')).toEqual(['`vigil colect`: no such command']);
    expect(problemsOf('integrations add --mode customer-app --organisation Contoso')).toEqual(['`vigil integrations add` has no option --organisation']);
    expect(problemsOf('--data-dir .vigil/demo findings --organization Contoso --json')).toEqual([]);
    expect(commandLines(read('README.md')).length).toBeGreaterThan(20);
  });

  it('documents serve --host and --port with their variables in --help and docs/configuration.md', () => {
    const serve = program.commands.find((c) => c.name() === 'serve')!;
    expect(serve.options.map((o) => o.long)).toEqual(expect.arrayContaining(['--host', '--port']));
    expect(helpOf(serve)).toMatch(/VIGIL_HOST[\s\S]*VIGIL_PORT/);
    expect(read('docs/configuration.md')).toMatch(/`vigil serve --host`/);
  });
});
