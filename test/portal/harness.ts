import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { generateManagedApp, generateTenant, startEmulator, type ManagedApp, type RunningEmulator, type Tenant } from '../../emulator/index.ts';
import { addPortalUser, ensureOrganization } from '../../src/access/index.ts';
import { loadCustomProfile } from '../../src/config/cloud.ts';
import { createRuntime } from '../../src/main/runtime.ts';
import { TEST_ENV } from '../e2e/harness.ts';
import { freePort, startVigil, until } from '../support/process.ts';

/**
 * Browser test world: the emulator (two tenants and the operator-managed app), a real `vigil serve` process on
 * SQLite serving the built portal, and Debian's Chromium driven by playwright-core. Screenshots go to
 * `test-results/portal/`.
 */
export interface PortalWorld {
  baseUrl: string;
  emulator: RunningEmulator;
  contoso: Tenant;
  fabrikam: Tenant;
  managed: ManagedApp;
  email: string;
  password: string;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Saves a full-page screenshot as `test-results/portal/<name>.png`; returns the path. */
  screenshot(name: string, page?: Page): Promise<string>;
  /** Output of the serve process so far (for failure messages). */
  output(): string;
  /** The data directory `vigil serve` runs on, and the emulator's endpoints file (to open the same store in a test). */
  dataDir: string;
  endpointsFile: string;
  close(): Promise<void>;
}

/** Chromium's flags for a headless machine without a GPU, sandbox or network (the brief's list). */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
/** Debian's Chromium. */
const CHROMIUM = '/usr/bin/chromium';
/** Where the suite writes screenshots. */
const SCREENSHOT_DIR = join(import.meta.dirname, '..', '..', 'test-results', 'portal');

/** Options of {@link portalWorld}. */
interface PortalOptions {
  /** Set VIGIL_API_URL to the server's own address (runtime protection's base URL is then known). @default false */
  publicApiUrl?: boolean;
  /** More environment of `vigil serve` (e.g. a SIEM sink). */
  env?: Record<string, string>;
}

export async function portalWorld(opts: PortalOptions = {}): Promise<PortalWorld> {
  if (!existsSync(join(import.meta.dirname, '..', '..', 'web', 'dist', 'index.html')))
    throw new Error('The portal is not built: run `npm run build:web` (npm ci runs it).');
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const sizes = {
    users: 15,
    guests: 2,
    groups: 3,
    environments: 3,
    agents: 6,
    apps: 3,
    flows: 3,
    connectors: 2,
    connections: 3,
    powerBiWorkspaces: 2,
    foundryAccounts: 1,
    foundryProjects: 1,
    teamsAppsPerUser: 1,
  };
  const contoso = generateTenant({ seed: 'portal-contoso', permissions: 'documented', sizes, displayName: 'Contoso' });
  const fabrikam = generateTenant({ seed: 'portal-fabrikam', permissions: 'documented', sizes, displayName: 'Fabrikam' });
  const managed = generateManagedApp({ seed: 'portal-operator', redirectUris: [`${baseUrl}/consent/callback`] });
  if (!existsSync(CHROMIUM))
    throw new Error(
      `Chromium is missing at ${CHROMIUM}: \`npm test\` installs Debian's chromium (scripts/test-prereqs.sh), or run \`apt-get install chromium\`.`,
    );
  // Everything started is stopped again when a later step fails (a failed launch left \`vigil serve\` running before).
  const cleanup: Array<() => Promise<unknown> | unknown> = [];
  const stopAll = async () => {
    for (const stop of cleanup.reverse())
      await Promise.resolve()
        .then(stop)
        .catch(() => undefined);
  };
  try {
    const emulator = await startEmulator({ tenants: [contoso, fabrikam], managedApps: [managed] });
    cleanup.push(() => emulator.close());
    const endpointsFile = emulator.writeEndpointsFile(mkdtempSync(join(tmpdir(), 'vigil-emu-')));
    const dataDir = mkdtempSync(join(tmpdir(), 'vigil-portal-'));
    const env = {
      ...TEST_ENV,
      VIGIL_DATA_DIR: dataDir,
      VIGIL_ENDPOINTS_FILE: endpointsFile,
      VIGIL_HOST: '127.0.0.1',
      VIGIL_PORT: String(port),
      VIGIL_MANAGED_APP_CLIENT_ID: managed.appId,
      VIGIL_MANAGED_APP_CLIENT_SECRET: managed.clientSecret,
      VIGIL_CONSENT_REDIRECT_URI: `${baseUrl}/consent/callback`,
      VIGIL_LOG_LEVEL: 'info',
      ...(opts.publicApiUrl ? { VIGIL_API_URL: baseUrl } : {}),
      ...opts.env,
    };
    const email = 'admin@contoso.test';
    const password = 'correct horse battery staple';
    const rt = await createRuntime({ dataDir, cloud: loadCustomProfile(endpointsFile), env });
    await addPortalUser(rt.db, { organizationId: (await ensureOrganization(rt.db, 'Contoso')).id, email, password, role: 'admin', displayName: 'Ada Admin' });
    await rt.close();

    const { child, exited, output } = startVigil(['serve'], env);
    const stopServe = async () => {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      child.kill('SIGKILL');
    };
    cleanup.push(stopServe);
    await until('vigil serve to answer /healthz', async () => (await fetch(`${baseUrl}/healthz`).catch(() => null))?.ok, 60_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${output()}`);
    });

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    cleanup.push(() => browser.close());
    // The emulator's certificate comes from its own test CA: the browser only meets it on the consent page.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ignoreHTTPSErrors: true });
    const page = await context.newPage();
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    return {
      baseUrl,
      emulator,
      contoso,
      fabrikam,
      managed,
      email,
      password,
      browser,
      context,
      page,
      async screenshot(name, p = page) {
        const path = join(SCREENSHOT_DIR, `${name}.png`);
        await p.screenshot({ path, fullPage: true });
        return path;
      },
      output,
      dataDir,
      endpointsFile,
      close: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
