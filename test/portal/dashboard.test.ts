import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalWorld, type PortalWorld } from './harness.ts';
import { apiCall, collectedIntegration, signIn, watchPage, type PageProblems } from './session.ts';

/**
 * Issue 21 in Debian's Chromium against `vigil serve` and the emulator, after one collection of Contoso: the
 * dashboard's posture, charts and tables as the API serves them; the findings list's exports of its current filter,
 * downloaded and opened; the check catalogue's search; and the organization's settings (users, API keys shown once
 * and revoked, the SIEM webhook's test button against a local receiver).
 */
/** Records of an RFC 4180 CSV text (quoted cells, doubled quotes, CRLF or LF), as objects keyed by the header row. */
function parseCsv(text: string): Record<string, string>[] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      record.push(cell);
      cell = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      record.push(cell);
      records.push(record);
      [record, cell] = [[], ''];
    } else cell += ch;
  }
  if (cell || record.length) records.push([...record, cell]);
  const [header, ...rows] = records;
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}

describe('portal: dashboard, exports, checks and settings', () => {
  let w: PortalWorld;
  let page: Page;
  let problems: { read: () => Promise<PageProblems> };
  let receiver: Server;
  /** Events the webhook receiver got (`x-vigil-event`), and whether it refuses them. */
  const received: string[] = [];
  let refuse = false;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(String(req.headers['x-vigil-event']));
        res.writeHead(refuse ? 503 : 204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;
    w = await portalWorld({ env: { VIGIL_WEBHOOK_URL: `http://127.0.0.1:${port}/hook`, VIGIL_WEBHOOK_SECRET: 'portal-test-secret-0123456789' } });
    page = w.page;
    problems = await watchPage(page);
    await signIn(w);
    await collectedIntegration(w);
  }, 240_000);
  afterAll(async () => {
    await w?.close();
    receiver?.close();
  });

  /** The table in the region named `name` (the innermost, where a section and its table share the name). */
  const table = (name: string) => page.getByRole('region', { name, exact: true }).last().getByRole('table');
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  it('shows the posture score and its trend, findings by severity, results per area and framework, as the API counts them', async () => {
    const dash = await apiCall<{
      posture: { score: number; passed: number; failed: number; notEvaluated: number };
      areas: { area: string; passed: number; failed: number; notEvaluated: number }[];
    }>(w, 'GET', '/dashboard');
    await page.goto(w.baseUrl);
    const posture = page.getByRole('region', { name: 'Posture score' });
    await posture.getByText(`${dash.posture.score}%`, { exact: true }).waitFor();
    expect(await posture.getByRole('list', { name: 'Latest results' }).textContent()).toBe(
      `${dash.posture.passed} passed${dash.posture.failed} failed${dash.posture.notEvaluated} not evaluated`,
    );
    // Each chart is an image named by what it shows, drawn by Recharts as SVG.
    expect(await posture.getByRole('img', { name: new RegExp(`Posture score per day: .*${dash.posture.score}% on `) }).count()).toBe(1);
    const severity = page.getByRole('img', { name: /Open findings by severity per day/ });
    await severity.locator('svg.recharts-surface').first().waitFor();
    expect(await severity.locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    // The area chart's numbers as a table: one row per area, the API's counts.
    const areas = page.getByRole('region', { name: 'Results per area' });
    await areas.getByText('Show the numbers as a table').click();
    for (const a of dash.areas) {
      const row = areas.getByRole('row').filter({ has: page.getByRole('rowheader', { name: a.area, exact: true }) });
      expect(await row.getByRole('cell').allTextContents(), a.area).toEqual(
        expect.arrayContaining([String(a.passed), String(a.failed), String(a.notEvaluated)]),
      );
    }
    // Per framework, its items by state as the compliance view counts them, linking to that framework's page (the
    // detections' alerts, which fail items while open, are all raised: collectedIntegration waits for them).
    const frameworkMismatches = async () => {
      const compliance = await apiCall<{ frameworks: { id: string; shortName: string; covered: number; items: { state: string }[] }[] }>(
        w,
        'GET',
        '/compliance',
      );
      const rows = table('Compliance per framework').getByRole('row');
      await rows.first().waitFor();
      const wrong: string[] = [];
      if ((await rows.count()) !== compliance.frameworks.length + 1) wrong.push(`${await rows.count()} rows`);
      for (const f of compliance.frameworks) {
        const n = (s: string) => String(f.items.filter((i) => i.state === s).length);
        const row = rows.filter({ has: page.getByRole('link', { name: f.shortName, exact: true }) });
        const href = await row.getByRole('link').getAttribute('href');
        if (href !== `/compliance?framework=${f.id}`) wrong.push(`${f.id} links to ${href}`);
        const cells = (await row.getByRole('cell').allTextContents()).slice(1);
        const expected = [String(f.items.length), n('pass'), n('fail'), n('not_evaluated'), String(f.items.length - f.covered)];
        if (cells.join() !== expected.join()) wrong.push(`${f.id}: ${cells.join()} is not ${expected.join()}`);
      }
      return wrong;
    };
    expect(await frameworkMismatches()).toEqual([]);
    expect(await table('Riskiest agents').getByRole('link').count()).toBeGreaterThan(0);
    await w.screenshot('20-dashboard-posture');
    await page.setViewportSize({ width: 400, height: 800 });
    await page.waitForTimeout(300);
    expect(await page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth + 1')).toBe(true);
    await w.screenshot('21-dashboard-posture-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await problems.read()).toEqual({ console: [], csp: [] });
  });

  it('exports the filtered findings as CSV and SARIF files that hold exactly the filtered findings', async () => {
    const all = (await apiCall<{ items: { id: string; severity: string }[] }>(w, 'GET', '/findings?status=all&limit=500')).items;
    const counts = new Map<string, number>();
    for (const f of all) counts.set(f.severity, (counts.get(f.severity) ?? 0) + 1);
    // The severity with findings that is not every finding: the filter must narrow the file.
    const [severity, expected] = [...counts.entries()].sort((a, b) => a[1] - b[1])[0]!;
    expect(expected).toBeLessThan(all.length);
    await nav('Findings').click();
    await page.getByLabel('Status').selectOption('all');
    await page.getByLabel('Severity').selectOption(severity);
    await page.waitForURL(/severity=/);
    await table('Findings').waitFor();
    await w.screenshot('22-findings-exports');

    const download = async (name: string) => {
      const [file] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('group', { name: 'Export these findings:' }).getByRole('link', { name }).click(),
      ]);
      return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, 'utf8') };
    };
    const csv = await download('CSV');
    expect(csv.name).toMatch(/^vigil-findings-\d{4}-\d{2}-\d{2}\.csv$/);
    const rows = parseCsv(csv.text);
    expect(rows.map((r) => r.severity)).toEqual(Array(expected).fill(severity));
    expect(rows.map((r) => r.id).sort()).toEqual(
      all
        .filter((f) => f.severity === severity)
        .map((f) => f.id)
        .sort(),
    );

    const sarif = await download('SARIF');
    expect(sarif.name).toMatch(/\.sarif$/);
    const log = JSON.parse(sarif.text) as { version: string; runs: { results: unknown[] }[] };
    expect(log.version).toBe('2.1.0');
    expect(log.runs[0]!.results).toHaveLength(expected);

    // The other formats follow the same filter.
    const hrefs = await page
      .getByRole('group', { name: 'Export these findings:' })
      .getByRole('link')
      .evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    expect(hrefs).toEqual(['csv', 'sarif', 'ocsf', 'json'].map((f) => `/api/v1/exports/findings?severity=${severity}&status=all&format=${f}`));
    expect(await problems.read()).toEqual({ console: [], csp: [] });
  });

  it('lists every check with its metadata, and finds checks by words of their title, framework or peer', async () => {
    const checks = (await apiCall<{ items: { id: string; title: string; peers: string[] }[] }>(w, 'GET', '/checks')).items;
    await nav('Checks').click();
    const checksTable = table('Checks');
    await checksTable.waitFor();
    expect(await checksTable.getByRole('row').count()).toBe(checks.length + 1);
    await page.getByLabel('Search').fill('guest owned');
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/of \d+ checks match/);
    expect(await checksTable.textContent()).toContain('guest_owns_agent');
    expect(await checksTable.getByRole('row').count()).toBeLessThan(checks.length + 1);
    const withPeer = checks.find((c) => c.peers.length)!;
    await page.getByLabel('Search').fill(withPeer.peers[0]!);
    // The table filters as the search is typed: wait for it to follow.
    await expect.poll(() => checksTable.textContent()).toContain(withPeer.id);
    await w.screenshot('23-checks');
    await page.getByLabel('Search').fill('no check is called this');
    await page.getByText('No check matches these filters.').waitFor();
    await page.getByLabel('Search').fill('');
  });

  it('adds a portal user, refusing a short password with the reason', async () => {
    await nav('Settings').click();
    await page.getByRole('heading', { name: 'Portal users' }).waitFor();
    await page.getByLabel('Email').fill('viewer@contoso.test');
    await page.getByLabel('Initial password').fill('too short');
    await page.getByRole('button', { name: 'Add user' }).click();
    expect(await page.getByRole('alert').textContent()).toMatch(/at least 12 characters/);
    await page.getByLabel('Initial password').fill('a long enough passphrase');
    await page.getByLabel('Display name (optional)').fill('Vic Viewer');
    await page.getByRole('button', { name: 'Add user' }).click();
    await page.getByText('viewer@contoso.test was added as viewer.').waitFor();
    const row = table('Portal users').getByRole('row').filter({ hasText: 'viewer@contoso.test' });
    expect(await row.textContent()).toContain('Vic Viewer');
    await w.screenshot('24-settings-users');
  });

  it("changes a user's role and disables a signed-in user, whose session ends at once; the last admin cannot step down", async () => {
    const vic = { email: 'viewer@contoso.test', password: 'a long enough passphrase' };
    const signInAsVic = () =>
      fetch(`${w.baseUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(vic) });
    const login = await signInAsVic();
    expect(login.status).toBe(200);
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const asVic = async (path: string) => (await fetch(`${w.baseUrl}/api/v1${path}`, { headers: { cookie } })).status;
    expect(await asVic('/organization/users')).toBe(403);

    const users = table('Portal users');
    const row = (name: string) => users.getByRole('row').filter({ hasText: name });
    const confirm = async (button: string, title: string, action: string) => {
      await page.getByRole('button', { name: button, exact: true }).click();
      const dialog = page.getByRole('dialog', { name: title });
      await dialog.getByRole('button', { name: action }).click();
      return dialog;
    };
    await confirm('Make admin Vic Viewer', 'Make Vic Viewer an administrator?', 'Make administrator');
    await page.getByText('viewer@contoso.test is now an administrator.').waitFor();
    await expect.poll(() => row('Vic Viewer').textContent()).toMatch(/admin.*active/);
    // Vic's open session has the new role at its next request.
    expect(await asVic('/organization/users')).toBe(200);

    await confirm('Disable Vic Viewer', 'Disable Vic Viewer?', 'Disable the account');
    await page.getByText('viewer@contoso.test is disabled and signed out.').waitFor();
    await expect.poll(() => row('Vic Viewer').textContent()).toContain('disabled');
    expect(await asVic('/auth/session')).toBe(401);
    expect((await signInAsVic()).status).toBe(401);

    // Vic is a disabled admin: Ada is the only enabled one and cannot become a viewer. The refusal names the fix.
    expect(await row('Ada Admin').textContent()).toContain('(you)');
    const refused = await confirm('Make viewer Ada Admin', 'Make Ada Admin a viewer?', 'Make viewer');
    await expect.poll(() => refused.getByRole('alert').textContent()).toMatch(/only enabled admin.*Make another user an admin first/);
    await w.screenshot('28-settings-users-last-admin');
    await refused.getByRole('button', { name: 'Cancel' }).click();
    expect(await row('Ada Admin').textContent()).toMatch(/admin.*active/);
    expect((await apiCall<{ user: { role: string } }>(w, 'GET', '/auth/session')).user.role).toBe('admin');

    await confirm('Enable Vic Viewer', 'Enable Vic Viewer?', 'Enable the account');
    await expect.poll(() => row('Vic Viewer').textContent()).toMatch(/admin.*active/);
    expect((await signInAsVic()).status).toBe(200);
  });

  it('creates an API key shown once that works at once, and revokes it so it stops working', async () => {
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name').fill('SIEM export');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByRole('region', { name: 'Create an API key' }).locator('pre code').textContent())!;
    expect(key).toMatch(/^vgl_/);
    // The key is shown once to copy: masked in the published image.
    await w.screenshot('25-settings-api-key-created', page, { mask: [page.getByRole('region', { name: 'Create an API key' }).locator('pre code')] });
    const bearer = (k: string) => page.request.get(`${w.baseUrl}/api/v1/organization`, { headers: { authorization: `Bearer ${k}` } });
    expect((await bearer(key)).status()).toBe(200);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.content()).not.toContain(key);
    const row = table('API keys').getByRole('row').filter({ hasText: 'SIEM export' });
    await row.getByRole('button', { name: 'Revoke SIEM export' }).click();
    await page.getByRole('dialog', { name: 'Revoke SIEM export?' }).getByRole('button', { name: 'Revoke the key' }).click();
    await expect.poll(() => row.textContent()).toContain('revoked');
    expect((await bearer(key)).status()).toBe(401);
  });

  it("sends a test event to the deployment's webhook and reports a receiver's refusal", async () => {
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'SIEM sinks' }).click();
    expect(await table('Configured sinks').textContent()).toMatch(/webhook http:\/\/127\.0\.0\.1:\d+\/hook/);
    const tests = () => received.filter((e) => e === 'test').length;
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByText('Every sink accepted the test event.').waitFor();
    expect(tests()).toBe(1);
    await w.screenshot('26-settings-sinks');
    refuse = true;
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByText('1 of 1 sinks failed.').waitFor({ timeout: 60_000 });
    expect(await table('Test results').textContent()).toMatch(/failed.*503/);
    refuse = false;
    // The one failed request expected: the refusal to make the last admin a viewer (409, shown in its dialog).
    const { console: errors, csp } = await problems.read();
    expect({ console: errors.filter((e) => !/status of 409 .*\/api\/v1\/organization\/users\/usr_/.test(e)), csp }).toEqual({ console: [], csp: [] });
    expect(errors).toHaveLength(1);
  }, 90_000);
});
