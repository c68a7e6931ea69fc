import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_RUN_ORDER } from '../../src/sources/index.ts';
import { addCustomerAppIntegration } from '../../src/onboarding/integrations.ts';
import { vigil } from '../support/process.ts';
import { world, type World } from './harness.ts';

/**
 * What `vigil collect` shows a person when its output is not a terminal (a CI log, a pipe): one plain line per
 * stream on stderr, the check phase, and the run's errors grouped per environment by name with their fix on stdout.
 */
describe('vigil collect, not on a terminal', () => {
  let w: World;
  let dataDir: string;
  beforeAll(async () => {
    // 3 environments: one has no application user for the connector, so its Dataverse streams fail with 403.
    w = await world({ seed: 'cli-progress', sizes: { users: 40, guests: 2, groups: 4, environments: 3, agents: 6 } });
    dataDir = mkdtempSync(join(tmpdir(), 'vigil-progress-'));
    const rt = await w.runtime(dataDir);
    await addCustomerAppIntegration(rt, { tenantId: w.tenant.id, clientId: w.app.appId, clientSecret: w.secret, name: 'Contoso' });
    await rt.close();
  });
  afterAll(async () => w.close());

  it('prints a line per stream and per phase on stderr, and errors grouped by environment name with the fix', async () => {
    const r = await vigil(['collect', 'Contoso'], { VIGIL_ENDPOINTS_FILE: w.endpointsFile, VIGIL_DATA_DIR: dataDir, VIGIL_LOG_LEVEL: 'info' });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trimEnd().split('\n');
    const total = STREAM_RUN_ORDER.length;
    const width = String(total).length;
    // Every stream once, as it finishes (streams of different services run at once), each with its position in the run
    // order, its records and duration; then the check phase.
    const streamLines = lines.slice(0, total);
    expect(streamLines.map((l) => l.replace(/: .*/, '')).sort()).toEqual(
      STREAM_RUN_ORDER.map((s, i) => `[${String(i + 1).padStart(width)}/${total}] ${s}`).sort(),
    );
    expect(streamLines.find((l) => l.includes('] users:'))).toMatch(
      new RegExp(`^\\[ ?1/${total}\\] users: ${w.truth.users.toLocaleString('en-US')} records in \\d+\\.\\d s$`),
    );
    expect(lines.filter((l) => /errored slice/.test(l)).length).toBeGreaterThan(0);
    expect(lines.slice(total)).toEqual([expect.stringMatching(/^evaluating \d+ checks$/), expect.stringMatching(/^checks evaluated: \d+ in \d+\.\d s$/)]);
    // Nothing animated: no carriage returns, no escape sequences.
    expect(r.stderr).not.toContain('\r');
    expect(r.stderr).not.toContain('\x1b');

    // Errors: one environment, by display name (not its GUID), one problem for its Dataverse streams, with the fix.
    const names = w.tenant.environments.map((e) => e.displayName);
    const env = /^ {2}environment (.+)$/m.exec(r.stdout)?.[1];
    expect(names).toContain(env);
    const flowing = r.stdout.replace(/\s+/g, ' '); // lines are wrapped to the width
    expect(flowing).toMatch(
      /6 streams \(dataverseUsers, agents, agentComponents, agentSettings, environmentSettings, conversationTranscripts\): Dataverse answered 403 0x80072560/,
    );
    expect(flowing).toMatch(/fix: Vigil's application has no application user in this environment/);
    expect(r.stdout.split('\n').every((l) => l.length <= 120)).toBe(true);
    expect(r.stdout).not.toMatch(/https?:\/\//);
    expect(r.stdout).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  });
});
