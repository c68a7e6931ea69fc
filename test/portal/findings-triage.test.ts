import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCustomProfile } from '../../src/config/cloud.ts';
import { createRuntime } from '../../src/main/runtime.ts';
import { TEST_ENV } from '../e2e/harness.ts';
import { portalWorld, type PortalWorld } from './harness.ts';
import { apiSession, createdIntegration, recordProblems, runCollection, signIn, type ApiSession, type RunStatus } from './session.ts';

/**
 * Findings triage in the portal (issue 21), in Debian's Chromium against a real `vigil serve` and the emulator:
 * Contoso's integration is created and collected through the API, and three findings are stored beside the
 * collection's own. A person searches, filters and sorts the findings table (server-side, the filters in the URL and
 * in the export links), suppresses two at once with a reason, lifts one; then, on the integration's page, starts a
 * collection and sees it through to the end, and sees one started elsewhere, all without reloading the page — with no
 * console error and no CSP violation.
 */
describe('portal: finding triage', () => {
  let w: PortalWorld;
  let page: Page;
  let integrationId: string;
  let api: ApiSession;
  const problems: string[] = [];
  let signedIn = false;

  const runsFinished = (runs: RunStatus[]) => runs.length > 0 && runs.every((r) => r.status !== 'running');

  beforeAll(async () => {
    w = await portalWorld();
    page = w.page;
    await recordProblems(page, problems, { counting: () => signedIn });
    api = await apiSession(w);
    integrationId = await createdIntegration(w, api);
    await runCollection(w, api, integrationId, { finished: runsFinished });
    const rt = await createRuntime({ dataDir: w.dataDir, cloud: loadCustomProfile(w.endpointsFile), env: { ...TEST_ENV, VIGIL_DATA_DIR: w.dataDir } });
    try {
      const at = new Date().toISOString();
      const rows = [
        ['fnd_tri_1', 'critical', 'agent_shared_with_everyone', 'agent', 'Triage alpha bot', 'Shared with Everyone in the tenant'],
        ['fnd_tri_2', 'high', 'agent_no_authentication', 'agent', 'Triage bravo bot', 'Authentication mode is None'],
        ['fnd_tri_3', 'medium', 'pp_app_shared_with_everyone', 'app', 'Triage charlie app', 'Shared with Everyone'],
      ] as const;
      for (const [id, severity, check, type, name, reason] of rows)
        await rt.db
          .insertInto('findings')
          .values({
            id,
            integration_id: integrationId,
            check_id: check,
            severity,
            resource_type: type,
            resource_id: `res-${id}`,
            resource_name: name,
            status: 'open',
            detail: JSON.stringify({ reason }),
            first_seen_at: at,
            last_seen_at: at,
            resolved_at: null,
          })
          .execute();
    } finally {
      await rt.close();
    }
  }, 180_000);
  afterAll(async () => w?.close());

  const table = () => page.getByRole('region', { name: 'Findings', exact: true });
  // Columns: select, severity, finding, resource, …
  const resources = async () => (await table().getByRole('row').locator('td:nth-child(4)').allTextContents()).map((t) => t.replace(/(agent|app)$/, '').trim());

  it('searches, filters and sorts the findings on the server, with the filters in the URL and in the export links', async () => {
    await signIn(w);
    signedIn = true;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Findings', exact: true }).click();
    await table().waitFor();
    // The collection's own findings are there too.
    expect(await table().getByRole('row').count()).toBeGreaterThan(4);
    // A tenant-wide finding names the tenant by its integration, its GUID only on request (the title).
    const tenantWide = table().getByText('Tenant of Contoso').first();
    await tenantWide.waitFor();
    expect(await tenantWide.getAttribute('title')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);

    await page.getByLabel('Search').fill('triage');
    await page.getByLabel('Search').press('Enter');
    await expect.poll(resources).toEqual(['Triage alpha bot', 'Triage bravo bot', 'Triage charlie app']);
    expect(page.url()).toContain('q=triage');
    await page.getByText('3 findings match "triage"; 3 on this page.').waitFor();

    // The check's title is searched too (it lives in the catalogue): one word of it finds its finding.
    await page.getByLabel('Search').fill('Power App shared');
    await page.getByLabel('Search').press('Enter');
    await expect.poll(async () => (await resources()).filter((r) => r.startsWith('Triage'))).toEqual(['Triage charlie app']);
    await page.getByLabel('Search').fill('triage');
    await page.getByLabel('Search').press('Enter');
    await expect.poll(resources).toHaveLength(3);

    await page.getByLabel('Severity', { exact: true }).selectOption('high');
    await expect.poll(resources).toEqual(['Triage bravo bot']);
    await page.getByLabel('Severity', { exact: true }).selectOption('');
    await page.getByLabel('Check', { exact: true }).selectOption({ label: 'Power App shared with everyone' });
    await expect.poll(resources).toEqual(['Triage charlie app']);
    expect(page.url()).toContain('checkId=pp_app_shared_with_everyone');
    await page.getByLabel('Check', { exact: true }).selectOption('');
    await expect.poll(resources).toHaveLength(3);

    // Sort by resource: the first choice is descending, the second ascending; both kept in the URL.
    await table()
      .getByRole('button', { name: /^Resource/ })
      .click();
    await expect.poll(resources).toEqual(['Triage charlie app', 'Triage bravo bot', 'Triage alpha bot']);
    await table()
      .getByRole('button', { name: /^Resource/ })
      .click();
    await expect.poll(resources).toEqual(['Triage alpha bot', 'Triage bravo bot', 'Triage charlie app']);
    expect(await table().locator('th[aria-sort="ascending"]').textContent()).toMatch(/Resource/);
    expect(page.url()).toMatch(/sort=resource/);
    expect(page.url()).toMatch(/order=asc/);
    const csv = await page.getByRole('link', { name: 'CSV' }).getAttribute('href');
    expect(csv).toMatch(/q=triage/);
    expect(csv).toMatch(/sort=resource/);
    // The link's file holds the rows of the table, in its order.
    const file = await (await fetch(new URL(csv!, w.baseUrl), { headers: { cookie: api.cookie } })).text();
    expect(
      file
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(',')[0]),
    ).toEqual(['fnd_tri_1', 'fnd_tri_2', 'fnd_tri_3']);

    // A saved filter is a link: opened again, it shows the same rows with its controls set.
    const saved = page.url();
    await page.goto(`${w.baseUrl}/`);
    await page.goto(saved);
    await expect.poll(resources).toEqual(['Triage alpha bot', 'Triage bravo bot', 'Triage charlie app']);
    expect(await page.getByLabel('Search').inputValue()).toBe('triage');
  });

  it('suppresses two findings at once with a reason, then lifts one', async () => {
    const history = async (id: string) =>
      ((await (await fetch(`${w.baseUrl}/api/v1/findings/${id}`, { headers: { cookie: api.cookie } })).json()) as { history: { event: string }[] }).history.map(
        (h) => h.event,
      );
    // Near miss: without a reason nothing is suppressed.
    await table().getByRole('checkbox', { name: 'Select Copilot Studio agent is shared with everyone on Triage alpha bot' }).check();
    await page.getByRole('button', { name: 'Suppress selected' }).click();
    await page.getByText('Enter the reason for suppressing these findings.').first().waitFor();
    expect(await history('fnd_tri_1')).toEqual([]);

    await table().getByRole('checkbox', { name: 'Select Copilot Studio agent requires no authentication on Triage bravo bot' }).check();
    expect(await page.getByRole('form', { name: 'Selected findings' }).textContent()).toContain('2 findings selected.');
    await page.getByLabel('Reason').fill('Pilot agents, accepted until launch');
    await page.getByRole('button', { name: 'Suppress selected' }).click();
    await page.getByText('2 findings suppressed.').waitFor();
    // Open findings hide suppressed ones.
    await expect.poll(resources).toEqual(['Triage charlie app']);
    expect(await history('fnd_tri_1')).toEqual(['suppressed']);
    expect(await history('fnd_tri_2')).toEqual(['suppressed']);

    await page.getByLabel('Suppression', { exact: true }).selectOption('true');
    await expect.poll(resources).toEqual(['Triage alpha bot', 'Triage bravo bot']);
    expect(await table().getByRole('row').nth(1).textContent()).toContain('suppressed');
    await table().getByRole('checkbox', { name: 'Select Copilot Studio agent is shared with everyone on Triage alpha bot' }).check();
    await page.getByRole('button', { name: 'Lift suppression of selected' }).click();
    await page.getByText('Suppression lifted from 1 finding.').waitFor();
    await expect.poll(resources).toEqual(['Triage bravo bot']);
    expect(await history('fnd_tri_1')).toEqual(['suppressed', 'unsuppressed']);
    expect(await history('fnd_tri_2')).toEqual(['suppressed']);
    expect(await history('fnd_tri_3')).toEqual([]);
  });

  it('the integration page follows a collection started on it, and one started elsewhere, without a reload', async () => {
    await page.goto(`${w.baseUrl}/integrations/${integrationId}`);
    const runs = page.getByRole('region', { name: 'Recent runs' });
    await runs.waitFor();
    const rows = () => runs.getByRole('row').count();
    const before = await rows();
    // Marks this document: a reload would lose it.
    await page.evaluate(() => ((globalThis as unknown as { vigilMark: number }).vigilMark = 1));
    const sameDocument = () => page.evaluate(() => (globalThis as unknown as { vigilMark?: number }).vigilMark === 1);

    await page.getByRole('button', { name: 'Run collection' }).click();
    await page.getByText(/Collection finished/).waitFor({ timeout: 90_000 });
    expect(await page.getByText(/Collection finished/).textContent()).toMatch(/succeeded|partial/);
    await expect.poll(rows, { timeout: 15_000 }).toBe(before + 1);
    expect(await sameDocument()).toBe(true);

    // A collection started through the API (as the scheduler or the CLI would) shows up on the open page.
    await runCollection(w, api, integrationId, { finished: runsFinished, waitingFor: 'the second collection to finish' });
    await expect.poll(rows, { timeout: 30_000 }).toBe(before + 2);
    expect(await runs.getByRole('row').nth(1).textContent()).toMatch(/succeeded|partial/);
    expect(await sameDocument()).toBe(true);
  });

  it('picks an environment by name, searched on the server, keeping its id in the URL and showing its name', async () => {
    const withEnv = (await api.get<{ items: { environmentId: string | null; environmentName: string | null }[] }>('/findings?status=all&limit=500')).items.find(
      (f) => f.environmentId && f.environmentName,
    );
    expect(withEnv, 'a finding on a named environment').toBeDefined();
    const { environmentId, environmentName } = withEnv as { environmentId: string; environmentName: string };
    await page.goto(`${w.baseUrl}/findings?status=all`);
    await table().waitFor();
    const picker = page.getByRole('combobox', { name: 'Environment', exact: true });
    // Typing part of the name lists suggestions from the server.
    await picker.fill(environmentName.slice(0, 4));
    await expect.poll(() => page.locator('#f-environment-options option').count()).toBeGreaterThan(0);
    expect(await page.locator('#f-environment-options option').evaluateAll((os) => os.map((o) => o.getAttribute('value') ?? ''))).toContain(environmentName);
    await picker.fill(environmentName);
    await picker.press('Enter');
    await expect.poll(() => page.url()).toContain(`environmentId=${encodeURIComponent(environmentId)}`);
    const envColumn = async () => [...new Set((await table().getByRole('row').locator('td:nth-child(6)').allTextContents()).map((t) => t.trim()))];
    await expect.poll(envColumn).toEqual([environmentName]);
    // Opened from a link, the field shows the name, not the id.
    await page.goto(page.url());
    await expect.poll(() => picker.inputValue()).toBe(environmentName);
    // A name no environment has changes nothing and says so; an emptied field clears the filter.
    await picker.fill('no such environment zz');
    await picker.press('Enter');
    await page.getByText('No environment is named "no such environment zz"').waitFor();
    expect(page.url()).toContain(`environmentId=${encodeURIComponent(environmentId)}`);
    await picker.fill('');
    await picker.press('Enter');
    await expect.poll(() => page.url()).not.toContain('environmentId=');
  });

  it('raised no console error, page error or CSP violation', () => {
    expect(problems).toEqual([]);
  });
});
