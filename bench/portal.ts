/**
 * Portal responsiveness benchmark (issue 21): an organization with 10,000 open findings and 2,000 alerts, against one
 * with 100 findings and 20 alerts as the baseline, both served by one `vigil serve` as shipped (bin/vigil.mjs over
 * dist/ and the built portal in web/dist, its own process under /usr/bin/time) on SQLite, and read by Debian's Chromium
 * through playwright-core as a person reads them.
 *
 * Set-up (untimed): the emulator serves two small tenants; each organization and its admin are created as
 * test/portal/harness.ts does (the access use cases), each integration is added through the CLI as a user does
 * (`integrations add --organization …`, the credentials verified against the emulator's tenant). The findings and
 * alerts are then stored through the store's own repositories, deterministically: one evaluation of N failing results
 * (`applyEvaluation`, the check engine's write path) spread over every check of the catalogue in turn, and M alerts
 * (`raiseAlerts`, the detection engine's write path) spread over every detection rule, naming agents and environments
 * as the rules' details do, one every 17 minutes back from a fixed date. Each integration gets a schedule whose next
 * collection is a year away (`createSchedule`), so no collection resolves the seeded findings during the run.
 *
 * Measured, BENCH_PORTAL_RUNS times (default 15, after one unrecorded warm-up round), the two organizations
 * interleaved, each in its own signed-in browser context at 1280×800:
 * - first rows: from `page.goto('/findings')` (or `/alerts`) to the first row of the table showing the first item of
 *   the list call's answer (a full load of the portal each time: HTML, script, session, list call);
 * - sort: from a click on the first sortable column header not sorted yet to the first row showing the first item of
 *   the sorted answer (the server sorts and pages; skipped, and said so, on a table with no sortable column);
 * - filter: from choosing severity "high" to the first row showing the first item of the filtered answer;
 * - the list call of each: the browser's own timing of the request (start to the answer's last byte).
 * Times are taken in the benchmark's process around playwright-core's calls (a few milliseconds of its messaging are
 * included). A measurement that could not be taken (a list call not made, a row not shown within 30 s, a seeded count
 * not found in the store) fails the run, which then writes nothing and says "partial".
 *
 * Goal (issue 21): first rows under 1 s at 10,000 findings on this machine.
 *
 * Run: `npm run bench:portal` (after `npm run build`: dist/ and web/dist). Environment: BENCH_PORTAL_RUNS (15),
 * BENCH_PORTAL_FINDINGS (10000), BENCH_PORTAL_ALERTS (2000). Writes the `bench:portal` section of bench/README.md.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page, type Response } from 'playwright-core';
import { generateTenant, startEmulator, type Tenant } from '../emulator/index.ts';
import { addPortalUser, ensureOrganization } from '../src/access/index.ts';
import { loadCheckMetadata } from '../src/checks/loader.ts';
import { loadCustomProfile } from '../src/config/cloud.ts';
import { SEVERITIES } from '../src/core/types.ts';
import { loadDetections } from '../src/detections/index.ts';
import { createRuntime } from '../src/main/runtime.ts';
import { raiseAlerts, type AlertInput } from '../src/store/repositories/audit.ts';
import { applyEvaluation, type ResultInput } from '../src/store/repositories/findings.ts';
import { createSchedule } from '../src/store/repositories/schedules.ts';
import { freePort } from '../test/support/process.ts';
import { writeBenchSection } from './readme.ts';
import { assertShippedBenchReady, benchSetting, ROOT, startVigil, vigil, type Running } from './shipped.ts';

assertShippedBenchReady();
if (!existsSync(join(ROOT, 'web', 'dist', 'index.html'))) throw new Error('The portal is not built: run `npm run build:web` first');
const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install chromium`);
/** test/portal/harness.ts's flags: a headless machine without a GPU, sandbox or network. */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const runs = Number(process.env.BENCH_PORTAL_RUNS ?? 15);
const bigFindings = Number(process.env.BENCH_PORTAL_FINDINGS ?? 10_000);
const bigAlerts = Number(process.env.BENCH_PORTAL_ALERTS ?? 2_000);
const loadAtStart = loadavg()[0]!;
const PASSWORD = 'correct horse battery staple';
/** The alerts' newest creation time; the others go back 17 minutes each (2,000 alerts span about 24 days). */
const NEWEST = Date.parse('2026-11-20T12:00:00Z');
const n = (x: number) => x.toLocaleString('en');

