import { describe, expect, it } from 'vitest';
import type { EnvironmentSettingsAttrs } from '../../src/sources/dataverse/streams/environmentSettings.ts';
import { checkContext, environmentRow, estateRow, resultFor, runCheck, sliceError, streamError } from '../support/checks.ts';

/** Dataverse's default blocked attachment list (Dataverse developer docs, "Block certain types of files"). */
const DEFAULT_BLOCKED =
  'ade;adp;app;asa;ashx;asmx;asp;bas;bat;cdx;cer;chm;class;cmd;com;config;cpl;crt;csh;dll;exe;fxp;hlp;hta;htr;htw;ida;idc;idq;inf;ins;isp;its;jar;js;jse;ksh;lnk;mad;maf;mag;mam;maq;mar;mas;mat;mau;mav;maw;mda;mdb;mde;mdt;mdw;mdz;msc;msh;msh1;msh1xml;msh2;msh2xml;mshxml;msi;msp;mst;ops;pcd;pif;prf;prg;printer;pst;reg;rem;scf;scr;sct;shb;shs;shtm;shtml;soap;stm;tmp;url;vb;vbe;vbs;vsmacros;vss;vst;vsw;ws;wsc;wsf;wsh;svg';

/** Settings of a hardened environment; `over` weakens one aspect. */
const hardened = (env: string, over: Partial<EnvironmentSettingsAttrs> = {}) =>
  estateRow(
    'environmentSettings',
    env,
    {
      environmentId: env,
      organizationId: 'o1',
      cspEnforcedModelDriven: true,
      cspEnforcedCanvas: true,
      cspReportUri: null,
      cspConfigurationModelDriven: null,
      cspConfigurationCanvas: null,
      auditEnabled: true,
      userAccessAuditEnabled: true,
      auditRetentionDays: -1,
      sessionTimeoutEnabled: false,
      sessionTimeoutMinutes: 1440,
      inactivityTimeoutEnabled: true,
      inactivityTimeoutMinutes: 30,
      blockedAttachments: DEFAULT_BLOCKED,
      ipFirewallEnabled: true,
      ipFirewallAuditOnly: false,
      ipFirewallAllowedRanges: '203.0.113.0/24,2001:db8::/48',
      ipCookieBindingEnabled: true,
      ...over,
    },
    { sliceKey: env },
  );
const envs = [environmentRow({ id: 'e1' }), environmentRow({ id: 'e2' }), environmentRow({ id: 'teams', dataverse_url: null })];
const run = async (id: string, ...rows: ReturnType<typeof hardened>[]) =>
  runCheck(id, checkContext({ environments: envs, estate: { environmentSettings: rows } }));

/** Each Dataverse settings check: the weakened setting that fails it, the reason it gives, and the column it needs. */
const CASES: {
  id: string;
  weak: Partial<EnvironmentSettingsAttrs>;
  reason: string;
  nearMiss: Partial<EnvironmentSettingsAttrs>;
  column: keyof EnvironmentSettingsAttrs;
}[] = [
  {
    id: 'pp_dataverse_auditing_disabled',
    weak: { auditEnabled: false },
    reason: 'auditing is off',
    nearMiss: { userAccessAuditEnabled: false, auditRetentionDays: 30 },
    column: 'auditEnabled',
  },
  {
    id: 'pp_dataverse_access_logging_disabled',
    weak: { userAccessAuditEnabled: false },
    reason: 'Log access',
    nearMiss: { auditRetentionDays: 30 },
    column: 'userAccessAuditEnabled',
  },
  {
    id: 'pp_session_timeout_too_long',
    weak: { sessionTimeoutEnabled: true, sessionTimeoutMinutes: 10080 },
    reason: '168 hours',
    nearMiss: { sessionTimeoutEnabled: true, sessionTimeoutMinutes: 1440 },
    column: 'sessionTimeoutEnabled',
  },
  {
    id: 'pp_inactivity_timeout_disabled',
    weak: { inactivityTimeoutEnabled: true, inactivityTimeoutMinutes: 240 },
    reason: 'after 240 minutes',
    nearMiss: { inactivityTimeoutEnabled: true, inactivityTimeoutMinutes: 120 },
    column: 'inactivityTimeoutEnabled',
  },
  {
    id: 'pp_blocked_attachments_incomplete',
    weak: { blockedAttachments: DEFAULT_BLOCKED.replace(';exe;', ';').replace(';js;', ';') },
    reason: '.exe, .js',
    nearMiss: { blockedAttachments: DEFAULT_BLOCKED.replace(';svg', '').toUpperCase().replaceAll(';', '; .') },
    column: 'blockedAttachments',
  },
  {
    id: 'pp_ip_firewall_disabled',
    weak: { ipFirewallAuditOnly: true },
    reason: 'audit-only',
    nearMiss: { ipFirewallAuditOnly: null },
    column: 'ipFirewallEnabled',
  },
  {
    id: 'pp_ip_cookie_binding_disabled',
    weak: { ipCookieBindingEnabled: false },
    reason: 'cookie binding is off',
    nearMiss: { ipFirewallEnabled: false },
    column: 'ipCookieBindingEnabled',
  },
];

