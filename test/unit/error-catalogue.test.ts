import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ACTIONS, describeAction, type Action } from '../../src/core/actions.ts';
import { ERROR_CATALOGUE, EXIT, exitCodeOf, httpStatusOf, upstreamCode, type ErrorKind } from '../../src/core/error-catalogue.ts';
import { VigilError, invalidInput } from '../../src/core/errors.ts';
import { ACTION_COMMANDS, actionOf, FIELD_FLAGS, flagOf } from '../../src/cli/flags.ts';
import { tenantNotProven } from '../../src/onboarding/tenants.ts';
import { buildProgram } from '../../src/main/cli.ts';
import { validateCustomerAppInput } from '../../src/onboarding/validate.ts';
import { aadstsError } from '../../src/platform/identity/index.ts';

/**
 * The error catalogue: every code has a kind, every kind an HTTP status and an exit code, and the fields errors name
 * in domain terms become CLI flags only in `cli/flags.ts`. That every code thrown is catalogued is the compiler's
 * job (`VigilError`'s code is an `ErrorCode`, and its kind comes from the catalogue): the `@ts-expect-error` lines
 * below fail `npm run typecheck` if an unknown code, or a kind passed with a catalogued code, ever compiles.
 */

const entries = Object.entries(ERROR_CATALOGUE) as [string, { kind: ErrorKind; caller?: true; remediation?: unknown }][];
const exitCodes = Object.values(EXIT).filter((c) => c !== EXIT.ok);

describe('the error catalogue', () => {
  it('gives every code one kind, an HTTP error status and a documented non-zero exit code', () => {
    expect(entries.length).toBeGreaterThan(80);
    for (const [code, { kind }] of entries) {
      expect(code, code).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(typeof kind, code).toBe('string');
      const status = httpStatusOf(kind, code);
      expect(status >= 400 && status <= 599, `${code} ${kind} → ${status}`).toBe(true);
      expect(exitCodes, `${code} ${kind}`).toContain(exitCodeOf(kind));
    }
  });

  it("answers 401/403 only for the API caller's own sign-in and role, and 422 for credentials an upstream refused", () => {
    const byStatus = (s: number) =>
      entries
        .filter(([code, e]) => httpStatusOf(e.kind, code) === s)
        .map(([code]) => code)
        .sort();
    expect(byStatus(401)).toEqual(['AUTHENTICATION_REQUIRED', 'SIGN_IN_FAILED']);
    expect(byStatus(403)).toEqual(['CSRF_FAILED', 'FORBIDDEN_ROLE']);
    expect(httpStatusOf('authentication', 'AADSTS7000215')).toBe(422);
    expect(httpStatusOf('authentication', 'AADSTS9999999')).toBe(422); // an AADSTS code Vigil does not list
    expect(httpStatusOf('authorization', 'CONSENT_MISSING')).toBe(422);
    expect([httpStatusOf('invalid-input', 'INVALID_INPUT'), exitCodeOf('invalid-input')]).toEqual([400, 2]);
    expect([httpStatusOf('configuration', 'MASTER_KEY_MISSING'), exitCodeOf('configuration')]).toEqual([503, 2]);
    expect([httpStatusOf('not-found', 'RUN_NOT_FOUND'), exitCodeOf('not-found')]).toEqual([404, 4]);
    expect([httpStatusOf('upstream', 'NETWORK_ERROR'), exitCodeOf('upstream')]).toEqual([502, 6]);
  });

  it('fills in the remediation of a code that has one fixed text, unless the thrower gives its own', () => {
    expect(new VigilError('NO_SECRET', 'Integration x has no stored secret.').remediation).toBe('Remove and add the integration again.');
    expect(new VigilError('NO_SECRET', 'x', { remediation: 'own' }).remediation).toBe('own');
  });

  it("takes an error's kind from the catalogue, and from the HTTP status only for an upstream's own code", () => {
    for (const [code, { kind }] of entries) expect(new VigilError(code as keyof typeof ERROR_CATALOGUE, 'x').kind, code).toBe(kind);
    expect(new VigilError('AADSTS7000218', 'x').kind).toBe('invalid-input'); // a listed AADSTS code: the catalogue's kind
    expect(new VigilError(`AADSTS${'9999999'}`, 'x').kind).toBe('authentication'); // one Vigil does not list
    expect(new VigilError(upstreamCode('Forbidden'), 'x', { kind: 'authorization' }).kind).toBe('authorization');
  });

  it('does not compile an unknown code, a kind given with a catalogued code, or an upstream code without its kind', () => {
    // @ts-expect-error: not a catalogued code
    expect(new VigilError('NOT_A_CODE', 'x').code).toBe('NOT_A_CODE');
    // @ts-expect-error: the former signature (kind first): 'not-found' is no code
    expect(new VigilError('not-found', 'INTEGRATION_NOT_FOUND', 'x').kind).toBe('authentication');
    // @ts-expect-error: INTEGRATION_NOT_FOUND is `not-found` by the catalogue; no kind may be given
    expect(new VigilError('INTEGRATION_NOT_FOUND', 'x', { kind: 'conflict' }).kind).toBe('conflict');
    // @ts-expect-error: an upstream's code needs the kind its HTTP status gives
    expect(new VigilError(upstreamCode('Forbidden'), 'x').kind).toBe('authentication');
  });
});

