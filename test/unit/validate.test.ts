import { describe, expect, it } from 'vitest';
import { parseSecretExpiry, validateCustomerAppInput } from '../../src/onboarding/validate.ts';

const ok = { tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47', clientId: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', clientSecret: 'abc8Q~valuevaluevalue' };
const now = new Date('2026-11-21T10:00:00Z');

describe('Mode A input validation', () => {
  it.each([
    ['tenantId', 'contoso.com', 'tenantId', /not a GUID/],
    ['tenantId', '', 'tenantId', /required/],
    ['clientId', '1234', 'clientId', /not a GUID/],
    ['clientSecret', '   ', 'clientSecret', /empty/],
  ])('rejects %s=%j naming %s', (key, value, field, message) => {
    const err = (() => {
      try {
        validateCustomerAppInput({ ...ok, [key]: value }, now);
      } catch (e) {
        return e as { field: string; message: string; remediation: string };
      }
      throw new Error('accepted');
    })();
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
    expect(err.remediation.length).toBeGreaterThan(10);
  });

  it('says a GUID secret is the Secret ID, not the value', () => {
    expect(() => validateCustomerAppInput({ ...ok, clientSecret: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d' }, now)).toThrow(/Secret ID, not the secret value/);
  });

  it('defaults the secret expiry to 24 months from today', () => {
    expect(validateCustomerAppInput(ok, now).secretExpiresAt).toBe('2028-11-21T00:00:00.000Z');
  });

  it('lower-cases GUIDs and names the integration after the tenant by default', () => {
    const v = validateCustomerAppInput({ ...ok, tenantId: ok.tenantId.toUpperCase() }, now);
    expect(v.tenantId).toBe(ok.tenantId);
    expect(v.name).toBe('tenant-72f988bf');
  });

  it.each(['2026-11-20', '2025-01-01', 'next year', '2027-02-30', '21/11/2028'])('rejects expiry %j', (value) => {
    expect(() => parseSecretExpiry(value, now)).toThrow(expect.objectContaining({ field: 'secretExpires' }));
  });

  it('accepts a future date and a full timestamp', () => {
    expect(parseSecretExpiry('2027-05-01', now)).toBe('2027-05-01T00:00:00.000Z');
    expect(parseSecretExpiry('2027-05-01T12:30:00Z', now)).toBe('2027-05-01T12:30:00.000Z');
  });
});

describe('client secret expiry warning', async () => {
  const { secretExpiryWarning } = await import('../../src/integration/index.ts');
  it('warns at 90 days, urgently at 7, and after expiry, naming the portal page and the rotation command', () => {
    expect(secretExpiryWarning({ name: 'C', secretDaysLeft: 91, secretExpiresAt: '2027-01-01T00:00:00Z' })).toBeNull();
    expect(secretExpiryWarning({ name: 'C', secretDaysLeft: 90, secretExpiresAt: '2027-01-01T00:00:00Z' })).toMatch(/expires in 90 days/);
    expect(secretExpiryWarning({ name: 'C', secretDaysLeft: 7, secretExpiresAt: '2027-01-01T00:00:00Z' })).toMatch(/^URGENT/);
    expect(secretExpiryWarning({ name: 'C', secretDaysLeft: 12, secretExpiresAt: '2027-01-01T00:00:00Z' })).toMatch(
      /expires in 12 days .*Certificates & secrets/,
    );
    expect(secretExpiryWarning({ name: 'C', secretDaysLeft: -2, secretExpiresAt: '2027-01-01T00:00:00Z' })).toMatch(/expired on 2027-01-01/);
  });
});
