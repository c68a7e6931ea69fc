import { describe, expect, it } from 'vitest';
import { inspectText, maskOf, summarize, type MatchType } from '../../src/inspection/index.ts';

const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
const JWT = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: '1234567890', name: 'Ada' })}.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c`;
const STORAGE_KEY = `${'Ab1+/'.repeat(17)}x==`;

/** Each detector: a text holding one real finding (the value), and a near-miss that must not match. */
const CASES: { type: MatchType; value: string; text: (v: string) => string; nearMiss: string }[] = [
  {
    type: 'aws_access_key',
    value: 'AKIAIOSFODNN7EXAMPLE',
    text: (v) => `use ${v} for the bucket`,
    nearMiss: 'use AKIAIOSFODNN7EXAMPL for the bucket (19 characters)',
  },
  {
    type: 'aws_secret_key',
    value: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    text: (v) => `aws_secret_access_key = ${v}`,
    nearMiss: 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG',
  },
  {
    type: 'azure_storage_connection_string',
    value: `DefaultEndpointsProtocol=https;AccountName=contosodata;AccountKey=${STORAGE_KEY};EndpointSuffix=core.windows.net`,
    text: (v) => `connect with "${v}" please`,
    nearMiss: 'DefaultEndpointsProtocol=https;AccountName=contosodata;AccountKey=<your key>;EndpointSuffix=core.windows.net',
  },
  { type: 'azure_storage_account_key', value: STORAGE_KEY, text: (v) => `the key is ${v} today`, nearMiss: `the key is ${STORAGE_KEY.slice(0, 60)}== today` },
  {
    type: 'azure_sas_token',
    value: `sig=${'Zk3q'.repeat(11)}%3D`,
    text: (v) => `https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sr=b&${v}`,
    nearMiss: 'https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sr=b&sig=short',
  },
  { type: 'github_token', value: `ghp_${'a1B2'.repeat(9)}`, text: (v) => `token ${v}`, nearMiss: `token ghp_${'a1B2'.repeat(5)}` },
  { type: 'slack_token', value: 'xoxb-2048-1234567890-abcdefABCDEF', text: (v) => `bot ${v}`, nearMiss: 'bot xoxz-2048-1234567890-abcdef' },
  { type: 'stripe_key', value: `sk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}`, text: (v) => `stripe ${v}`, nearMiss: 'stripe sk_live_short' },
  { type: 'openai_key', value: `sk-proj-${'Xy9_'.repeat(12)}`, text: (v) => `OPENAI_API_KEY=${v}`, nearMiss: 'sk-proj-tooShort' },
  { type: 'jwt', value: JWT, text: (v) => `Authorization: Bearer ${v}`, nearMiss: 'Bearer eyJnotbase64!!.eyJ.x' },
  {
    type: 'private_key',
    value: '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1L7VLPHCgcbo\n-----END RSA PRIVATE KEY-----',
    text: (v) => `key:\n${v}\nend`,
    nearMiss: '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0B\n-----END PUBLIC KEY-----',
  },
  {
    type: 'password',
    value: 'S3cr3t!Pass',
    text: (v) => `Server=sql1;Database=hr;User Id=app;Password=${v};`,
    nearMiss: 'Server=sql1;Database=hr;User Id=app;Password=****;',
  },
  { type: 'card_number', value: '4111 1111 1111 1111', text: (v) => `my card is ${v} exp 12/29`, nearMiss: 'my card is 4111 1111 1111 1112 exp 12/29' },
  { type: 'us_ssn', value: '123-45-6789', text: (v) => `SSN ${v}`, nearMiss: 'SSN 666-45-6789, 900-12-3456, 123-00-6789, 123-45-0000' },
  { type: 'uk_nino', value: 'AB 12 34 56 C', text: (v) => `NI number ${v}`, nearMiss: 'NI numbers GB123456A QQ123456C AB123456E' },
  { type: 'iban', value: 'GB82 WEST 1234 5698 7654 32', text: (v) => `pay to ${v} now`, nearMiss: 'pay to GB82 WEST 1234 5698 7654 31 now' },
];

describe('inspectText', () => {
  it.each(CASES)('finds a $type and masks it', ({ type, value, text }) => {
    const input = text(value);
    const r = inspectText(input);
    expect(r.matches.map((m) => m.type)).toEqual([type]);
    const m = r.matches[0]!;
    expect(input.slice(m.offset, m.offset + m.length)).toBe(value);
    expect(m.excerpt).not.toContain(value);
    expect(m.excerpt).toContain(`…(${value.length})`);
    expect(r.redacted).not.toContain(value);
    expect(r.redacted).toContain(maskOf(type));
  });

  it.each(CASES)('does not flag the $type near-miss', ({ nearMiss }) => {
    const r = inspectText(nearMiss);
    expect(r.matches).toEqual([]);
    expect(r.redacted).toBe(nearMiss);
  });

  it('counts e-mail addresses only in bulk', () => {
    const five = 'ann@contoso.com, bob@contoso.com, cy@fabrikam.net, di@contoso.com, ed@northwind.org';
    expect(inspectText(five).matches.filter((m) => m.type === 'email')).toHaveLength(5);
    expect(inspectText('write to ann@contoso.com or bob@contoso.com').matches).toEqual([]);
    expect(inspectText(five, { bulkEmailThreshold: 6 }).matches).toEqual([]);
    expect(() => inspectText(five, { bulkEmailThreshold: 0 })).toThrow(RangeError);
  });

  it('masks other findings in the context of an excerpt, and never shows a whole secret', () => {
    const text = 'keys AKIAIOSFODNN7EXAMPLE AKIAI44QH8DHBEXAMPLE card 5555555555554444';
    const r = inspectText(text);
    expect(r.matches.map((m) => m.type)).toEqual(['aws_access_key', 'aws_access_key', 'card_number']);
    for (const m of r.matches) {
      for (const secret of ['AKIAIOSFODNN7EXAMPLE', 'AKIAI44QH8DHBEXAMPLE', '5555555555554444']) expect(m.excerpt).not.toContain(secret);
      expect(m.excerpt.length).toBeLessThanOrEqual(20 + 20 + 12);
    }
    expect(r.matches[1]!.excerpt).toContain('aws_access_key]');
    const short = inspectText('password=abcdef').matches[0]!;
    expect(short.excerpt).toContain('ab…(6)');
  });

  it('keeps one finding per span: a connection string is not also reported as its account key', () => {
    const text = `DefaultEndpointsProtocol=https;AccountName=a1b;AccountKey=${STORAGE_KEY}`;
    expect(inspectText(text).matches.map((m) => m.type)).toEqual(['azure_storage_connection_string']);
  });

  it('stays linear on adversarial input', () => {
    const text = `${'a'.repeat(200_000)}@${'b-'.repeat(50_000)} ${'1 '.repeat(50_000)} password= ${'eyJ'.repeat(20_000)}`;
    const t0 = performance.now();
    inspectText(text);
    // A catastrophic pattern takes minutes here; a linear scan a fraction of a second (generous bound for a busy CI).
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it('summarises findings for storage', () => {
    const s = summarize([inspectText('AKIAIOSFODNN7EXAMPLE 123-45-6789'), inspectText('4111111111111111 GB82WEST12345698765432 234-56-7890 345-67-8901')]);
    expect(s).toMatchObject({ secrets: 1, personal: 5, types: ['aws_access_key', 'card_number', 'iban', 'us_ssn'] });
    expect(s.excerpts).toHaveLength(5);
  });
});
