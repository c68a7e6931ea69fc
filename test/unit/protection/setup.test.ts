import { describe, expect, it } from 'vitest';
import { federatedSubject, normaliseBaseUrl, protectionSetup } from '../../../src/protection/setup.ts';

describe('protection set-up', () => {
  it('builds the federated credential subject Copilot Studio presents (tenant and app GUIDs in .NET byte order)', () => {
    // Expected value computed independently: Python uuid.UUID(x).bytes_le, base64url without padding.
    // uuid.UUID('72f988bf-86f1-41af-91ab-2d7cd011db47').bytes_le → bf 88 f9 72 f1 86 af 41 91 ab 2d 7c d0 11 db 47
    const subject = federatedSubject('72F988BF-86F1-41AF-91AB-2D7CD011DB47', 'https://vigil.example.com/protection/pe_1/');
    const [, , , , , tenant, , app, endpoint] = subject.split('/');
    expect(subject.startsWith('/eid1/c/pub/t/')).toBe(true);
    expect(Buffer.from(tenant!, 'base64url').toString('hex')).toBe('bf88f972f186af4191ab2d7cd011db47');
    // Copilot Studio's first-party app as published in implementers' set-up documents.
    expect(app).toBe('m1WPnYRZpEaQKq1Cceg--g');
    expect(Buffer.from(endpoint!, 'base64url').toString('utf8')).toBe('https://vigil.example.com/protection/pe_1');
    expect(subject).not.toMatch(/[=+]/);
  });

  it('refuses a tenant id that is not a GUID', () => {
    expect(() => federatedSubject('contoso.onmicrosoft.com', 'https://x')).toThrow(/not a GUID/);
  });

  it('gives steps, Graph calls and a script with the same values', () => {
    const s = protectionSetup({
      cloud: { authorityHost: 'https://login.microsoftonline.com/' },
      tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47',
      baseUrl: 'https://vigil.example.com/protection/pe_1/',
      appId: null,
    });
    expect(s.baseUrl).toBe(normaliseBaseUrl('https://vigil.example.com/protection/pe_1'));
    expect(s.federatedCredential.issuer).toBe('https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0');
    expect(s.federatedCredential.audiences).toEqual(['api://AzureADTokenExchange']);
    expect(s.graph[0]!.body).toMatchObject({ signInAudience: 'AzureADMyOrg', identifierUris: ['https://vigil.example.com/protection/pe_1'] });
    expect(s.graph[2]!.body).toEqual(s.federatedCredential);
    expect(s.powershell).toContain(s.federatedCredential.subject);
    expect(s.steps.map((x) => x.detail.join(' ')).join(' ')).toContain(s.federatedCredential.subject);
    // Without an application yet, step 3 says every call is refused until Vigil is given its id; with one, it names it.
    expect(s.steps[2]!.detail.join(' ')).toMatch(/application \(client\) ID.*refused/);
    const configured = protectionSetup({
      cloud: { authorityHost: 'https://login.microsoftonline.com' },
      tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47',
      baseUrl: 'https://vigil.example.com/protection/pe_1',
      appId: '0a1b2c3d-0000-4000-8000-000000000001',
    });
    expect(configured.steps[2]!.detail.join(' ')).toContain('0a1b2c3d-0000-4000-8000-000000000001');
  });
});
