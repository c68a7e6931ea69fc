import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantAccounts } from '../../emulator/index.ts';
import { loadCustomProfile } from '../../src/config/cloud.ts';
import { createRuntime } from '../../src/main/runtime.ts';
import { raiseAlert, setAlertStatus } from '../../src/store/repositories/audit.ts';
import { TEST_ENV } from '../e2e/harness.ts';
import { seedConversation, type SeededConversation } from '../support/protection-steps.ts';
import { portalWorld, type PortalWorld } from './harness.ts';
import { apiSession, createdIntegration, recordProblems, runCollection, signIn } from './session.ts';

/**
 * Runtime protection in the portal (issue 19), in Debian's Chromium against a real `vigil serve` (VIGIL_API_URL set, so
 * the endpoint's base URL is known): Contoso's integration is created and collected through the API, its endpoint
 * enabled and one conversation's steps stored as the webhook stores them (test/support/protection-steps.ts); then a
 * person signs in, opens Protection, reads the decisions per integration (24 hours, 7 days, top detectors) and the
 * chart of decisions over time, the set-up (the base URL, an environment by name with its analyses, its id on request),
 * the decisions (filtered by outcome, detector, time range and text, in either order, the filters in the URL) and a
 * conversation's timeline with the detectors' redacted evidence — with no console error
 * and no CSP violation, by keyboard where it matters.
 */