/** One organization of the run: its size, its admin, its tenant and integration. */
interface Org {
  key: 'big' | 'base';
  name: string;
  findings: number;
  alerts: number;
  email: string;
  tenant: Tenant;
  integrationId?: string;
  context?: BrowserContext;
  page?: Page;
}

const orgs: Org[] = [
  { key: 'big', name: 'Large estate', findings: bigFindings, alerts: bigAlerts, email: 'admin@large.test', tenant: tinyTenant('bench-portal-large') },
  { key: 'base', name: 'Baseline', findings: 100, alerts: 20, email: 'admin@baseline.test', tenant: tinyTenant('bench-portal-baseline') },
];

function tinyTenant(seed: string): Tenant {
  return generateTenant({ seed, sizes: { users: 20, guests: 1, groups: 2, environments: 2, agents: 3 } });
}

/**
 * The findings of an organization: `count` failing results, check after check of the catalogue (each with its own
 * severity and resource type), on resources named as the inventory names them. Deterministic.
 */
function seededResults(count: number, checks: Awaited<ReturnType<typeof loadCheckMetadata>>): ResultInput[] {
  return Array.from({ length: count }, (_, i) => {
    const c = checks[i % checks.length]!;
    const k = String(i).padStart(5, '0');
    return {
      checkId: c.id,
      severity: c.severity,
      resourceType: c.resourceType,
      resourceId: `bench-${c.resourceType}-${k}`,
      resourceName: `${c.resourceType} ${k}`,
      status: 'fail',
      reason: `Seeded by bench/portal.ts (${c.id} on resource ${k}).`,
    };
  });
}

/**
 * The alerts of an organization: `count` alerts, rule after rule of the detections, each naming an agent, an
 * environment and a user as the agent rules' details do (`agentId`, `agentName`, `environmentId`, `user`), one every 17
 * minutes back from {@link NEWEST}. Deterministic.
 */
function seededAlerts(integrationId: string, count: number): { inputs: AlertInput[]; times: string[] } {
  const rules = loadDetections().map((d) => d.metadata);
  const inputs = Array.from({ length: count }, (_, i): AlertInput => {
    const r = rules[i % rules.length]!;
    const agent = `Agent ${String(i % 97).padStart(2, '0')}`;
    const user = `user${i % 41}@contoso.test`;
    return {
      integrationId,
      ruleId: r.id,
      severity: r.severity,
      title: `${r.title}: ${agent} by ${user}`,
      dedupeKey: `bench-${i}`,
      detail: { agentId: `bench-agent-${i % 97}`, agentName: agent, environmentId: `bench-env-${i % 7}`, user },
    };
  });
  return { inputs, times: inputs.map((_, i) => new Date(NEWEST - i * 17 * 60_000).toISOString()) };
}

/** One measurement: ms from the action to the first row of the answer shown, and the list call's own ms. */
interface Sample {
  rowsMs: number;
  apiMs: number;
}

/**
 * Runs `act` and measures until the table's first row shows the first item of the list call it causes: the GET of
 * `/api/v1/<list>` whose query satisfies `wanted`. The first item is found by its link (`/<list>/<id>`).
 * @throws Error when no such call is made, it fails, answers no items, or the row is not shown within 30 s.
 */
