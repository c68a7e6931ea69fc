import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalWorld, type PortalWorld } from './harness.ts';
import { collectedIntegration, portalPages, signIn, watchPage, type PageProblems } from './session.ts';

/** axe-core's browser build (github.com/dequelabs/axe-core: `axe.run()` resolves to the results, `violations` with `impact`). */
const AXE_SOURCE = readFileSync(new URL(import.meta.resolve('axe-core/axe.min.js')), 'utf8');

/** The impacts that fail the suite (axe's scale: minor, moderate, serious, critical). */
const FAILING = new Set(['serious', 'critical']);

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * Runs axe-core in the page, in the page's own browser, and returns its serious and critical violations as lines
 * (rule, help, the first elements). The source goes in through the DevTools protocol (`page.evaluate`), which the
 * page's Content-Security-Policy does not apply to: a `<script>` added by `addScriptTag` would be refused by the
 * portal's `script-src 'self'` and reported as the very CSP violation this suite looks for.
 */
async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate<boolean>('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<AxeViolation[]>(
    "axe.run(document, { resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } }).then((r) => r.violations)",
  );
  return violations
    .filter((v) => FAILING.has(v.impact ?? ''))
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} — ${v.nodes
          .slice(0, 3)
          .map((n) => JSON.stringify(n.target))
          .join(', ')}${v.nodes.length > 3 ? ` and ${v.nodes.length - 3} more` : ''}`,
    );
}

/** Waits until the page's content is there: a level-1 heading, and nothing still "Loading…". */
async function settled(page: Page): Promise<void> {
  await page.getByRole('heading', { level: 1 }).first().waitFor();
  await expect.poll(() => page.locator('.loading').count(), { timeout: 30_000 }).toBe(0);
}

/**
 * Every page of the portal, in Debian's Chromium against `vigil serve` after one collection, at 1280×800 and at
 * 400 px wide: no serious or critical accessibility violation reported by axe-core, no console error, no CSP
 * violation, and no horizontal scrolling of the page itself. The API's documentation page (Swagger UI, served by the
 * same server under its own CSP) is held to the same, with its widgets shown: an operation open and tried out, and
 * the authorization dialog.
 */
describe('portal accessibility, console and CSP on every page', () => {
  let w: PortalWorld;
  let page: Page;
  let problems: { read: () => Promise<PageProblems> };
  const pages: { name: string; path: string }[] = [];

  beforeAll(async () => {
    w = await portalWorld();
    page = w.page;
    problems = await watchPage(page);
    await signIn(w);
    const integrationId = await collectedIntegration(w);
    pages.push(...(await portalPages(w, integrationId)));
  }, 240_000);
  afterAll(async () => w?.close());

  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 400, height: 800 },
  ]) {
    it(`at ${viewport.width}×${viewport.height}: every signed-in page`, async () => {
      await page.setViewportSize(viewport);
      const report: string[] = [];
      for (const p of pages) {
        await page.goto(`${w.baseUrl}${p.path}`);
        await settled(page);
        for (const v of await axeViolations(page)) report.push(`${p.path}: ${v}`);
        if (!(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth + 1')))
          report.push(`${p.path}: the page scrolls sideways, past its right edge: ${await overflowing(page)}`);
        const seen = await problems.read();
        for (const c of seen.console) report.push(`${p.path}: console error ${c}`);
        for (const c of seen.csp) report.push(`${p.path}: CSP violation ${c}`);
      }
      expect(report).toEqual([]);
    }, 180_000);
  }

  it('the sign-in page, at both sizes', async () => {
    const context = await w.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const signedOut = await context.newPage();
    const seen = await watchPage(signedOut);
    try {
      for (const viewport of [
        { width: 1280, height: 800 },
        { width: 400, height: 800 },
      ]) {
        await signedOut.setViewportSize(viewport);
        await signedOut.goto(w.baseUrl);
        await signedOut.getByRole('button', { name: 'Sign in' }).waitFor();
        expect(await axeViolations(signedOut)).toEqual([]);
        // A refused sign-in shows its error; the page stays clean with it.
        await signedOut.getByLabel('Email').fill(w.email);
        await signedOut.getByLabel('Password').fill('not the password');
        await signedOut.getByRole('button', { name: 'Sign in' }).click();
        await signedOut.getByRole('alert').first().waitFor();
        expect(await axeViolations(signedOut)).toEqual([]);
        const { console: errors, csp } = await seen.read();
        // The refused sign-in's 401 is the answer the page shows, logged by Chromium as a failed request.
        expect(errors.filter((e) => !/status of 401 .*\/api\/v1\/auth\/login/.test(e))).toEqual([]);
        expect(csp).toEqual([]);
      }
      // The check sees what it should: a button without a name and an image without a text are reported.
      await signedOut.evaluate("document.querySelector('main').insertAdjacentHTML('beforeend', '<button></button><img src=\"/favicon.svg\">')");
      expect((await axeViolations(signedOut)).map((v) => v.split(':')[0])).toEqual(expect.arrayContaining(['critical button-name', 'critical image-alt']));
    } finally {
      await context.close();
    }
  });

  it('the API documentation page, at both sizes, with an operation open, tried out, and the authorization dialog', async () => {
    const report: string[] = [];
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 400, height: 800 },
    ]) {
      await page.setViewportSize(viewport);
      await page.goto(`${w.baseUrl}/api/docs`);
      const operations = page.locator('.swagger-ui .opblock');
      await operations.first().waitFor({ timeout: 30_000 });
      expect(await operations.count()).toBeGreaterThan(20);
      const at = `/api/docs at ${viewport.width}px`;
      await docsReport(page, at, report);
      // An operation open shows more of Swagger UI: the request body with its media-type select and example, the
      // responses, "Try it out".
      await page.locator('.swagger-ui .opblock-summary').first().click();
      const open = page.locator('.swagger-ui .opblock.is-open').first();
      await open.locator('.responses-wrapper').waitFor();
      await docsReport(page, `${at}, an operation open`, report);
      // Tried out: the request body's textarea, Execute and Cancel.
      await open.locator('.try-out__btn').click();
      await open.locator('.btn.execute').waitFor();
      await docsReport(page, `${at}, an operation tried out`, report);
      // The authorization dialog: a form per security scheme.
      await page.locator('.swagger-ui .btn.authorize').first().click();
      await page.locator('.swagger-ui .modal-ux').waitFor();
      await docsReport(page, `${at}, the authorization dialog`, report);
      await page.locator('.swagger-ui .modal-ux .close-modal').click();
      // An operation with query parameters tried out: their inputs and enum selects.
      const list = page.locator('#operations-findings-get_api_v1_findings');
      await list.locator('.opblock-summary').click();
      await list.locator('.try-out__btn').click();
      await list.locator('tr[data-param-name="severity"] select').waitFor();
      await docsReport(page, `${at}, GET /api/v1/findings tried out`, report);
      const seen = await problems.read();
      for (const c of seen.console) report.push(`${at}: console error ${c}`);
      for (const c of seen.csp) report.push(`${at}: CSP violation ${c}`);
    }
    expect(report).toEqual([]);
  }, 120_000);
});

/**
 * What makes a page scroll sideways, for the failure message: the deepest elements, outside any scrolling container,
 * whose box or content (a long unbreakable word) passes the window's right edge — tag, class, the first words of their
 * text and how far right they reach.
 */
async function overflowing(page: Page): Promise<string> {
  return page.evaluate<string>(`(() => {
    const w = window.innerWidth + 1;
    const clipped = (e) => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') return true; return false; };
    const reach = (e) => Math.max(e.getBoundingClientRect().right, e.getBoundingClientRect().left + e.scrollWidth);
    const wide = [...document.querySelectorAll('body *')].filter((e) => reach(e) > w && !clipped(e));
    const deepest = wide.filter((e) => !wide.some((o) => o !== e && e.contains(o)));
    return deepest.slice(0, 5).map((e) => e.tagName.toLowerCase() + (typeof e.className === 'string' && e.className ? '.' + e.className.split(' ').join('.') : '') + ' "' + (e.textContent || '').trim().slice(0, 60) + '" ' + Math.round(reach(e)) + 'px').join('; ');
  })()`);
}

/** Adds to `report` what axe reports of the page (serious and critical) and whether the page scrolls sideways. */
async function docsReport(page: Page, label: string, report: string[]): Promise<void> {
  for (const v of await axeViolations(page)) report.push(`${label}: ${v}`);
  if (!(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth + 1'))) report.push(`${label}: the page scrolls sideways`);
}
