import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalWorld, type PortalWorld } from './harness.ts';
import { apiCall, collectedIntegration, signIn, watchPage, type PageProblems } from './session.ts';

/** One item of `GET /compliance`, as the page shows it. */
interface Item {
  id: string;
  name: string;
  covers: { kind: 'check' | 'detection'; id: string }[];
  pass: number;
  fail: number;
  notEvaluated: number;
  openAlerts: number;
  state: string;
}
interface View {
  frameworks: { id: string; name: string; covered: number; items: Item[] }[];
}

/** The words the page shows for each state (web/src/pages/Compliance.tsx). */
const STATE_WORDS: Record<string, string> = {
  fail: 'failing',
  not_evaluated: 'not evaluated',
  pass: 'passing',
  monitored: 'monitored',
  no_results: 'no results yet',
  not_covered: 'not covered',
};

/**
 * Issue 21, "pass/fail/not-evaluated per area and per framework (from the compliance views)": in Debian's Chromium
 * against `vigil serve` and the emulator, after one collection of Contoso, the compliance page shows ScubaGear's
 * items with the state and counts `GET /api/v1/compliance` answers, its summary counts the same items, and the
 * state filter (kept in the URL) narrows the table to the items in that state.
 */
describe('portal: compliance view', () => {
  let w: PortalWorld;
  let page: Page;
  let problems: { read: () => Promise<PageProblems> };

  beforeAll(async () => {
    w = await portalWorld();
    page = w.page;
    problems = await watchPage(page);
    await signIn(w);
    await collectedIntegration(w);
  }, 240_000);
  afterAll(async () => w?.close());

  /** The cells of each body row of the items table, as text. */
  const rows = (framework: string) =>
    page
      .getByRole('region', { name: `Items of ${framework}`, exact: true })
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));

  it("shows ScubaGear's items with the API's states and counts, and filters them by state in the URL", async () => {
    const view = await apiCall<View>(w, 'GET', '/compliance?framework=scubagear');
    const fw = view.frameworks[0]!;
    expect(fw.id).toBe('scubagear');
    // A real answer to compare with: some items judged by checks, some not covered.
    expect(fw.items.some((i) => i.pass + i.fail + i.notEvaluated > 0)).toBe(true);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Compliance', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Compliance' }).waitFor();
    await page.getByLabel('Framework').selectOption('scubagear');
    await page.waitForURL(/framework=scubagear/);
    await page.getByRole('heading', { level: 2, name: fw.name }).waitFor();

    const shown = await rows(fw.name);
    expect(shown).toHaveLength(fw.items.length);
    expect(shown.map((cells) => [cells[0], cells[1], ...cells.slice(3)])).toEqual(
      fw.items.map((i) => [`${i.name}${i.id}`, STATE_WORDS[i.state], String(i.pass), String(i.fail), String(i.notEvaluated), String(i.openAlerts)]),
    );
    const n = (s: string) => fw.items.filter((i) => i.state === s).length;
    expect(await page.getByRole('list', { name: `Summary of ${fw.name}` }).textContent()).toBe(
      `${fw.covered} of ${fw.items.length} covered${fw.items.length - fw.covered} not covered${n('pass')} passing${n('fail')} failing` +
        `${n('not_evaluated')} not evaluated${fw.items.filter((i) => i.openAlerts > 0).length} with open alerts`,
    );
    // Each cover links to what it is: a check to the catalogue, a detection to its alerts.
    const check = fw.items.flatMap((i) => i.covers).find((c) => c.kind === 'check')!;
    expect(await page.getByRole('link', { name: check.id, exact: true }).first().getAttribute('href')).toBe(`/checks?q=${encodeURIComponent(check.id)}`);
    await w.screenshot('27-compliance');

    // The state filter narrows to the items in that state, and only those.
    const state = fw.items.find((i) => i.state !== 'not_covered')!.state;
    await page.getByLabel('State').selectOption(state);
    await page.waitForURL(new RegExp(`state=${state}`));
    await expect.poll(async () => (await rows(fw.name)).length).toBe(n(state));
    expect(n(state)).toBeLessThan(fw.items.length);
    expect(new Set((await rows(fw.name)).map((cells) => cells[1]))).toEqual(new Set([STATE_WORDS[state]]));

    // The address carries the filters: opened afresh, it shows the same.
    const other = fw.items.find((i) => i.state !== state)!.state;
    await page.goto(`${w.baseUrl}/compliance?framework=scubagear&state=${other}`);
    await expect.poll(async () => (await rows(fw.name)).length).toBe(n(other));
    expect(await page.getByLabel('State').inputValue()).toBe(other);
    expect(await problems.read()).toEqual({ console: [], csp: [] });
  });
});