describe('fields in domain terms, flags only in the CLI', () => {
  it('maps every domain field to an option some command of `vigil` really has', async () => {
    const program = await buildProgram('all');
    const options = new Set<string>();
    const walk = (c: typeof program): void => {
      for (const o of c.options) if (o.long) options.add(o.long);
      c.commands.forEach(walk);
    };
    walk(program);
    for (const [field, flag] of Object.entries(FIELD_FLAGS)) expect(options, `${field} → ${flag}`).toContain(flag);
  });

  it('names the field in domain terms below the CLI, and by its flag when the CLI renders it', () => {
    const e = (() => {
      try {
        validateCustomerAppInput({ tenantId: 'contoso.com', clientId: '72f988bf-86f1-41af-91ab-2d7cd011db47', clientSecret: 's' });
      } catch (err) {
        return err as VigilError;
      }
      throw new Error('accepted a domain as tenant id');
    })();
    expect([e.field, e.message]).toEqual(['tenantId', expect.stringMatching(/^tenantId 'contoso.com' is not a GUID/)]);
    expect(e.render(flagOf)).toMatchObject({
      code: 'INVALID_INPUT',
      field: '--tenant-id',
      message: expect.stringMatching(/^--tenant-id 'contoso.com' is not a GUID/),
    });
    expect(e.render()).toEqual(e.toJSON());
  });

  it('renders a field named inside a remediation the same way', () => {
    const e = aadstsError('700016', 'AADSTS700016: Application not found');
    expect(e.render(flagOf)).toMatchObject({ field: '--client-id', remediation: expect.stringContaining('check that --tenant-id is') });
    expect(e.render()).toMatchObject({ field: 'clientId', remediation: expect.stringContaining('check that tenantId is') });
    expect(flagOf('VIGIL_MASTER_KEY')).toBe('VIGIL_MASTER_KEY');
    expect(invalidInput('--limit', 'x', 'y').render(flagOf).field).toBe('--limit');
  });
});

