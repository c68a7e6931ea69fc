import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalWorld, type PortalWorld } from './harness.ts';
import { apiCall, collectedIntegration, portalPages, signIn, watchPage, type PageProblems, type PortalPage } from './session.ts';

/** Tab presses per page at most (a page of 50 rows with links has more stops: then the part reached is checked). */
const CAP = 300;

/** What the page says about its focused element after a key press (computed in the page by {@link FOCUS_PROBE}). */
interface Focused {
  /** `tag#id.class "name"`, for messages. */
  what: string;
  body: boolean;
  /** Index of the element in the page's tabbable list at the start (-1: not in it, e.g. rendered later). */
  index: number;
  /** Whether it was reached before (the cycle came round). */
  again: boolean;
  /** What is wrong with it: not visible, covered, no focus indicator. */
  problems: string[];
  skipLink: boolean;
  main: boolean;
}

/**
 * Installed in the page before a walk: `__kbStart()` lists the tabbable elements (the brief's selector, visible, not
 * disabled, tabIndex ≥ 0; of a radio group only the checked one) with their unfocused outline and box-shadow;
 * `__kbProbe()` describes `document.activeElement` and remembers it as reached; `__kbMissed()` lists the tabbable
 * elements not reached up to the last one reached (all of them when `all`).
 */
const FOCUS_PROBE = `
(() => {
  const SELECTOR = 'a[href], area[href], button, input, select, textarea, summary, iframe, [tabindex], [contenteditable=""], [contenteditable="true"]';
  const describe = (el) => {
    const name = (el.getAttribute('aria-label') || el.textContent || el.getAttribute('name') || el.getAttribute('title') || '').trim().replace(/\\s+/g, ' ').slice(0, 200);
    const c = el.getAttribute('class');
    const cls = c ? '.' + c.trim().split(/\\s+/).slice(0, 2).join('.') : '';
    return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + cls + (name ? ' "' + name + '"' : '');
  };
  const tabbable = (el) => {
    if (el.tabIndex < 0 || el.disabled || el.closest('[inert]')) return false;
    if (el.tagName === 'INPUT' && el.type === 'hidden') return false;
    if (el.tagName === 'SUMMARY' && el.parentElement?.tagName !== 'DETAILS') return false;
    if (!el.checkVisibility({ visibilityProperty: true })) return false;
    if (el.tagName === 'INPUT' && el.type === 'radio' && el.name && !el.checked) {
      const group = [...document.querySelectorAll('input[type=radio]')].filter((r) => r.name === el.name && r.form === el.form);
      if (group.some((r) => r.checked) || group[0] !== el) return false;
    }
    return true;
  };
  const style = (el) => { const s = getComputedStyle(el); return { outline: s.outlineStyle + ' ' + s.outlineWidth + ' ' + s.outlineColor, boxShadow: s.boxShadow, outlineStyle: s.outlineStyle, outlineWidth: parseFloat(s.outlineWidth) }; };
  window.__kbStart = () => {
    window.__kbList = [...document.querySelectorAll(SELECTOR)].filter(tabbable);
    // The element focused now has no unfocused style to compare with.
    window.__kbUnfocused = new Map(window.__kbList.filter((el) => el !== document.activeElement).map((el) => [el, style(el)]));
    window.__kbReached = new Set();
    return window.__kbList.length;
  };
  window.__kbProbe = () => {
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) return { what: 'body', body: true, index: -1, again: false, problems: [], skipLink: false, main: false };
    const again = window.__kbReached.has(el);
    window.__kbReached.add(el);
    const problems = [];
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) problems.push('has no size');
    else if (r.bottom <= 0 || r.right <= 0 || r.top >= innerHeight || r.left >= innerWidth) problems.push('is outside the viewport');
    else {
      const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
      const y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1);
      const hit = document.elementFromPoint(x, y);
      if (hit && hit !== el && !el.contains(hit) && !hit.contains(el) && !(el.labels && [...el.labels].some((l) => l.contains(hit))))
        problems.push('is covered by ' + describe(hit) + ' (at ' + Math.round(x) + ',' + Math.round(y) + ' of ' + innerWidth + '×' + innerHeight + ', scrolled ' + Math.round(scrollY) + ')');
    }
    const now = style(el);
    const indicator = (now.outlineStyle !== 'none' && now.outlineWidth > 0) || now.boxShadow !== 'none';
    const before = window.__kbUnfocused.get(el);
    if (!indicator) problems.push('shows no focus indicator (outline ' + now.outline + ', box-shadow ' + now.boxShadow + ')');
    else if (before && before.outline === now.outline && before.boxShadow === now.boxShadow) problems.push('looks the same focused and unfocused');
    return { what: describe(el), body: false, index: window.__kbList.indexOf(el), again, problems, skipLink: el.classList.contains('skip-link'), main: el.tagName === 'MAIN' };
  };
  window.__kbMissed = (all) => {
    // Without a full cycle: the elements of <main> and after it (the walk started there), up to the last one reached.
    // Each must still be tabbable now: a control disabled during the walk (React Flow's "Zoom Out" once the graph's
    // fit reaches its smallest zoom) is rightly passed over.
    const main = document.querySelector('main');
    const inWalk = (el) => all || main.contains(el) || Boolean(main.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
    const last = Math.max(-1, ...window.__kbList.map((el, i) => (window.__kbReached.has(el) ? i : -1)));
    return window.__kbList.filter((el, i) => inWalk(el) && (all || i <= last) && !window.__kbReached.has(el) && el.isConnected && tabbable(el)).map(describe);
  };
})();
`;