const byId = Object.fromEntries(CASES.map((c) => [c.id, c]));

/** A hardened environment and the near miss pass; the weakened setting fails with its reason; no Dataverse, no result. */
async function passesAndFails(id: string): Promise<void> {
  const c = byId[id]!;
  const r = await run(c.id, hardened('e1', c.nearMiss), hardened('e2', c.weak));
  expect(r.map((x) => x.resourceId).sort()).toEqual(['e1', 'e2']);
  expect(resultFor(r, 'e1')?.status).toBe('pass');
  expect(resultFor(r, 'e2')).toMatchObject({ status: 'fail', resourceType: 'environment', reason: expect.stringContaining(c.reason) });
}

/** Not evaluated for an unreadable environment (errored slice), a column not returned, and without the stream. */
async function notEvaluated(id: string): Promise<void> {
  const c = byId[id]!;
  const r = await runCheck(
    c.id,
    checkContext({
      environments: envs,
      estate: { environmentSettings: [hardened('e2', { [c.column]: null })] },
      checkpoints: [sliceError('environmentSettings', 'e1', 'Forbidden', 'The user is not a member of the organization.')],
    }),
  );
  expect(resultFor(r, 'e1')).toMatchObject({ status: 'not_evaluated', reason: expect.stringContaining('not a member') });
  expect(resultFor(r, 'e2')?.status).toBe('not_evaluated');
  expect(await runCheck(c.id, checkContext({ checkpoints: [streamError('environmentSettings')] }))).toEqual([
    expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' }),
  ]);
}

describe('pp_dataverse_auditing_disabled', () => {
  it('passes a hardened environment and a near miss; fails the weakened setting', () => passesAndFails('pp_dataverse_auditing_disabled'));
  it('is not evaluated for an unreadable environment, a column not returned, and without the stream', () => notEvaluated('pp_dataverse_auditing_disabled'));
});

describe('pp_dataverse_access_logging_disabled', () => {
  it('passes a hardened environment and a near miss; fails the weakened setting', () => passesAndFails('pp_dataverse_access_logging_disabled'));
  it('is not evaluated for an unreadable environment, a column not returned, and without the stream', () =>
    notEvaluated('pp_dataverse_access_logging_disabled'));
});

describe('pp_session_timeout_too_long', () => {
  it('passes a hardened environment and a near miss; fails the weakened setting', () => passesAndFails('pp_session_timeout_too_long'));
  it('is not evaluated for an unreadable environment, a column not returned, and without the stream', () => notEvaluated('pp_session_timeout_too_long'));
  it('session timeout: the 24-hour default (custom value off) passes; on without its minutes is not evaluated', async () => {
    const r = await run(
      'pp_session_timeout_too_long',
      hardened('e1', { sessionTimeoutEnabled: false, sessionTimeoutMinutes: null }),
      hardened('e2', { sessionTimeoutEnabled: true, sessionTimeoutMinutes: null }),
    );
    expect(resultFor(r, 'e1')?.status).toBe('pass');
    expect(resultFor(r, 'e2')?.status).toBe('not_evaluated');
  });
});

describe('pp_inactivity_timeout_disabled', () => {
  it('passes a hardened environment and a near miss; fails the weakened setting', () => passesAndFails('pp_inactivity_timeout_disabled'));
  it('is not evaluated for an unreadable environment, a column not returned, and without the stream', () => notEvaluated('pp_inactivity_timeout_disabled'));
  it('inactivity timeout: off fails; access logging fails when auditing as a whole is off', async () => {
    expect((await run('pp_inactivity_timeout_disabled', hardened('e1', { inactivityTimeoutEnabled: false })))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('never signed out'),
    });
    expect((await run('pp_dataverse_access_logging_disabled', hardened('e1', { auditEnabled: false })))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('Auditing is off'),
    });
  });
});

describe('pp_blocked_attachments_incomplete', () => {
  it('passes a hardened environment and a near miss; fails the weakened setting', () => passesAndFails('pp_blocked_attachments_incomplete'));
  it('is not evaluated for an unreadable environment, a column not returned, and without the stream', () => notEvaluated('pp_blocked_attachments_incomplete'));
  it('blocked attachments: an empty list fails', async () => {
    expect((await run('pp_blocked_attachments_incomplete', hardened('e1', { blockedAttachments: '' })))[0]).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('No attachment extension'),
    });
  });
});

describe('pp_ip_firewall_disabled', () => {
  it('passes a hardened environment and a near miss; fails the weakened setting', () => passesAndFails('pp_ip_firewall_disabled'));
  it('is not evaluated for an unreadable environment, a column not returned, and without the stream', () => notEvaluated('pp_ip_firewall_disabled'));
  it('IP firewall: off fails, on without an allowed range fails', async () => {
    const r = await run('pp_ip_firewall_disabled', hardened('e1', { ipFirewallEnabled: false }), hardened('e2', { ipFirewallAllowedRanges: ' ' }));
    expect(resultFor(r, 'e1')).toMatchObject({ status: 'fail', reason: expect.stringContaining('any IP address') });
    expect(resultFor(r, 'e2')).toMatchObject({ status: 'fail', reason: expect.stringContaining('no allowed IP range') });
  });
});

