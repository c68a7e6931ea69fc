import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiWorld, type ApiWorld } from './harness.ts';

describe('portal sign-in: cookies, rate limit, lock-out', () => {
  let w: ApiWorld;
  beforeAll(async () => {
    w = await apiWorld({ VIGIL_LOGIN_ATTEMPTS_PER_MINUTE: '8', VIGIL_TRUST_PROXY: '127.0.0.1' });
  });
  afterAll(async () => w?.close());

  const login = (email: string, password: string, headers: Record<string, string> = {}) => w.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, headers, remoteAddress: headers['x-test-ip'] ?? '127.0.0.1' });

  it('sets an HttpOnly SameSite=Strict session cookie, Secure behind a TLS proxy, and a readable CSRF cookie', async () => {
    const res = await login('viewer@contoso.test', w.password, { 'x-forwarded-proto': 'https' });
    expect(res.statusCode).toBe(200);
    const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    const session = set.find((c) => c.startsWith('vigil_session='))!;
    const csrf = set.find((c) => c.startsWith('vigil_csrf='))!;
    expect(session).toMatch(/; HttpOnly/);
    expect(session).toMatch(/; SameSite=Strict/);
    expect(session).toMatch(/; Secure/);
    expect(session).toMatch(/; Max-Age=43200/);
    expect(csrf).not.toMatch(/HttpOnly/);
    expect(csrf).toContain(`vigil_csrf=${res.json().csrfToken}`);
    expect(res.body).not.toContain(session.split(';')[0]!.split('=')[1]);
    // The session token is stored only as its SHA-256.
    const token = session.split(';')[0]!.split('=')[1]!;
    const stored = await w.rt.db.selectFrom('portal_sessions').select('id').execute();
    expect(stored.map((s) => s.id)).not.toContain(token);
  });

  it('answers the same 401 for an unknown email, a wrong password and a locked account; 5 failures lock it', async () => {
    const unknown = await login('nobody@contoso.test', 'whatever-password', { 'x-test-ip': '10.0.0.1' });
    expect(unknown.statusCode).toBe(401);
    for (let i = 0; i < 5; i++) expect((await login('admin@fabrikam.test', 'wrong password!', { 'x-test-ip': '10.0.0.2' })).statusCode).toBe(401);
    const locked = await login('admin@fabrikam.test', w.password, { 'x-test-ip': '10.0.0.3' });
    expect(locked.statusCode).toBe(401);
    expect(locked.json()).toEqual(unknown.json());
  });

  it('limits sign-in attempts per client address (429 with Retry-After), other addresses unaffected', async () => {
    let last;
    for (let i = 0; i < 9; i++) last = await login('viewer@contoso.test', 'wrong password!', { 'x-test-ip': '10.0.0.9' });
    expect(last!.statusCode).toBe(429);
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    expect((await login('viewer@fabrikam.test', w.password, { 'x-test-ip': '10.0.0.10' })).statusCode).toBe(200);
  });

  it('serves API answers with no-store and security headers', async () => {
    const res = await login('viewer@fabrikam.test', w.password, { 'x-test-ip': '10.0.0.11' });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(String(res.headers['content-security-policy'])).toContain("default-src 'none'");
  });
});