/** Waits until the page's content is there: a level-1 heading, and nothing still "Loading…". */
async function settled(page: Page): Promise<void> {
  await page.getByRole('heading', { level: 1 }).first().waitFor();
  await expect.poll(() => page.locator('.loading').count(), { timeout: 30_000 }).toBe(0);
}

/** The focused element as {@link FOCUS_PROBE} describes it. */
const probe = (page: Page) => page.evaluate<Focused>('window.__kbProbe()');

/**
 * Walks one page with the keyboard from its top: the first Tab reaches the skip link, Enter on it focuses <main>,
 * then Tab on through the page, out of it (focus leaves for the browser: <body> once), round through the header and
 * into the main content again. Returns what is wrong, one line each.
 */
async function walk(page: Page): Promise<string[]> {
  await page.evaluate(FOCUS_PROBE);
  await page.evaluate('window.__kbStart()');
  const report: string[] = [];
  await page.keyboard.press('Tab');
  const first = await probe(page);
  if (!first.skipLink) return [`the first Tab reaches ${first.what}, not the skip link`];
  if (!/^a\.skip-link "Skip to (main )?content"$/.test(first.what)) report.push(`the skip link reads ${first.what}`);
  report.push(...first.problems.map((p) => `the skip link ${p}`));
  await page.keyboard.press('Enter');
  const main = await probe(page);
  if (!main.main) report.push(`Enter on the skip link focuses ${main.what}, not <main>`);
  let previous = main.what;
  let left = false;
  let wrapped = false;
  for (let i = 0; i < CAP; i++) {
    await page.keyboard.press('Tab');
    const f = await probe(page);
    if (f.body) {
      // Focus leaves the page after its last element (to the browser's own controls); the next Tab comes back to the top.
      if (left) {
        report.push(`focus is lost after ${previous}`);
        break;
      }
      left = true;
      continue;
    }
    if (left && !f.skipLink && !wrapped) report.push(`focus lands on <body> after ${previous}, then on ${f.what} (lost or trapped)`);
    if (left) wrapped = true;
    left = false;
    // A date input's parts (day, month, year) are Tab stops of one element.
    if (f.again && f.what === previous) continue;
    if (f.again && !f.skipLink) break;
    for (const p of f.problems) report.push(`${f.what} ${p}`);
    previous = f.what;
  }
  for (const m of await page.evaluate<string[]>(`window.__kbMissed(${wrapped})`)) report.push(`${m} is tabbable but never reached`);
  return report;
}

/** Presses Tab (Shift+Tab with `back`) until `is` holds of the focused element's description; fails after `max`. */
async function tabTo(page: Page, is: (what: string) => boolean, opts: { back?: boolean; max?: number; what?: string } = {}): Promise<string> {
  await page.evaluate(FOCUS_PROBE);
  await page.evaluate('window.__kbStart()');
  const seen: string[] = [];
  for (let i = 0; i < (opts.max ?? 120); i++) {
    await page.keyboard.press(opts.back ? 'Shift+Tab' : 'Tab');
    const f = await probe(page);
    if (is(f.what)) {
      expect(f.problems, f.what).toEqual([]);
      return f.what;
    }
    seen.push(f.what);
  }
  throw new Error(`Tab never reached ${opts.what ?? is.toString()}; it went through ${seen.join(' → ')}`);
}