async function measureRows(page: Page, list: 'findings' | 'alerts', wanted: (q: URLSearchParams) => boolean, act: () => Promise<unknown>): Promise<Sample> {
  const started = performance.now();
  const answer = page.waitForResponse(
    (r: Response) => {
      const u = new URL(r.url());
      return r.request().method() === 'GET' && u.pathname === `/api/v1/${list}` && wanted(u.searchParams);
    },
    { timeout: 30_000 },
  );
  await act();
  const res = await answer;
  if (res.status() !== 200) throw new Error(`GET ${res.url()} answered ${res.status()}`);
  const body = (await res.json()) as { items: { id: string }[] };
  const first = body.items[0]?.id;
  if (!first) throw new Error(`GET ${res.url()} answered no items`);
  await page.locator(`table tbody tr:first-child a[href="/${list}/${encodeURIComponent(first)}"]`).waitFor({ state: 'visible', timeout: 30_000 });
  const rowsMs = performance.now() - started;
  await res.finished();
  const apiMs = res.request().timing().responseEnd;
  if (!(apiMs > 0)) throw new Error(`no timing for GET ${res.url()}`);
  return { rowsMs, apiMs };
}

/** What is measured on each list page, in the table's order. */
const MEASURES = ['first rows', 'sort', 'filter', 'search'] as const;
type Measure = (typeof MEASURES)[number];
const samples = new Map<string, Sample[]>();
const record = (org: Org, list: string, m: Measure, s: Sample) => {
  const k = `${org.key} ${list} ${m}`;
  samples.set(k, [...(samples.get(k) ?? []), s]);
};
/** Lists whose table offers no sortable column (their sort is not measured), with the sort asked on the others. */
const unsortable = new Set<string>();
const sortAsked = new Map<string, string>();

/**
 * What the search measurement types, per list: a term that names a few items in both organizations (a resource
 * number of {@link seededResults}; a user of {@link seededAlerts}), matched by the server in the text it searches.
 */
const SEARCHED = { findings: '00042', alerts: 'user7@contoso.test' } as const;

/** One round on one list page of one organization: first rows, a server-side sort (when offered), a filter, a search. */
async function round(org: Org, list: 'findings' | 'alerts', keep: boolean): Promise<void> {
  const page = org.page!;
  const base = orgBase;
  const s1 = await measureRows(
    page,
    list,
    (q) => !q.has('cursor') && !q.has('severity') && !q.has('sort'),
    () => page.goto(`${base}/${list}`, { waitUntil: 'commit' }),
  );
  // The first sortable column not sorted yet: a header button the server's order answers.
  const header = page.locator('table thead th[aria-sort="none"] button.sort-button').first();
  let s2: Sample | undefined;
  if (await header.count()) {
    const label = (await header.innerText()).replace(/[↕▲▼]/g, '').trim();
    sortAsked.set(list, label);
    s2 = await measureRows(
      page,
      list,
      (q) => q.has('sort'),
      () => header.click(),
    );
  } else unsortable.add(list);
  const s3 = await measureRows(
    page,
    list,
    (q) => q.get('severity') === 'high',
    () => page.getByRole('combobox', { name: 'Severity' }).selectOption('high'),
  );
  // A search over every severity (the filter goes back to all first, untimed): typed, then submitted.
  await page.goto(`${base}/${list}`, { waitUntil: 'commit' });
  await page.getByRole('searchbox', { name: 'Search' }).fill(SEARCHED[list]);
  const s4 = await measureRows(
    page,
    list,
    (q) => q.get('q') === SEARCHED[list],
    () => page.getByRole('searchbox', { name: 'Search' }).press('Enter'),
  );
  if (!keep) return;
  record(org, list, 'first rows', s1);
  if (s2) record(org, list, 'sort', s2);
  record(org, list, 'filter', s3);
  record(org, list, 'search', s4);
}