describe('pp_ip_cookie_binding_disabled', () => {
  it('passes a hardened environment and a near miss; fails the weakened setting', () => passesAndFails('pp_ip_cookie_binding_disabled'));
  it('is not evaluated for an unreadable environment, a column not returned, and without the stream', () => notEvaluated('pp_ip_cookie_binding_disabled'));
});

// --- Managed Environments (BAP governanceConfiguration) -------------------------------------------------------------

/** A stored environment row whose raw BAP object carries `governanceConfiguration` (omitted when `gov` is undefined). */
const govEnv = (id: string, sku: string, gov?: Record<string, unknown>, isDefault = false) =>
  environmentRow({
    id,
    sku,
    is_default: isDefault ? 1 : 0,
    raw: JSON.stringify({ name: id, properties: { environmentSku: sku, ...(gov ? { governanceConfiguration: gov } : {}) } }),
  });
const managed = (ext: Record<string, string>) => ({ protectionLevel: 'Standard', settings: { extendedSettings: ext } });
const strict = { limitSharingMode: 'excludeSharingToSecurityGroups', maxLimitUserSharing: '20', isGroupSharingDisabled: 'true', solutionCheckerMode: 'block' };

describe('pp_environment_not_managed', () => {
  it('fails unmanaged production and default environments, passes managed ones, leaves sandboxes and developer environments out', async () => {
    const r = await runCheck(
      'pp_environment_not_managed',
      checkContext({
        environments: [
          govEnv('default', 'Default', { protectionLevel: 'Basic' }, true),
          govEnv('prod', 'Production', managed(strict)),
          govEnv('prod2', 'Production', { protectionLevel: 'Basic' }),
          govEnv('sandbox', 'Sandbox', { protectionLevel: 'Basic' }),
          govEnv('dev', 'Developer', { protectionLevel: 'Basic' }),
        ],
      }),
    );
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['default', 'fail'],
      ['prod', 'pass'],
      ['prod2', 'fail'],
    ]);
    expect(resultFor(r, 'prod2')?.reason).toContain('protection level Basic');
  });
  it('is not evaluated when the environment object carries no governance configuration, or without the environments stream', async () => {
    expect((await runCheck('pp_environment_not_managed', checkContext({ environments: [govEnv('prod', 'Production')] })))[0]?.status).toBe('not_evaluated');
    expect(await runCheck('pp_environment_not_managed', checkContext({ checkpoints: [streamError('environments')] }))).toEqual([
      expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' }),
    ]);
  });
});

describe('pp_managed_environment_sharing_unlimited', () => {
  it('passes a capped, group-excluded limit (any casing); fails no limit and an uncapped individual limit; leaves unmanaged out', async () => {
    const r = await runCheck(
      'pp_managed_environment_sharing_unlimited',
      checkContext({
        environments: [
          govEnv('ok', 'Production', managed({ ...strict, limitSharingMode: 'ExcludeSharingToSecurityGroups' })),
          govEnv('nolimit', 'Production', managed({ ...strict, limitSharingMode: 'noLimit', maxLimitUserSharing: '-1' })),
          govEnv('uncapped', 'Sandbox', managed({ ...strict, maxLimitUserSharing: '-1' })),
          govEnv('basic', 'Production', { protectionLevel: 'Basic' }),
        ],
      }),
    );
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['ok', 'pass'],
      ['nolimit', 'fail'],
      ['uncapped', 'fail'],
    ]);
    expect(resultFor(r, 'nolimit')?.reason).toContain('Everyone');
    expect(resultFor(r, 'uncapped')?.reason).toContain('any number of individuals');
  });
  it('is not evaluated without the governance configuration', async () => {
    expect((await runCheck('pp_managed_environment_sharing_unlimited', checkContext({ environments: [govEnv('x', 'Production')] })))[0]?.status).toBe(
      'not_evaluated',
    );
  });
});

describe('pp_managed_environment_solution_checker_off', () => {
  it('passes block and warn, fails none and an absent mode', async () => {
    const r = await runCheck(
      'pp_managed_environment_solution_checker_off',
      checkContext({
        environments: [
          govEnv('block', 'Production', managed({ ...strict, solutionCheckerMode: 'Block' })),
          govEnv('warn', 'Production', managed({ ...strict, solutionCheckerMode: 'warn' })),
          govEnv('none', 'Production', managed({ ...strict, solutionCheckerMode: 'none' })),
          govEnv('absent', 'Production', { protectionLevel: 'Standard' }),
        ],
      }),
    );
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['block', 'pass'],
      ['warn', 'pass'],
      ['none', 'fail'],
      ['absent', 'fail'],
    ]);
  });
  it('is not evaluated without the environments stream', async () => {
    expect((await runCheck('pp_managed_environment_solution_checker_off', checkContext({ checkpoints: [streamError('environments')] })))[0]?.status).toBe(
      'not_evaluated',
    );
  });
});