/** Whether a focused element's description is the button named `name` (whatever its classes). */
const isButton = (name: string) => (f: string) => new RegExp(`^button(\\.[\\w-]+)* "${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"$`).test(f);

/** The description of the focused element. */
const focused = async (page: Page) => {
  await page.evaluate(FOCUS_PROBE);
  await page.evaluate('window.__kbStart()');
  return (await probe(page)).what;
};

/**
 * Every signed-in page of the portal, at 1280×800 and 400 px wide, used with the keyboard alone (issue 21): a skip
 * link first, every tabbable element reached in one cycle, each visible and showing a focus indicator when focused,
 * no focus lost on the way; then the portal's main flows done with keys only (page.keyboard, no clicks).
 */
describe('portal keyboard use', () => {
  let w: PortalWorld;
  let page: Page;
  let problems: { read: () => Promise<PageProblems> };
  let pages: PortalPage[] = [];

  beforeAll(async () => {
    w = await portalWorld();
    page = w.page;
    problems = await watchPage(page);
    await signIn(w);
    pages = await portalPages(w, await collectedIntegration(w));
  }, 240_000);
  afterAll(async () => w?.close());

  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 400, height: 800 },
  ]) {
    it(`at ${viewport.width}×${viewport.height}: every signed-in page, Tab by Tab`, async () => {
      await page.setViewportSize(viewport);
      const report: string[] = [];
      for (const p of pages) {
        await page.goto(`${w.baseUrl}${p.path}`);
        await settled(page);
        for (const line of await walk(page)) report.push(`${p.path}: ${line}`);
      }
      expect(report).toEqual([]);
      expect(await problems.read()).toEqual({ console: [], csp: [] });
    }, 300_000);
  }

  it('alerts: filter, sort, select two, acknowledge, open one and reach its events, with keys only', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    const all = (await apiCall<{ items: { id: string; severity: string; status: string }[] }>(w, 'GET', '/alerts?limit=500')).items;
    const counts = new Map<string, number>();
    for (const a of all.filter((x) => x.status === 'new')) counts.set(a.severity, (counts.get(a.severity) ?? 0) + 1);
    const [severity] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
    expect(counts.get(severity)).toBeGreaterThanOrEqual(2);
    const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'];

    await page.goto(`${w.baseUrl}/alerts`);
    await settled(page);
    await tabTo(page, (f) => f.startsWith('select#a-severity'), { what: 'the severity filter' });
    // Arrow keys change a closed <select> one option at a time; each choice filters the list (and goes to the URL).
    for (let i = 0; i <= SEVERITIES.indexOf(severity); i++) {
      await page.keyboard.press('ArrowDown');
      await expect.poll(() => new URL(page.url()).searchParams.get('severity')).toBe(SEVERITIES[i]);
      expect(await focused(page)).toMatch(/^select#a-severity/);
    }
    await expect.poll(async () => [await page.inputValue('#a-severity'), new URL(page.url()).searchParams.get('severity')]).toEqual([severity, severity]);
    const rows = page.getByRole('region', { name: 'Alerts' }).locator('tbody tr');
    await expect
      .poll(async () => [await rows.count(), await rows.filter({ hasNot: page.locator(`.sev-${severity}`) }).count()])
      .toEqual([Math.min(50, all.filter((a) => a.severity === severity).length), 0]);

    await tabTo(page, (f) => /^button\.sort-button "Alert/.test(f), { what: 'the Alert column header' });
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('sort')).toBe('title');
    await expect.poll(() => page.getByRole('columnheader', { name: /^Alert/ }).getAttribute('aria-sort')).toMatch(/ascending|descending/);
    // The header button keeps the focus after the table re-renders in the new order.
    expect(await focused(page)).toMatch(/^button\.sort-button "Alert/);

    const ticked: string[] = [];
    for (let n = 0; n < 2; n++) {
      const box = await tabTo(page, (f) => /^input "Select (?!every row)/.test(f), { what: 'a row checkbox' });
      ticked.push(box.replace(/^input "Select /, '').replace(/"$/, ''));
      await page.keyboard.press('Space');
    }
    await page.getByText('2 selected').waitFor();
    await tabTo(page, isButton('Acknowledge selected'), { back: true, what: 'Acknowledge selected' });
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: '2 alerts acknowledged.' }).waitFor();
    for (const title of ticked) {
      const row = page
        .getByRole('row')
        .filter({ has: page.getByRole('link', { name: title, exact: true }) })
        .first();
      await expect.poll(() => row.getByText('acknowledged', { exact: true }).count(), { message: title }).toBeGreaterThan(0);
    }
    // Focus stays in the page (the button that is now disabled hands it on), not on <body>.
    expect(await focused(page)).not.toBe('body');

    // On from the button to the first ticked alert's link.
    await tabTo(page, (f) => f === `a "${ticked[0]}"`, { what: `the link of ${ticked[0]}` });
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/alerts\/[^?]+$/);
    await page.getByRole('heading', { level: 1, name: ticked[0] }).waitFor();
    expect(await focused(page)).toMatch(/^main/);
    await tabTo(page, (f) => /"Events behind this alert"/.test(f) || /^a .*event/i.test(f), { what: 'the events of the alert' });
    expect(await problems.read()).toEqual({ console: [], csp: [] });
  }, 120_000);

  it('settings: add a user, create an API key and revoke it through its dialog, with keys only', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${w.baseUrl}/settings/users`);
    await settled(page);
    await tabTo(page, (f) => f.startsWith('input#') && f.includes('email'), { what: 'the Email field' });
    await page.keyboard.type('keyboard.user@contoso.test');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Kay Board');
    await page.keyboard.press('Tab');
    await page.keyboard.type('a long enough password');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toMatch(/^select#user-role/);
    await page.keyboard.press('ArrowDown');
    await tabTo(page, isButton('Add user'));
    await page.keyboard.press('Enter');
    await page.getByText('keyboard.user@contoso.test was added as').waitFor();
    await page.getByRole('region', { name: 'Portal users' }).getByText('keyboard.user@contoso.test').waitFor();

    await page.goto(`${w.baseUrl}/settings/api-keys`);
    await settled(page);
    await tabTo(page, (f) => f.startsWith('input#') && f.includes('name'), { what: 'the Name field' });
    await page.keyboard.type('Keyboard key');
    await tabTo(page, isButton('Create key'));
    await page.keyboard.press('Enter');
    await page.getByText('Copy the key of Keyboard key now').waitFor();
    await tabTo(page, isButton('I have copied it'), { back: true });
    await page.keyboard.press('Enter');

    const trigger = await tabTo(page, isButton('Revoke Keyboard key'), { back: true, what: 'Revoke Keyboard key' });
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: /Revoke Keyboard key/ });
    await dialog.waitFor();
    // Focus goes into the dialog, on its safe choice.
    expect(await focused(page)).toMatch(/^button\.secondary "Cancel"$/);
    // Escape closes it, focus back on its trigger, the key still active.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focused(page)).toBe(trigger);
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    // Tab stays in the open dialog: the page behind it is inert (after the dialog's last button focus may leave for
    // the browser's own controls, <body> in the page, and comes back to the dialog).
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Tab');
      expect(
        await page.evaluate<boolean>("document.querySelector('dialog[open]').contains(document.activeElement) || document.activeElement === document.body"),
      ).toBe(true);
    }
    await tabTo(page, isButton('Cancel'), { max: 4 });
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focused(page)).toBe(trigger);
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await tabTo(page, isButton('Revoke the key'), { max: 4 });
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    const row = page.getByRole('region', { name: 'API keys' }).getByRole('row').filter({ hasText: 'Keyboard key' });
    await row.getByText('revoked', { exact: true }).waitFor();
    // The trigger is gone with the revoked key: focus goes to the list's heading, not to <body>.
    expect(await focused(page)).toMatch(/^h2#h-keys/);
    const keys = (await apiCall<{ items: { name: string; revokedAt: string | null }[] }>(w, 'GET', '/organization/api-keys')).items;
    expect(keys.find((k) => k.name === 'Keyboard key')?.revokedAt).toBeTruthy();
    expect(await problems.read()).toEqual({ console: [], csp: [] });
  }, 120_000);

  it("agent: the reach graph's list is reached and opened with keys only", async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${w.baseUrl}${pages.find((p) => p.name === 'agent')!.path}`);
    await settled(page);
    await tabTo(page, (f) => f.startsWith('summary "The reach graph as a list'), { what: "the reach graph's list", max: 150 });
    await page.keyboard.press('Enter');
    await page.getByRole('list', { name: 'What it reaches' }).waitFor();
    expect(await page.locator('details.reach-list').getAttribute('open')).not.toBeNull();
    expect(await problems.read()).toEqual({ console: [], csp: [] });
  }, 60_000);
});