let orgBase = '';
let browserVersion = '';
const emulator = await startEmulator({ tenants: orgs.map((o) => o.tenant) });
let serve: Running | undefined;
let section = '';
const failures: string[] = [];
try {
  const { env } = benchSetting(emulator, orgs[0]!.tenant, 'bench-portal');
  const port = await freePort();
  orgBase = `http://127.0.0.1:${port}`;
  // The scheduler would queue a first collection of each new integration: it ticks hourly, and each integration's
  // schedule (below) is a year away.
  const serveEnv = { ...env, VIGIL_PORT: String(port), VIGIL_HOST: '127.0.0.1', VIGIL_API_URL: orgBase, VIGIL_SCHEDULER_TICK_SECONDS: '3600' };
  const cloud = loadCustomProfile(env.VIGIL_ENDPOINTS_FILE);

  // --- set-up, untimed ----------------------------------------------------------------------------------------
  let rt = await createRuntime({ dataDir: env.VIGIL_DATA_DIR, cloud, env: serveEnv });
  for (const o of orgs)
    await addPortalUser(rt.db, {
      organizationId: (await ensureOrganization(rt.db, o.name)).id,
      email: o.email,
      password: PASSWORD,
      role: 'admin',
      displayName: 'Bench Admin',
    });
  await rt.close();
  for (const o of orgs) {
    const app = o.tenant.apps.find((a) => a.appId === o.tenant.connectorAppId)!;
    const out = await vigil(
      { ...serveEnv, BENCH_SECRET: app.secrets[0]!.value },
      'integrations',
      'add',
      '--mode',
      'customer-app',
      '--organization',
      o.name,
      '--tenant-id',
      o.tenant.id,
      '--client-id',
      app.appId,
      '--client-secret-env',
      'BENCH_SECRET',
      '--json',
    );
    o.integrationId = (JSON.parse(out.stdout) as { integration: { id: string } }).integration.id;
  }
  rt = await createRuntime({ dataDir: env.VIGIL_DATA_DIR, cloud, env: serveEnv });
  const checks = (await loadCheckMetadata()).sort((a, b) => a.id.localeCompare(b.id));
  const seedStart = performance.now();
  for (const o of orgs) {
    const id = o.integrationId!;
    await createSchedule(rt.db, {
      integration_id: id,
      jitter_seconds: 0,
      next_due_at: new Date(Date.now() + 365 * 86_400_000).toISOString(),
      last_enqueued_at: null,
    });
    await rt.db.transaction().execute((trx) => applyEvaluation(trx, id, null, seededResults(o.findings, checks), new Date(NEWEST).toISOString()));
    const { inputs, times } = seededAlerts(id, o.alerts);
    let t = 0;
    await rt.db.transaction().execute((trx) => raiseAlerts(trx, inputs, () => times[t++]!));
    const open = await rt.db
      .selectFrom('findings')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('integration_id', '=', id)
      .where('status', '=', 'open')
      .executeTakeFirstOrThrow();
    const alerts = await rt.db
      .selectFrom('alerts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('integration_id', '=', id)
      .executeTakeFirstOrThrow();
    if (Number(open.n) !== o.findings || Number(alerts.n) !== o.alerts)
      throw new Error(`${o.name}: ${open.n} open findings and ${alerts.n} alerts stored, ${o.findings} and ${o.alerts} seeded`);
  }
  await rt.close();
  console.log(`seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

  // --- the shipped server and the browser ----------------------------------------------------------------------
  serve = startVigil(serveEnv, 'serve');
  await serve.waitFor(/listening|http:\/\/127\.0\.0\.1/i, 60_000);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  browserVersion = browser.version();
  try {
    for (const o of orgs) {
      o.context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      o.page = await o.context.newPage();
      await o.page.goto(orgBase);
      await o.page.getByLabel('Email').fill(o.email);
      await o.page.getByLabel('Password').fill(PASSWORD);
      await o.page.getByRole('button', { name: 'Sign in' }).click();
      await o.page.getByRole('navigation', { name: 'Main' }).waitFor();
    }
    for (let r = 0; r <= runs; r++)
      for (const o of orgs)
        for (const list of ['findings', 'alerts'] as const)
          await round(o, list, r > 0).catch((e: Error) => {
            throw new Error(`${o.name} /${list}, round ${r}: ${e.message}`);
          });
    // Paging is the server's: the large lists have a next page, the table holds one page.
    for (const list of ['findings', 'alerts'] as const) {
      const p = orgs[0]!.page!;
      const res = await p.request.get(`${orgBase}/api/v1/${list}?limit=50`);
      const body = (await res.json()) as { items: unknown[]; nextCursor: string | null };
      if (body.items.length !== 50 || !body.nextCursor) failures.push(`GET /api/v1/${list} did not answer a page of 50 with a next page`);
      await p.goto(`${orgBase}/${list}`);
      await p.locator('table tbody tr').first().waitFor({ state: 'visible', timeout: 30_000 });
      const rows = await p.locator('table tbody tr').count();
      if (rows !== 50) failures.push(`/${list} shows ${rows} rows, not one page of 50`);
    }
  } finally {
    await browser.close();
  }
  const measured = await serve.stop();
  serve = undefined;

  // --- the table -------------------------------------------------------------------------------------------------
  const pct = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
  };
  const fmt = (xs: number[] | undefined) => (xs?.length ? `${Math.round(pct(xs, 50))} / ${Math.round(pct(xs, 95))}` : '–');
  const rows: string[] = [];
  let goal = '';
  for (const list of ['findings', 'alerts'] as const)
    for (const m of MEASURES) {
      if (m === 'sort' && unsortable.has(list)) {
        rows.push(`| \`/${list}\` | sort | not measured: the table has no sortable column in this build | | | |`);
        continue;
      }
      const big = samples.get(`big ${list} ${m}`);
      const base = samples.get(`base ${list} ${m}`);
      if (!big?.length || !base?.length) {
        failures.push(`no samples of ${list} ${m}`);
        continue;
      }
      const what =
        m === 'sort'
          ? `sort by ${sortAsked.get(list) ?? '?'}`
          : m === 'filter'
            ? 'filter: severity high'
            : m === 'search'
              ? `search: "${SEARCHED[list]}"`
              : 'first rows after navigation';
      rows.push(
        `| \`/${list}\` | ${what} | ${fmt(big.map((s) => s.rowsMs))} | ${fmt(big.map((s) => s.apiMs))} | ${fmt(base.map((s) => s.rowsMs))} | ${fmt(base.map((s) => s.apiMs))} |`,
      );
      if (list === 'findings' && m === 'first rows') {
        const p95 = pct(
          big.map((s) => s.rowsMs),
          95,
        );
        goal = `Goal: first rows under 1 s at ${n(bigFindings)} findings: ${p95 < 1000 ? 'met' : 'not met'} (p95 ${Math.round(p95)} ms).`;
      }
    }
  section = [
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:portal\` (${runs} rounds after a warm-up round, the two organizations interleaved), Node ${process.version}, ${process.platform}/${process.arch}, 1-minute load average ${loadAtStart.toFixed(1)} at the start; \`vigil serve\` as shipped on SQLite (one server for both organizations), Debian's Chromium ${browserVersion} headless at 1280×800 through playwright-core, ${SEVERITIES.length} severities.`,
    '',
    `Milliseconds, median / p95. "Rows": from the navigation, the click on a column header, the choice in the severity filter or the search's Enter to the first row of the table showing the first item of the list call's answer (a page of 50). "API": that list call in the browser, from its start to the answer's last byte.`,
    '',
    `| page | measurement | ${n(bigFindings)} findings / ${n(bigAlerts)} alerts: rows | API | baseline, 100 findings / 20 alerts: rows | API |`,
    '|---|---|---:|---:|---:|---:|',
    ...rows,
    '',
    `${goal} \`vigil serve\` over the whole run: CPU ${measured.cpuSeconds.toFixed(1)} s, peak RSS ${measured.peakRssMiB.toFixed(0)} MiB.`,
  ].join('\n');
} catch (e) {
  failures.push((e as Error).message);
} finally {
  await serve?.stop().catch(() => undefined);
  await emulator.close();
}

if (failures.length || !section) {
  console.error(`bench:portal partial: a measurement could not be taken; bench/README.md not written:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
console.log(section);
writeBenchSection('portal', section);
console.log('bench/README.md: bench:portal section written.');
