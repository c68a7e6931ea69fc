import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPortalUser, ensureOrganization } from '../../src/access/index.ts';
import { loadCustomProfile } from '../../src/config/cloud.ts';
import { createRuntime } from '../../src/main/runtime.ts';
import { TEST_ENV } from '../e2e/harness.ts';
import { portalWorld, type PortalWorld } from './harness.ts';
import { apiSession, createdIntegration, recordProblems, signIn, type ApiSession } from './session.ts';

type Policies = {
  policies: { id: string; fields: Record<string, unknown> }[];
  effective: { mode: string; detectors: Record<string, { action: string; threshold: number }>; allow: Record<string, string[]>; policyIds: string[] };
};

/**
 * The protection policy in the portal (issue 19), in Debian's Chromium against a real `vigil serve`: Contoso's
 * integration is created through the API; an admin opens its Protection page, reads the effective policy (the
 * defaults: monitor), sets block mode, a jailbreak threshold of 0.9 and an approved MCP server with the keyboard, and
 * sees the effective policy change (and the API agree); an invalid host is refused next to its field and nothing is
 * saved; a viewer reads the policy but gets no form. No console error, page error or CSP violation.
 */
describe('portal: protection policy', () => {
  let w: PortalWorld;
  let page: Page;
  let integrationId: string;
  let api: ApiSession;
  const viewer = { email: 'viewer@contoso.test', password: 'another correct horse battery' };
  const problems: string[] = [];
  let signedIn = false;
  /** The server's 400 to an invalid policy is the browser's one expected console error (its network log), counted here. */
  let expected400 = 0;
  const watch = (p: Page, always = false) =>
    recordProblems(p, problems, {
      counting: () => always || signedIn,
      expected: (m) => {
        const is400 = m.text().includes('status of 400') && m.location().url.endsWith(`/protection/${integrationId}/policy`);
        if (is400) expected400 += 1;
        return is400;
      },
    });

  beforeAll(async () => {
    w = await portalWorld();
    page = w.page;
    await watch(page);
    api = await apiSession(w);
    integrationId = await createdIntegration(w, api);
    const rt = await createRuntime({ dataDir: w.dataDir, cloud: loadCustomProfile(w.endpointsFile), env: { ...TEST_ENV, VIGIL_DATA_DIR: w.dataDir } });
    try {
      const org = await ensureOrganization(rt.db, 'Contoso');
      await addPortalUser(rt.db, { organizationId: org.id, email: viewer.email, password: viewer.password, role: 'viewer', displayName: 'Vic Viewer' });
    } finally {
      await rt.close();
    }
  }, 120_000);
  afterAll(async () => w?.close());

  const policies = async (): Promise<Policies> => api.get<Policies>(`/protection/${integrationId}/policies`);
  const section = () => page.getByRole('region', { name: 'Policy', exact: true });
  const detectorRow = (p: Page, title: string) =>
    p.getByRole('region', { name: 'Detectors of the effective policy' }).getByRole('row').filter({ hasText: title });

  it('shows the effective policy to an admin: the defaults (monitor), the budget, the detectors and where each comes from', async () => {
    await signIn(w, page);
    signedIn = true;
    await page.goto(`${w.baseUrl}/protection/${integrationId}`);
    await page.getByRole('heading', { name: 'Policy', exact: true }).waitFor();
    await detectorRow(page, 'Jailbreak').waitFor();
    const text = (await section().textContent()) ?? '';
    expect(text).toContain('Monitor: Vigil decides and records what it would block, but allows every tool call.');
    expect(text).toMatch(/250 ms/);
    expect(text).toContain('allow the tool call');
    expect(text).toContain('none: the defaults');
    expect(await detectorRow(page, 'Jailbreak').textContent()).toMatch(/alert.*0\.8.*defaults/s);
    expect(await detectorRow(page, 'Prompt injection').textContent()).toMatch(/block.*0\.8/s);
    // The form is prefilled with the effective policy.
    expect(await page.getByLabel('Mode', { exact: true }).inputValue()).toBe('monitor');
    expect(await page.getByLabel('Threshold of Jailbreak').inputValue()).toBe('0.8');
    await w.screenshot('policy-01-defaults');
  });

  it('saves block mode, a jailbreak threshold of 0.9 and an approved MCP server: the effective policy changes and the API agrees', async () => {
    await page.getByLabel('Mode', { exact: true }).selectOption('block');
    await page.getByLabel('Threshold of Jailbreak').fill('0.9');
    await page.getByLabel('Approved MCP servers').fill('MCP.contoso.com\n');
    // Keyboard: Save is reachable and pressed with Enter.
    await page.getByRole('button', { name: 'Save policy' }).focus();
    await page.keyboard.press('Enter');
    await page
      .getByRole('status')
      .filter({ hasText: /Policy .* saved/ })
      .waitFor();
    await expect.poll(async () => (await section().textContent()) ?? '').toContain('Block: Vigil blocks the tool calls');
    const api = await policies();
    expect(api.effective.mode).toBe('block');
    expect(api.effective.detectors.jailbreak).toEqual({ action: 'alert', threshold: 0.9 });
    expect(api.effective.allow.mcpServers).toEqual(['mcp.contoso.com']);
    expect(api.effective.allow.hosts).toEqual([]);
    expect(api.policies).toHaveLength(1);
    const id = api.policies[0]!.id;
    // Only the fields changed were sent: the policy sets nothing else.
    expect(Object.keys(api.policies[0]!.fields).sort()).toEqual(['allow', 'detectors', 'mode']);
    expect(api.policies[0]!.fields.detectors).toEqual({ jailbreak: { threshold: 0.9 } });
    expect(api.effective.policyIds).toEqual([id]);
    // The page shows the same, with the policy as the source of the fields it sets.
    expect(await detectorRow(page, 'Jailbreak').textContent()).toMatch(new RegExp(`alert.*0\\.9.*${id}`, 's'));
    expect(await detectorRow(page, 'Prompt injection').textContent()).toMatch(/defaults/);
    const allow = page.getByRole('definition').filter({ hasText: 'mcp.contoso.com' });
    expect(await allow.textContent()).toContain(id);
    expect(await page.getByLabel('Threshold of Jailbreak').inputValue()).toBe('0.9');
    expect(await page.getByLabel('Approved MCP servers').inputValue()).toBe('mcp.contoso.com');
    await w.screenshot('policy-02-saved');
  });

  it('shows an invalid host next to its field and in the summary, and saves nothing', async () => {
    const before = await policies();
    await page.getByLabel('Approved hosts').fill('api.contoso.com\nhttps://evil.example/path');
    await page.getByRole('button', { name: 'Save policy' }).click();
    const summary = page.getByRole('alert').filter({ hasText: 'The policy was not saved' });
    await summary.waitFor();
    expect(await summary.textContent()).toMatch(/Line 2: must be a host name/);
    const field = page.getByLabel('Approved hosts');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    const errorId = (await field.getAttribute('aria-describedby'))!.split(' ')[0]!;
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toMatch(/Line 2: must be a host name/);
    // The summary links to the field.
    expect(await summary.getByRole('link').getAttribute('href')).toBe('#pol-allow-hosts');
    const after = await policies();
    expect(after).toEqual(before);
    expect(expected400).toBe(1);
    // A threshold out of range is caught before asking the server.
    await page.getByLabel('Approved hosts').fill('');
    await page.getByLabel('Threshold of Jailbreak').fill('1.5');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(async () => (await summary.textContent()) ?? '').toContain('The threshold of Jailbreak must be a number from 0 to 1.');
    expect(await page.getByLabel('Threshold of Jailbreak').getAttribute('aria-invalid')).toBe('true');
    expect(await policies()).toEqual(before);
    expect(expected400).toBe(1); // refused in the browser: no second request
    await w.screenshot('policy-03-invalid');
  });

  it("changes a detector's action and keeps the threshold the same policy set for it", async () => {
    await page.getByLabel('Threshold of Jailbreak').fill('0.9');
    await page.getByLabel('Action of Jailbreak').selectOption('block');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(async () => (await detectorRow(page, 'Jailbreak').textContent()) ?? '').toMatch(/block.*0\.9/s);
    const api = await policies();
    expect(api.policies).toHaveLength(1);
    expect(api.policies[0]!.fields.detectors).toEqual({ jailbreak: { action: 'block', threshold: 0.9 } });
    expect(api.effective.detectors.jailbreak).toEqual({ action: 'block', threshold: 0.9 });
    expect(api.effective.allow.mcpServers).toEqual(['mcp.contoso.com']);
  });

  it('shows a viewer the effective policy and no form', async () => {
    let context: BrowserContext | undefined;
    try {
      context = await w.browser.newContext({ viewport: { width: 1280, height: 800 } });
      const p = await context.newPage();
      await signIn(w, p, viewer);
      await watch(p, true);
      await p.goto(`${w.baseUrl}/protection/${integrationId}`);
      await detectorRow(p, 'Jailbreak').waitFor();
      expect(await detectorRow(p, 'Jailbreak').textContent()).toMatch(/0\.9/);
      expect(await p.getByRole('region', { name: 'Policy', exact: true }).textContent()).toContain('Block: Vigil blocks');
      expect(await p.getByRole('button', { name: 'Save policy' }).count()).toBe(0);
      expect(await p.getByLabel('Mode', { exact: true }).count()).toBe(0);
      expect(await p.locator('form.policy-form').count()).toBe(0);
      await w.screenshot('policy-04-viewer', p);
    } finally {
      await context?.close();
    }
  });

  it('raised no console error, page error or CSP violation', async () => {
    await page.reload();
    await page.getByRole('heading', { name: 'Policy', exact: true }).waitFor();
    await detectorRow(page, 'Jailbreak').waitFor();
    expect(problems).toEqual([]);
  });
});
