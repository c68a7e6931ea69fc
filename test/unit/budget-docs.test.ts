import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { identityTier, limitsOf, type BudgetService } from '../../src/platform/http/budget.ts';

/**
 * The README's throttling table states the budgets the code applies (issue 18: the README's figures did not match
 * the code): each service's row names every limit of the service, with the default configuration.
 */

const README = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
const SERVICES: BudgetService[] = [
  'graph',
  'graphIdentity',
  'graphTeams',
  'dataverse',
  'powerPlatform',
  'powerBiAdmin',
  'powerBiScanInfo',
  'powerBiScanStatus',
  'powerBiScanResult',
  'powerBiModified',
  'powerBiActivity',
  'powerBiWidelyShared',
  'managementActivity',
];
const SCOPE_WORDS = { appTenant: 'per app+tenant', tenant: 'per tenant', app: 'per app', environment: 'per environment' } as const;
const n = (x: number) => x.toLocaleString('en-US');

/** The README row of a service's budget (the table line naming it in backquotes). */
function row(service: BudgetService): string | undefined {
  const section = README.slice(README.indexOf('### Throttling'));
  return section.split('\n').find((l) => l.startsWith('|') && l.includes(`(\`${service}\``));
}

describe('README throttling figures', () => {
  const { budgets } = loadConfig({}, { dataDir: '/nonexistent-vigil-test' });

  it.each(SERVICES)('states the budgets of %s as the code applies them', (service) => {
    const line = row(service);
    expect(line, `README row for ${service}`).toBeDefined();
    for (const limit of limitsOf(service, budgets, identityTier(undefined))) {
      expect(line).toContain(`${n(limit.capacity)} / ${n(limit.windowSeconds)} s ${SCOPE_WORDS[limit.scope]}`);
    }
  });

  it('states the identity tiers by tenant size', () => {
    const line = row('graphIdentity')!;
    expect(line).toContain(`${n(identityTier(49))} / 10 s`);
    expect(line).toContain(`${n(identityTier(50))} for 50–500 users`);
    expect(line).toContain(`${n(identityTier(501))} above 500`);
    expect(identityTier(500)).toBe(identityTier(50));
  });

  it('has one row per service, no more', () => {
    const section = README.slice(README.indexOf('### Throttling'), README.indexOf('## Layout'));
    expect(section.split('\n').filter((l) => /^\| .*\(`\w+`/.test(l))).toHaveLength(SERVICES.length);
  });
});
