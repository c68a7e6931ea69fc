import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { normalizeIp, normalizeRecord } from '../../src/sources/managementActivity/records.ts';
import { credentialKeys, directoryChange, powerAppsActivity, powerPlatformAdminActivity } from '../../src/sources/managementActivity/views.ts';
import { loadDetections } from '../../src/detections/index.ts';
import { detectionContext } from '../support/detections.ts';

// Records and values from public sources (test/fixtures/real/audit-defects/SOURCES.md), read by the normaliser and
// the typed views the detections use.
const fixture = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../fixtures/real/audit-defects/${name}`, import.meta.url), 'utf8')) as T;
/** A record composed from documented facts (test/fixtures/composed/README.md): not a real record, kept apart from the corpus. */
const composed = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../fixtures/composed/${name}`, import.meta.url), 'utf8')) as T;

describe('client addresses (issue 15, defect 2)', () => {
  it('normalises every ClientIP form of the O365 integration test records; host names and empty values are null', () => {
    const records = fixture<Record<string, unknown>[]>('ip-formats.json');
    const got = records.map((r) => [r.ClientIP, normalizeRecord(r, 'Audit.General')!.clientIp]);
    expect(got).toEqual([
      ['[10.11.12.13]:12345', '10.11.12.13'],
      ['10.11.12.13:12345', '10.11.12.13'],
      ['10.11.12.13', '10.11.12.13'],
      ['::ffff:10.11.12.13', '10.11.12.13'],
      ['[::ffff:10.11.12.13]:12345', '10.11.12.13'],
      ['[2001:db8::abcd]:12345', '2001:db8::abcd'],
      ['2001:db8::abcd', '2001:db8::abcd'],
      ['[2001:db8::abcd]', '2001:db8::abcd'],
      ['[10.11.12.13]', '10.11.12.13'],
      ['localhost', null],
      ['[localhost]:12345', null],
      ['localhost:12345', null],
      ['[cool.client.local]:12345', null],
      ['cool.client.local', null],
      ['cool.client.local:12345', null],
    ]);
    // The raw record is the record as sent.
    expect(normalizeRecord(records[0]!, 'Audit.General')!.raw.ClientIP).toBe('[10.11.12.13]:12345');
  });

  it('takes ClientIP before the Exchange ClientIPAddress, IPv6 in canonical text form', () => {
    const e = normalizeRecord(fixture<Record<string, unknown>>('exchange-update.json'), 'Audit.Exchange')!;
    expect(e.clientIp).toBe('2603:10b6:5:1f4:cafe::28');
    expect(normalizeRecord({ ...e.raw, ClientIP: '' }, 'Audit.Exchange')!.clientIp).toBe('2a02:cf40:add:4002:91f2:a9b2:e09a:6fc6');
    expect(normalizeIp('2603:10B6:0005:01F4:CAFE:0:0:0028')).toBe('2603:10b6:5:1f4:cafe::28');
    expect(normalizeIp('[fe80::1%eth0]:443')).toBe('fe80::1');
  });

  it("reads the IPv4-mapped address of Microsoft's Power Apps example as IPv4", () => {
    const p = fixture<{ Name: string; Value: string }[]>('powerapps-propertycollection.json');
    expect(normalizeIp(p.find((x) => x.Name === 'enduser.ip_address')!.Value)).toBe('172.172.34.12');
  });

  it('falls back to the Azure AD ActorIpAddress when ClientIP is absent', () => {
    const [update] = composed<Record<string, unknown>[]>('sp-credentials.json');
    expect(normalizeRecord(update!, 'Audit.AzureActiveDirectory')!.clientIp).toBe('2001:db8::abcd');
  });
});