/** A long CLI option (`--tenant-id`), or a `vigil …` command line in backquotes: CLI wording. */
const FLAG = /(?<![\w-])--[a-z][a-z-]*/;
const COMMAND_LINE = /`vigil [a-z]/;

/** Every string and template text in src/ outside cli/ and main/ (the composition roots), with file, line and source line. */
function textsBelowCli(): { where: string; text: string; line: string }[] {
  const src = join(import.meta.dirname, '..', '..', 'src');
  const out: { where: string; text: string; line: string }[] = [];
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    const file = join(entry.parentPath, entry.name);
    const rel = relative(src, file);
    if (!entry.isFile() || !/\.tsx?$/.test(entry.name) || /^(cli|main)\//.test(rel)) continue;
    const source = readFileSync(file, 'utf8');
    const lines = source.split('\n');
    const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
        const line = sf.getLineAndCharacterOfPosition(node.getStart()).line;
        out.push({ where: `src/${rel}:${line + 1}`, text: node.text, line: lines[line]! });
      }
      node.forEachChild(visit);
    };
    visit(sf);
  }
  return out;
}

describe('remediations in domain terms below the CLI, command lines only in the CLI', () => {
  it('holds no CLI flag in any text of src/ outside cli/ and main/ (fields and steps are named through the surface)', () => {
    const texts = textsBelowCli();
    expect(texts.length).toBeGreaterThan(2000);
    // The Azure CLI's own flags, in a fix for the customer's Azure administrator: not Vigil's.
    const azureCli = (line: string) => /\baz role assignment create --assignee /.test(line);
    const offenders = texts.filter(({ text, line }) => FLAG.test(text) && !azureCli(line)).map(({ where, text }) => `${where}: ${text}`);
    expect(offenders).toEqual([]);
  });

  it('renders every catalogue remediation without CLI wording for the API, and every step as a real command for the CLI', async () => {
    const program = await buildProgram('all');
    for (const [code] of entries) {
      const e = new VigilError(code as keyof typeof ERROR_CATALOGUE, 'x');
      const api = e.render().remediation ?? '';
      expect(api, code).not.toMatch(FLAG);
      expect(api, code).not.toMatch(COMMAND_LINE);
      expect(api, code).not.toMatch(/undefined|\[object/);
      expect(e.render(flagOf, actionOf).remediation ?? '', code).not.toMatch(/undefined|\[object/);
    }
    // Each step's command line names a real command path and only options that command has; a phrase (copy the id
    // from the list output) names only options some command has.
    const anyOption = new Set<string>();
    const walk = (c: typeof program): void => {
      for (const o of c.options) if (o.long) anyOption.add(o.long);
      c.commands.forEach(walk);
    };
    walk(program);
    for (const step of Object.keys(ACTIONS) as Action['do'][]) {
      const line = (ACTION_COMMANDS[step] as (a: Action) => string)({ do: step } as Action);
      const command = /(?:^|`)vigil ([^`]*)/.exec(line)?.[1];
      if (command === undefined) {
        const flags = line.match(new RegExp(FLAG, 'g')) ?? [];
        expect(flags.length, step).toBeGreaterThan(0);
        for (const flag of flags) expect(anyOption, `${step}: ${flag}`).toContain(flag);
        continue;
      }
      let c = program;
      const words = command!.split(' ');
      while (words.length && !words[0]!.startsWith('-')) {
        const sub = c.commands.find((x) => x.name() === words[0]);
        if (!sub) break;
        c = sub;
        words.shift();
      }
      expect(c, `${step}: ${command}`).not.toBe(program);
      // `vigil findings --status all` runs the default subcommand (`findings list`), whose options count too.
      const byDefault = c.commands.find((x) => x.name() === (c as unknown as { _defaultCommandName?: string })._defaultCommandName);
      const options = [...c.options, ...(byDefault?.options ?? [])].map((o) => o.long);
      for (const flag of words.filter((w) => w.startsWith('--'))) expect(options, `${step}: ${command}`).toContain(flag);
    }
  });

  it('tells a portal user the portal or API step and a CLI user the command line, for the same thrown error', () => {
    const e = tenantNotProven('72f988bf-86f1-41af-91ab-2d7cd011db47');
    const api = e.render().remediation!;
    expect(api).toContain('"Get consent link" in the portal, or POST /api/v1/integrations/consent-link');
    expect(api).not.toMatch(FLAG);
    expect(e.remediation).toBe(api); // logs and stored reports: the domain wording
    expect(e.render(flagOf, actionOf).remediation).toContain('run `vigil consent-url --tenant 72f988bf-86f1-41af-91ab-2d7cd011db47`');
    // A step only the operator can take: a request to the operator in the API, the command for the operator at the CLI.
    const taken = new VigilError('TENANT_NOT_BOUND', 'x');
    expect(taken.render().remediation).toBe('To see the bound tenants, ask the Vigil operator to list the bound tenants.');
    expect(taken.render(flagOf, actionOf).remediation).toBe('To see the bound tenants, list the bound tenants (operator: `vigil tenants list`).');
    expect(describeAction({ do: 'resetMasterKey' })).toMatch(/^ask the Vigil operator to /);
  });
});
