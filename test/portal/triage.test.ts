import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCustomProfile } from '../../src/config/cloud.ts';
import { createRuntime } from '../../src/main/runtime.ts';
import { raiseAlert } from '../../src/store/repositories/audit.ts';
import { storeRecords } from '../../src/sync/audit.ts';
import { TEST_ENV } from '../e2e/harness.ts';
import { portalWorld, type PortalWorld } from './harness.ts';
import { apiSession, createdIntegration, recordProblems, runCollection, signIn, type ApiSession } from './session.ts';

/**
 * Triage in the portal (issue 21), in Debian's Chromium against a real `vigil serve` and the emulator: Contoso's
 * integration is created and collected through the API (its detections raise alerts), and three alerts with an audit
 * record behind one are stored as the detections store them. A person searches, filters and sorts the alerts table
 * (server-side, the filters in the URL), acknowledges two at once, opens one down to its event's raw record and its
 * history, and reads the events page filtered by user — with no console error and no CSP violation.
 */
describe('portal: alert triage', () => {
  let w: PortalWorld;
  let page: Page;
  let integrationId: string;
  let api: ApiSession;
  const problems: string[] = [];
  let signedIn = false;
  const EVENT_ID = '3c9e1a52-7b1f-4d2e-9a0c-5e8f7d6c0b11';
  const USER = 'triage.megan@contoso.test';

  beforeAll(async () => {
    w = await portalWorld();
    page = w.page;
    await recordProblems(page, problems, { counting: () => signedIn });
    api = await apiSession(w);
    integrationId = await createdIntegration(w, api);
    await runCollection(w, api, integrationId);
    const rt = await createRuntime({ dataDir: w.dataDir, cloud: loadCustomProfile(w.endpointsFile), env: { ...TEST_ENV, VIGIL_DATA_DIR: w.dataDir } });
    try {
      const at = new Date().toISOString();
      await storeRecords(
        rt.db,
        integrationId,
        'Audit.General',
        [
          {
            Id: EVENT_ID,
            CreationTime: at.slice(0, 19),
            Operation: 'TriageBotCreate',
            Workload: 'PowerPlatform',
            UserId: USER,
            RecordType: 174,
            ClientIP: '203.0.113.7',
          },
        ],
        at,
      );
      for (const [severity, title, eventIds] of [
        ['critical', 'Triage: credentials added to a service principal', [EVENT_ID]],
        ['high', 'Triage: agent published without authentication', []],
        ['low', 'Triage: report published to the web', []],
      ] as const)
        await raiseAlert(
          rt.db,
          { integrationId, ruleId: `triage_${severity}`, severity, title, dedupeKey: title, detail: { user: USER }, eventIds: [...eventIds] },
          at,
        );
    } finally {
      await rt.close();
    }
  }, 180_000);
  afterAll(async () => w?.close());

  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
  const table = () => page.getByRole('region', { name: 'Alerts', exact: true });
  const titles = async () => (await table().getByRole('row').locator('td:nth-child(3) a').allTextContents()).map((t) => t.trim());

  it('searches, filters and sorts the alerts on the server, with the filters in the URL', async () => {
    await signIn(w);
    signedIn = true;
    await nav('Alerts').click();
    await table().waitFor();
    // The collection's own detections are there too: more than the three seeded.
    expect(await table().getByRole('row').count()).toBeGreaterThan(1);
    await w.screenshot('triage-01-alerts');

    await page.getByLabel('Search').fill('triage:');
    await page.getByLabel('Search').press('Enter');
    await expect.poll(titles).toHaveLength(3);
    expect(page.url()).toContain('q=triage');
    await page.getByText('3 alerts match "triage:"; 3 on this page.').waitFor();

    await page.getByLabel('Severity').selectOption('critical');
    await expect.poll(titles).toEqual(['Triage: credentials added to a service principal']);
    await page.getByLabel('Severity').selectOption('');
    await expect.poll(titles).toHaveLength(3);

    // Sort by severity with the keyboard: critical first, then (again) low first.
    const sortSeverity = table().getByRole('button', { name: /^Severity/ });
    await sortSeverity.focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(titles)
      .toEqual(['Triage: credentials added to a service principal', 'Triage: agent published without authentication', 'Triage: report published to the web']);
    expect(await table().locator('th[aria-sort="descending"]').textContent()).toMatch(/Severity/);
    await table()
      .getByRole('button', { name: /^Severity/ })
      .click();
    await expect.poll(async () => (await titles())[0]).toBe('Triage: report published to the web');
    expect(page.url()).toMatch(/sort=severity/);
    expect(page.url()).toMatch(/order=asc/);
    await w.screenshot('triage-02-alerts-searched-sorted');

    // A saved filter is a link: opened again, it shows the same rows with its controls set.
    const saved = page.url();
    await page.goto(`${w.baseUrl}/`);
    await page.goto(saved);
    await expect.poll(titles).toHaveLength(3);
    expect(await page.getByLabel('Search').inputValue()).toBe('triage:');
    expect((await titles())[0]).toBe('Triage: report published to the web');
  });

  it('acknowledges two alerts at once', async () => {
    await table().getByRole('checkbox', { name: 'Select Triage: report published to the web' }).check();
    await table().getByRole('checkbox', { name: 'Select Triage: agent published without authentication' }).check();
    expect(await page.getByRole('group', { name: 'Selected alerts' }).textContent()).toContain('2 selected');
    await page.getByRole('button', { name: 'Acknowledge selected' }).click();
    await page.getByText('2 alerts acknowledged.').waitFor({ state: 'attached' });
    const statuses = async () => {
      const res = await api.get<{ items: { title: string; status: string }[] }>('/alerts?q=triage:&limit=10');
      return Object.fromEntries(res.items.map((a) => [a.title, a.status]));
    };
    expect(await statuses()).toEqual({
      'Triage: credentials added to a service principal': 'new',
      'Triage: agent published without authentication': 'acknowledged',
      'Triage: report published to the web': 'acknowledged',
    });
    await expect.poll(() => table().getByRole('row').filter({ hasText: 'acknowledged' }).count()).toBe(2);
    await w.screenshot('triage-03-alerts-acknowledged');
  });

  it('opens an alert down to its event and the raw record, with its history', async () => {
    await table().getByRole('link', { name: 'Triage: credentials added to a service principal' }).click();
    await page.getByRole('heading', { level: 1, name: 'Triage: credentials added to a service principal' }).waitFor();
    const events = page.getByRole('region', { name: 'Events behind this alert' });
    await events.waitFor();
    expect(await events.getByRole('row').filter({ hasText: 'TriageBotCreate' }).textContent()).toContain(USER);
    await events.getByRole('button', { name: /Show raw/ }).click();
    const raw = page.getByRole('region', { name: 'Raw record: TriageBotCreate' });
    await raw.locator('pre').waitFor();
    expect(await raw.locator('pre').textContent()).toContain(EVENT_ID);
    await page.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    await expect.poll(() => page.getByRole('list', { name: 'History of this alert' }).textContent()).toContain(`new → acknowledged by ${w.email}`);
    await w.screenshot('triage-04-alert-detail');
  });

  it('loads /events filtered by user, with names for the integration', async () => {
    await nav('Events').click();
    await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
    // Unfiltered: the collection's audit events, newest first.
    await expect.poll(() => page.getByRole('region', { name: 'Audit events' }).getByRole('row').count()).toBeGreaterThan(5);
    await w.screenshot('triage-05-events');
    await page.getByLabel('User').fill(USER);
    await page.getByLabel('User').press('Enter');
    const events = page.getByRole('region', { name: 'Audit events' });
    await expect.poll(() => events.getByRole('row').count()).toBe(2);
    expect(await events.getByRole('row').nth(1).textContent()).toMatch(/TriageBotCreate.*Contoso/);
    await page.getByText('1 event matches; 1 on this page.').waitFor();
    expect(page.url()).toContain(`userId=${encodeURIComponent(USER)}`);
    // The time range too: the event was stored just now.
    await page.getByRole('combobox', { name: 'Time', exact: true }).selectOption('24h');
    await expect.poll(() => page.url()).toContain('range=24h');
    await expect.poll(() => events.getByRole('row').count()).toBe(2);
    // Near miss: another user's filter shows none of them.
    await page.goto(`${w.baseUrl}/events?userId=nobody%40contoso.test`);
    await page.getByText('No events match these filters.').waitFor();
  });

  it('filters the alerts by the time they were raised and by rule, kept in the URL', async () => {
    await nav('Alerts').click();
    await table().waitFor();
    const raised = page.getByRole('combobox', { name: 'Raised', exact: true });
    const rule = page.getByRole('combobox', { name: 'Rule', exact: true });
    await page.getByLabel('Search').fill('triage:');
    await page.getByLabel('Search').press('Enter');
    await expect.poll(titles).toHaveLength(3);

    // The seeded alerts were raised just now: in the last 24 hours, and not from tomorrow on.
    await raised.selectOption('24h');
    await expect.poll(() => page.url()).toContain('range=24h');
    await expect.poll(titles).toHaveLength(3);
    await raised.selectOption('custom');
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel('From (UTC)', { exact: true }).fill(day(1));
    await page.getByText('No alerts match these filters.').waitFor();
    expect(page.url()).toContain(`since=${encodeURIComponent(`${day(1)}T00:00:00.000Z`)}`);
    // From yesterday to today, today included (the API's until is the next midnight, exclusive).
    await page.getByLabel('From (UTC)', { exact: true }).fill(day(-1));
    await page.getByLabel('To (UTC, included)', { exact: true }).fill(day(0));
    await expect.poll(titles).toHaveLength(3);
    expect(page.url()).toContain(`until=${encodeURIComponent(`${day(1)}T00:00:00.000Z`)}`);
    // A saved custom range opens with its dates set.
    const saved = page.url();
    await page.goto(`${w.baseUrl}/`);
    await page.goto(saved);
    await expect.poll(titles).toHaveLength(3);
    expect(await page.getByLabel('To (UTC, included)', { exact: true }).inputValue()).toBe(day(0));
    await raised.selectOption('');
    await expect.poll(() => page.url()).not.toContain('since=');
    await expect.poll(() => page.getByLabel('From (UTC)', { exact: true }).count()).toBe(0);

    // The Rule select lists the detections of the catalogue by title, and the rule a link set.
    await expect.poll(async () => (await rule.locator('option').allTextContents()).length).toBeGreaterThan(10);
    await table().getByRole('link', { name: 'Only rule triage_critical' }).click();
    await expect.poll(titles).toEqual(['Triage: credentials added to a service principal']);
    expect(await rule.inputValue()).toBe('triage_critical');
    await rule.selectOption('');
    await expect.poll(titles).toHaveLength(3);
    // A rule of the catalogue that raised an alert in the collection: only its alerts show.
    const catalogue = new Set(await rule.locator('option').evaluateAll((os) => os.map((o) => o.getAttribute('value') ?? '')));
    const raisedRules = (await api.get<{ items: { ruleId: string }[] }>('/alerts?limit=200')).items.map((a) => a.ruleId);
    const detection = raisedRules.find((r) => r && catalogue.has(r) && !r.startsWith('triage_'));
    expect(detection, `a catalogue detection among ${[...new Set(raisedRules)].join(', ')}`).toBeDefined();
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Search').press('Enter');
    await rule.selectOption(detection!);
    await expect.poll(() => page.url()).toContain(`ruleId=${detection}`);
    await expect
      .poll(async () => [...new Set((await table().getByRole('row').locator('td:nth-child(4)').allTextContents()).map((t) => t.trim()))])
      .toEqual([detection]);
  });

  it('raised no console error, page error or CSP violation', () => {
    expect(problems).toEqual([]);
  });
});