describe('Power Apps activity (issue 15, defect 4)', () => {
  // Microsoft's example is the record's PropertyCollection; the envelope is the common schema's.
  const record = (recordType: number) => ({
    Id: 'f88c7b59-6908-4f40-8489-7eca71b531b0',
    CreationTime: '2026-01-22T10:00:00',
    RecordType: recordType,
    Operation: 'AdminDeleteApp',
    OrganizationId: '99ca106f-36df-429e-9998-b6131ea7cc86',
    UserId: 'admin@M365DS679477.onmicrosoft.com',
    Workload: 'PowerPlatform',
    PropertyCollection: fixture<unknown[]>('powerapps-propertycollection.json'),
  });

  it('types the RecordType 256 PowerApp example with its app id, name, environment and activity', () => {
    const e = normalizeRecord(record(256), 'Audit.General')!;
    expect(powerAppsActivity(e)).toEqual({
      recordType: 256,
      appId: 'a81399c4-8e32-4460-b0d6-69d7d6c404e5',
      appName: 'Test canvas app',
      environmentId: 'default-99ca106f-36df-429e-9998-b6131ea7cc86',
      environmentName: 'Contoso (default)',
      activity: 'AdminDeleteApp',
      permissionType: null,
      targetPrincipal: null,
    });
    // The same record is an administrator activity on a PowerApp, not a bot.
    expect(powerPlatformAdminActivity(e)).toMatchObject({ resourceType: 'PowerApp', botId: null, customConnector: null });
    // With no ClientIP in the envelope, the caller's address is the property collection's, IPv4-mapped read as IPv4.
    expect(e.clientIp).toBe('172.172.34.12');
  });

  it('is not a Power Apps activity when the 256 record is about another resource', () => {
    const other = record(256);
    other.PropertyCollection = (other.PropertyCollection as { Name: string; Value: string }[]).map((p) =>
      p.Name === 'powerplatform.analytics.resource.type' ? { ...p, Value: 'Bot' } : p,
    );
    expect(powerAppsActivity(normalizeRecord(other, 'Audit.General')!)).toBeNull();
  });

  it('still reads the RecordType 45 form (AppName, AdditionalInfo)', () => {
    const e = normalizeRecord(
      {
        Id: 'x',
        CreationTime: '2026-01-22T10:00:00',
        RecordType: 45,
        Operation: 'LaunchPowerApp',
        AppName: 'a81399c4-8e32-4460-b0d6-69d7d6c404e5',
        AdditionalInfo: JSON.stringify({ environmentName: 'Default-99ca106f-36df-429e-9998-b6131ea7cc86', appDisplayName: 'Test canvas app' }),
      },
      'Audit.General',
    )!;
    expect(powerAppsActivity(e)).toMatchObject({
      recordType: 45,
      appId: 'a81399c4-8e32-4460-b0d6-69d7d6c404e5',
      appName: 'Test canvas app',
      activity: 'LaunchPowerApp',
    });
  });
});

describe('credentials added (issue 15, defect 6)', () => {
  const [secretBesideCert, certBesideSecret] = composed<Record<string, unknown>[]>('sp-credentials.json').map((r) =>
    normalizeRecord(r, 'Audit.AzureActiveDirectory')!,
  );
  const rule = loadDetections().find((d) => d.metadata.id === 'service_principal_credentials_added')!;
  const titles = async (events: NonNullable<ReturnType<typeof normalizeRecord>>[]) => (await rule.run(detectionContext({ events }))).map((h) => h.title);

  it('parses the KeyDescription list of a record', () => {
    expect(credentialKeys((secretBesideCert!.raw.ModifiedProperties as { NewValue: string }[])[0]!.NewValue)).toEqual([
      { keyId: '6c1a0f2e-3b4d-4c5e-8f60-718293a4b5c6', keyType: 'AsymmetricX509Cert', displayName: 'CN=contoso-sync' },
      { keyId: '480946b1-433f-4634-8b85-bfe21266007e', keyType: 'Password', displayName: 'test' },
    ]);
  });

  it('counts only the key the change added, not the keys the object already held', () => {
    expect(directoryChange(secretBesideCert!)!.keysAdded).toEqual([
      { keyId: '480946b1-433f-4634-8b85-bfe21266007e', keyType: 'Password', displayName: 'test' },
    ]);
    expect(directoryChange(certBesideSecret!)!.keyTypes).toEqual(['AsymmetricX509Cert']);
  });

  it('titles a secret added beside a certificate as a client secret, and the reverse as a certificate', async () => {
    expect(await titles([secretBesideCert!, certBesideSecret!])).toEqual([
      'Client secret added to Contoso Sync by admin@contoso.onmicrosoft.com',
      'Certificate added to Nexa-Payroll-Connector by admin@contoso.onmicrosoft.com',
    ]);
  });
});
