import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalWorld, type PortalWorld } from './harness.ts';

/**
 * Issue 15, defect 8: the dashboard showed "every check was evaluated" next to a partial run. Here, in Debian's
 * Chromium against `vigil serve` and the emulator, Contoso's collection is partial on purpose — one environment's
 * Dataverse answers 403 `0x80040220` (Vigil's application user holds no System Administrator role: missing privilege)
 * and, by the generated tenant's construction, another has no application user at all (403 `0x80072560`) — and the
 * dashboard must list what was not evaluated and why: the integration, the reason naming the environment and the
 * upstream code, the checks it stopped and the resources they could not judge.
 */
describe('portal dashboard on a partial run', () => {
  let w: PortalWorld;
  let page: Page;
  let privilegeEnv: { displayName: string };
  beforeAll(async () => {
    w = await portalWorld();
    page = w.page;
    const env = w.contoso.environments.find((e) => e.dataverse?.appUsers.some((a) => a.appId === w.contoso.connectorAppId))!;
    env.dataverse!.appUsers.find((a) => a.appId === w.contoso.connectorAppId)!.roles = [];
    privilegeEnv = { displayName: env.displayName };
  }, 120_000);
  afterAll(async () => w?.close());

  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  it('lists the checks not evaluated, grouped by reason, with the environment, the code and the resources', async () => {
    await page.goto(w.baseUrl);
    await page.getByLabel('Email').fill(w.email);
    await page.getByLabel('Password').fill(w.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();

    const app = w.contoso.apps.find((a) => a.appId === w.contoso.connectorAppId)!;
    await nav('Integrations').click();
    await page.getByRole('button', { name: 'CREATE NEW' }).click();
    await page.getByLabel('Customer-created app (Mode A)').check();
    await page.getByLabel('Name').fill('Contoso partial');
    await page.getByLabel('Tenant ID', { exact: true }).fill(w.contoso.id);
    await page.getByLabel('Client ID').fill(app.appId);
    await page.getByLabel('Client secret').fill(app.secrets[0]!.value);
    await page.getByRole('button', { name: 'Create integration' }).click();
    await page.locator('ol[aria-label="Setup checklist"]').waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Run collection' }).click();
    await page.getByText(/Collection finished/).waitFor({ timeout: 90_000 });
    expect(await page.getByText(/Collection finished/).textContent()).toMatch(/partial/);

    await nav('Dashboard').click();
    const coverage = page.getByRole('list', { name: 'Not evaluated, by reason' });
    await coverage.waitFor({ timeout: 30_000 });
    const text = (await coverage.textContent()) ?? '';
    expect(await page.getByRole('main').textContent()).not.toContain('Every check was evaluated');
    // The missing privilege, with the upstream's code and words, on the environment it hit …
    const privilege = coverage
      .getByRole('listitem')
      .filter({ hasText: '0x80040220' })
      .filter({ hasText: `environment ${privilegeEnv.displayName}` });
    expect(await privilege.count()).toBeGreaterThan(0);
    const group = privilege.first();
    expect(await group.getByRole('link', { name: 'Contoso partial' }).count()).toBe(1);
    expect(await group.textContent()).toMatch(/missing prv\w+ privilege/);
    // … stops the agent checks (guest ownership among them), each with how many and which resources or scopes.
    const rows = group.getByRole('row');
    expect(await rows.count()).toBeGreaterThan(1);
    expect(await group.getByRole('row').filter({ hasText: 'guest_owns_agent' }).textContent()).toContain(`environment ${privilegeEnv.displayName}`);
    expect(text).toContain('guest_owns_agent');
    expect(text).toMatch(/Copilot Studio agent owned by a guest user/);
    // The environment without an application user is listed for its own reason.
    expect(text).toContain('0x80072560');
    await w.screenshot('17-dashboard-partial-coverage');

    // The API serves the same list (what the portal renders), with resources for every group.
    const dash = (await (await page.request.get(`${w.baseUrl}/api/v1/dashboard`)).json()) as {
      coverage: { checkId: string; reason: string | null; notEvaluated: number; resources: unknown[] }[];
    };
    expect(dash.coverage.length).toBeGreaterThan(0);
    for (const c of dash.coverage) expect(c.resources.length, c.checkId).toBe(Math.min(c.notEvaluated, 10));
    expect(dash.coverage.some((c) => c.checkId === 'guest_owns_agent' && c.reason?.includes('0x80040220'))).toBe(true);
  });
});
