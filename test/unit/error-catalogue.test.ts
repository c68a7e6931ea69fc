import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, EXIT, exitCodeOf, httpStatusOf, upstreamCode, type ErrorKind } from '../../src/core/error-catalogue.ts';
import { VigilError, invalidInput } from '../../src/core/errors.ts';
import { FIELD_FLAGS, flagOf } from '../../src/cli/flags.ts';
import { buildProgram } from '../../src/main/cli.ts';
import { validateCustomerAppInput } from '../../src/onboarding/validate.ts';
import { aadstsError } from '../../src/platform/identity/index.ts';

/**
 * The error catalogue: every code has a kind, every kind an HTTP status and an exit code, and the fields errors name
 * in domain terms become CLI flags only in `cli/flags.ts`. That every code thrown is catalogued is the compiler's
 * job (`VigilError`'s code is an `ErrorCode`, and its kind comes from the catalogue): the `@ts-expect-error` lines
 * below fail `npm run typecheck` if an unknown code, or a kind passed with a catalogued code, ever compiles.
 */

const entries = Object.entries(ERROR_CATALOGUE) as [string, { kind: ErrorKind; caller?: true; remediation?: string }][];
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
