import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiWorld, type ApiWorld } from './harness.ts';

describe('portal sign-in: cookies, rate limit, lock-out', () => {
  let w: ApiWorld;
  beforeAll(async () => {
    w = await apiWorld({ VIGIL_LOGIN_ATTEMPTS_PER_MINUTE: '8', VIGIL_TRUST_PROXY: '127.0.0.1' });
  });
  afterAll(async () => w?.close());

  const login = (email: string, password: string, headers: Record<string, string> = {}) =>
    w.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, headers, remoteAddress: headers['x-test-ip'] ?? '127.0.0.1' });

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

  it('answers 400 naming the field, never 500, for a NUL character in any input', async () => {
    const signIn = await login('viewer@contoso.test\u0000', w.password, { 'x-test-ip': '10.0.0.12' });
    expect(signIn.statusCode).toBe(400);
    expect(signIn.json().error).toMatchObject({ code: 'NUL_IN_INPUT', field: 'email' });
    const auth = { authorization: `Bearer ${w.keys.contosoAdmin}` };
    const query = await w.app.inject({ method: 'GET', url: '/api/v1/findings?status=open%00', headers: auth });
    expect([query.statusCode, query.json().error.field]).toEqual([400, 'status']);
    const path = await w.app.inject({ method: 'GET', url: '/api/v1/integrations/int%00x', headers: auth });
    expect([path.statusCode, path.json().error.code]).toEqual([400, 'NUL_IN_INPUT']);
    const nested = await w.app.inject({
      method: 'POST',
      url: '/api/v1/integrations',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"mode":"customer-app","name":"x","tenant":{"a":["ok","b\\u0000"]}}',
    });
    expect([nested.statusCode, nested.json().error.field]).toEqual([400, 'tenant.a[1]']);
  });

  it('serves API answers with no-store and security headers', async () => {
    const res = await login('viewer@fabrikam.test', w.password, { 'x-test-ip': '10.0.0.11' });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(String(res.headers['content-security-policy'])).toContain("default-src 'none'");
  });
});

describe('lock-out under a concurrent burst over real HTTP', () => {
  let w: ApiWorld;
  let base: string;
  beforeAll(async () => {
    // 20 attempts a minute per address: the burst below (10 per address) is never rate limited, so every attempt
    // reaches the password check and the lock-out alone must stop it.
    w = await apiWorld({ VIGIL_LOGIN_ATTEMPTS_PER_MINUTE: '20', VIGIL_TRUST_PROXY: '127.0.0.1' });
    base = await w.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => w?.close());

  const login = (password: string, clientAddress: string) =>
    fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': clientAddress },
      body: JSON.stringify({ email: 'admin@contoso.test', password }),
    }).then((r) => r.status);

  it('30 wrong passwords sent at once from three addresses lock the account: the right password is then refused', async () => {
    const addresses = ['198.51.100.1', '198.51.100.2', '198.51.100.3'];
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => login(`wrong password ${i}`, addresses[i % 3]!)));
    expect(statuses).toEqual(Array.from({ length: 30 }, () => 401));
    const user = await w.rt.db.selectFrom('portal_users').select(['locked_until']).where('email', '=', 'admin@contoso.test').executeTakeFirstOrThrow();
    expect(user.locked_until).not.toBeNull();
    expect(await login(w.password, '198.51.100.4')).toBe(401);
    // The other users of the deployment are not affected.
    expect(
      await fetch(`${base}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.4' },
        body: JSON.stringify({ email: 'viewer@contoso.test', password: w.password }),
      }).then((r) => r.status),
    ).toBe(200);
  });
});