describe('portal: runtime protection', () => {
  let w: PortalWorld;
  let page: Page;
  let seeded: SeededConversation;
  let integrationId: string;
  let environmentName: string;
  /** When the blocked step (the last seeded) was received. */
  let blockedAt: string;
  const problems: string[] = [];
  /** Console messages count from sign-in on (before it, the portal's session check answers 401 by design). */
  let signedIn = false;

  beforeAll(async () => {
    w = await portalWorld({ publicApiUrl: true });
    page = w.page;
    await recordProblems(page, problems, { counting: () => signedIn });
    // Create and collect the integration through the API (the portal's own forms are covered by portal.test.ts).
    const api = await apiSession(w);
    // Containment signs an administrator in by device code through the integration's app (public client flows on).
    w.contoso.apps.find((a) => a.appId === w.contoso.connectorAppId)!.isFallbackPublicClient = true;
    w.emulator.control.setDeviceCodeSettings({ intervalSeconds: 1 });
    integrationId = await createdIntegration(w, api);
    await runCollection(w, api, integrationId);
    const rt = await createRuntime({ dataDir: w.dataDir, cloud: loadCustomProfile(w.endpointsFile), env: { ...TEST_ENV, VIGIL_DATA_DIR: w.dataDir } });
    try {
      seeded = await seedConversation(rt.db, integrationId, { appId: '11111111-2222-4333-8444-555555555555', apiUrl: w.baseUrl });
      const alert = await raiseAlert(
        rt.db,
        {
          integrationId,
          ruleId: 'protection_prompt_injection',
          severity: 'high',
          title: `Prompt injection against ${seeded.agentName}`,
          dedupeKey: 'portal-containment',
          detail: { agentId: seeded.agentId, environmentId: seeded.environmentId, agentName: seeded.agentName },
        },
        new Date().toISOString(),
      );
      // Acknowledged, so the Alerts page finds it under that filter among the many alerts the collection raised.
      await setAlertStatus(rt.db, alert.id, 'acknowledged', new Date().toISOString());
      environmentName = (await rt.db.selectFrom('environments').select('display_name').where('id', '=', seeded.environmentId).executeTakeFirstOrThrow())
        .display_name!;
      blockedAt = (await rt.db.selectFrom('agent_steps').select('received_at').where('id', '=', seeded.stepIds[2]!).executeTakeFirstOrThrow()).received_at;
    } finally {
      await rt.close();
    }
  }, 180_000);
  afterAll(async () => w?.close());

  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  it('signs in and opens Protection: each integration with its endpoint and decisions, and the decisions over time', async () => {
    await signIn(w);
    signedIn = true;
    await nav('Protection').click();
    const table = page.getByRole('region', { name: 'Integrations and their protection endpoints' });
    await table.waitFor();
    const row = table.getByRole('row').filter({ hasText: 'Contoso' });
    await expect.poll(async () => (await row.textContent()) ?? '').toContain('prompt_injection');
    const cells = row.getByRole('cell');
    expect(await cells.nth(1).textContent()).toMatch(/ok/);
    // Last 24 hours and 7 days: blocked / would block / allowed / timeouts; the top detectors of the week.
    for (const window of [2, 3]) expect(await cells.nth(window).textContent()).toMatch(/^1 blocked \/ 1 would block \/ 1 allowed \/ 0 timeouts$/);
    // Each nonzero decision count opens those decisions.
    await cells.nth(2).getByRole('link', { name: '1 blocked' }).waitFor();
    expect(await cells.nth(4).textContent()).toMatch(/prompt_injection\s*1.*sensitive_data_egress\s*1/s);
    expect(await page.getByRole('status').filter({ hasText: 'last 24 hours' }).textContent()).toContain('3 tool calls, 1 blocked, 1 would block');
    // The chart: one image named by what it shows, per day, then per hour (the period kept in the URL).
    const chart = page.getByRole('img', { name: /^Tool calls analysed per day/ });
    await chart.waitFor();
    expect(await chart.getAttribute('aria-label')).toContain('1 blocked, 1 would block, 0 timed out, 1 allowed');
    expect(await chart.locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    await w.screenshot('protection-01-list');
    await page.getByLabel('Period', { exact: true }).selectOption('hour');
    await page.getByRole('img', { name: /^Tool calls analysed per hour/ }).waitFor();
    expect(page.url()).toContain('bucket=hour');
    await page.getByLabel('Period', { exact: true }).selectOption('day');
    await chart.waitFor();
  });

  it('shows the set-up: the base URL to copy, the values and steps, an environment by name with its analyses', async () => {
    // Keyboard: the integration's link is reachable and opens with Enter.
    await page.getByRole('link', { name: 'Contoso', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Protection of Contoso' }).waitFor();
    const baseUrl = `${w.baseUrl}/protection/${seeded.endpointId}`;
    const block = page.getByLabel('Endpoint link (base URL)', { exact: true });
    await block.first().waitFor();
    expect((await block.first().textContent())?.trim()).toBe(baseUrl);
    expect(await page.getByLabel('Federated credential subject').textContent()).toMatch(/^\/eid1\/c\/pub\/t\//);
    expect(await page.getByRole('main').textContent()).toContain('Connect each environment in the Power Platform admin center');
    const envRow = page.getByRole('region', { name: 'Analyses received per environment' }).getByRole('row').filter({ hasText: environmentName });
    // The environment by name; its id only on request (Show id) and as the name's title.
    const envId = envRow.getByText(seeded.environmentId, { exact: true });
    expect(await envId.isVisible()).toBe(false);
    expect(await envRow.getByTitle(seeded.environmentId).textContent()).toBe(environmentName);
    await envRow.getByText('Show id').click();
    expect(await envId.isVisible()).toBe(true);
    // Columns: environment, agents by orchestration (generative / classic), agents calling, analyses, first, last.
    expect((await envRow.getByRole('cell').nth(1).textContent())?.trim()).toMatch(/^\d+ \/ \d+/);
    expect((await envRow.getByRole('cell').nth(2).textContent())?.trim()).toBe('1');
    expect((await envRow.getByRole('cell').nth(3).textContent())?.trim()).toBe('3');
    // Copilot Studio never validated it (no /validate call): the problem says what to do.
    expect(await page.getByRole('note').textContent()).toMatch(/never validated/);
    await w.screenshot('protection-02-setup');
  });

  it('shows the decisions with agent, environment and tool names, and filters them by outcome', async () => {
    const decisions = page.getByRole('region', { name: "Tool calls and Vigil's answers" });
    await decisions.waitFor();
    const rows = decisions.getByRole('row');
    await expect.poll(() => rows.count()).toBe(3); // header + blocked + would block
    const first = (await rows.nth(1).textContent()) ?? '';
    expect(first).toContain('blocked');
    expect(first).toContain(seeded.agentName);
    expect(first).toContain(environmentName);
    expect(first).not.toContain(seeded.environmentId);
    expect(first).not.toContain(seeded.agentId);
    expect(first).toContain('Send an email (V2)');
    expect(first).toContain('sensitive_data_egress');
    expect(await rows.nth(2).textContent()).toContain('would block');
    expect(await page.getByRole('status').filter({ hasText: 'on this page' }).textContent()).toContain('2 decisions match; 2 on this page.');
    await page.getByLabel('Outcome').selectOption('allowed');
    await expect.poll(async () => (await rows.nth(1).textContent()) ?? '').toContain('Search documents');
    expect(await rows.count()).toBe(2);
    await page.getByLabel('Outcome').selectOption('decision');
    await expect.poll(() => rows.count()).toBe(3);
    await w.screenshot('protection-03-decisions');
  });

  it('filters the decisions by detector, time range and text, sorts them oldest first, every filter in the URL', async () => {
    const decisions = page.getByRole('region', { name: "Tool calls and Vigil's answers" });
    const rows = decisions.getByRole('row');
    const status = page.getByRole('status').filter({ hasText: 'on this page' });
    // Detector: chosen by name (with its count), kept in the URL.
    await page.getByLabel('Detector', { exact: true }).selectOption('prompt_injection');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.nth(1).textContent()).toContain('would block');
    expect(page.url()).toContain('detector=prompt_injection');
    await expect.poll(async () => (await status.textContent()) ?? '').toContain('1 decision matches');
    // A reload keeps it (the filter is a bookmark).
    await page.reload();
    await expect.poll(() => rows.count()).toBe(2);
    expect(await page.getByLabel('Detector', { exact: true }).inputValue()).toBe('prompt_injection');
    await page.getByLabel('Detector', { exact: true }).selectOption('');
    await expect.poll(() => rows.count()).toBe(3);
    // Time range (UTC): until the minute the blocked step came in leaves the would-block one; from it, the blocked one.
    const minute = blockedAt.slice(0, 16);
    await page.getByLabel('Until (UTC)').fill(minute);
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.nth(1).textContent()).toContain('would block');
    expect(decodeURIComponent(page.url())).toContain(`until=${minute}:00Z`);
    await page.getByLabel('Until (UTC)').fill('');
    await page.getByLabel('From (UTC)').fill(minute);
    await page.getByLabel('From (UTC)').press('Enter');
    await expect.poll(async () => (await rows.nth(1).textContent()) ?? '').toContain('sensitive_data_egress');
    expect(await rows.count()).toBe(2);
    await page.getByLabel('From (UTC)').fill('');
    // Text in the tool's name or the reason.
    await page.getByLabel('Tool or reason').fill('injection');
    await page.getByLabel('Tool or reason').press('Enter');
    await expect.poll(async () => (await rows.nth(1).textContent()) ?? '').toContain('Prompt injection in a previous tool output.');
    expect(await rows.count()).toBe(2);
    expect(page.url()).toContain('q=injection');
    expect(page.url()).not.toContain('since=');
    await w.screenshot('protection-08-decisions-filtered');
    await page.getByLabel('Tool or reason').fill('');
    await page.getByLabel('Tool or reason').press('Enter');
    await expect.poll(() => rows.count()).toBe(3);
    // Oldest first by the Time header; again for newest first.
    await decisions.getByRole('button', { name: /^Time/ }).click();
    await expect.poll(async () => (await rows.nth(1).textContent()) ?? '').toContain('would block');
    expect(page.url()).toContain('order=asc');
    expect(await decisions.getByRole('columnheader', { name: /^Time/ }).getAttribute('aria-sort')).toBe('ascending');
    await decisions.getByRole('button', { name: /^Time/ }).click();
    await expect.poll(async () => (await rows.nth(1).textContent()) ?? '').toContain('sensitive_data_egress');
  });

  it("opens a conversation's timeline: each step's tool, decision, detectors with redacted evidence and latency, oldest first", async () => {
    await page
      .getByRole('region', { name: "Tool calls and Vigil's answers" })
      .getByRole('link', { name: /^Timeline/ })
      .first()
      .click();
    await page.getByRole('heading', { name: `Conversation with ${seeded.agentName}` }).waitFor();
    const steps = page.getByRole('list', { name: 'Steps, oldest first' }).locator(':scope > li');
    expect(await steps.count()).toBe(3);
    expect(await steps.nth(0).textContent()).toMatch(/allowed.*Search documents.*12\.3 ms/s);
    const injected = (await steps.nth(1).textContent()) ?? '';
    expect(injected).toMatch(/would block.*Send an email \(V2\)/s);
    expect(injected).toContain('prompt_injection');
    expect(injected).toContain('previousOutputs[0].outputs[0].value');
    expect(injected).toContain('[REDACTED]');
    expect(await steps.nth(2).textContent()).toMatch(/blocked.*sensitive_data_egress/s);
    expect(await page.getByRole('main').textContent()).toContain(environmentName);
    await w.screenshot('protection-04-conversation');
    // The way back names the integration.
    await page.getByRole('main').getByRole('link', { name: 'Contoso', exact: true }).waitFor();
  });

  it('contains the agent from the timeline: the sign-in code and link to copy, then the outcome once an administrator signs in', async () => {
    const tenantId = w.contoso.id;
    w.emulator.control.setBotQuarantine(tenantId, seeded.environmentId, seeded.agentId, false);
    // Keyboard: the button is reachable and pressed with Enter.
    await page.getByRole('button', { name: `Contain agent ${seeded.agentName}` }).focus();
    await page.keyboard.press('Enter');
    const signIn = page.getByRole('region', { name: 'Administrator sign-in' });
    await signIn.waitFor();
    const code = ((await signIn.getByLabel('Sign-in code').textContent()) ?? '').trim();
    expect(code).toMatch(/^[A-Z0-9]{6,}$/);
    expect(await signIn.getByRole('link').getAttribute('href')).toMatch(/devicelogin/);
    await signIn.getByRole('button', { name: 'Copy Sign-in code' }).waitFor();
    // The device code signs an administrator in: masked in the published image.
    await w.screenshot('protection-05-contain-sign-in', page, { mask: [signIn.getByLabel('Sign-in code')] });
    // The administrator signs in with the code (here through the emulator, as they would in the browser).
    w.emulator.control.approveDeviceCode(code, tenantAccounts(w.contoso).powerPlatformAdmin!.userPrincipalName);
    await page.getByText(/Agent quarantined: users cannot use it in any channel/).waitFor({ timeout: 20_000 });
    expect(w.emulator.control.botQuarantine(tenantId, seeded.environmentId, seeded.agentId).isBotQuarantined).toBe(true);
    await w.screenshot('protection-06-contained');
    // The same place lifts it, with a new sign-in.
    await page.getByRole('button', { name: `Release agent ${seeded.agentName}` }).click();
    await signIn.waitFor();
    expect(await signIn.textContent()).toContain('Vigil then releases agent');
    const second = ((await signIn.getByLabel('Sign-in code').textContent()) ?? '').trim();
    expect(second).not.toBe(code);
    w.emulator.control.approveDeviceCode(second, tenantAccounts(w.contoso).powerPlatformAdmin!.userPrincipalName);
    await page.getByText(/Agent released: not quarantined/).waitFor({ timeout: 20_000 });
    expect(w.emulator.control.botQuarantine(tenantId, seeded.environmentId, seeded.agentId).isBotQuarantined).toBe(false);
  }, 60_000);

  it('offers Contain agent on an alert of runtime protection (admins), and not on other alerts', async () => {
    const conversation = page.url();
    await nav('Alerts').click();
    await page.getByRole('heading', { name: 'Alerts', level: 1 }).waitFor();
    await page.getByLabel('Status').selectOption('acknowledged');
    const link = page.getByRole('region', { name: 'Alerts', exact: true }).getByRole('link', { name: `Prompt injection against ${seeded.agentName}` });
    await link.waitFor();
    await w.screenshot('protection-07-alerts');
    await link.click();
    await page.getByRole('heading', { name: `Prompt injection against ${seeded.agentName}`, level: 1 }).waitFor();
    await page.getByRole('button', { name: /^Contain agent/ }).waitFor();
    expect(await page.getByRole('button', { name: /^Contain agent/ }).count()).toBe(1);
    // Alerts of other rules (collection detections that name no agent) offer no containment.
    await nav('Alerts').click();
    await page.getByLabel('Status').selectOption('new');
    const other = page.getByRole('region', { name: 'Alerts', exact: true }).getByRole('row').filter({ hasNotText: 'agent ' }).locator('td a[href^="/alerts/"]');
    await other.first().click();
    await page.getByRole('heading', { name: 'Response' }).waitFor();
    expect(await page.getByRole('button', { name: /^Contain agent/ }).count()).toBe(0);
    await page.goto(conversation);
  });

  it('raised no console error, page error or CSP violation (a CSP refusal is a console error)', async () => {
    // A page reloaded on its own address works too (client-side route served by index.html), without errors.
    await page.reload();
    await page.getByRole('heading', { name: `Conversation with ${seeded.agentName}` }).waitFor();
    expect(problems).toEqual([]);
  });
});
