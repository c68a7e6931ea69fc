import { describe, expect, it } from 'vitest';
import { AGENT_RISK_RATES, agentRiskFlags, generateTenant, groundTruth, permissionsToGrantedRoles } from '../../emulator/generate.ts';
import { PERMISSION_SETS, SYSTEM_ADMINISTRATOR } from '../../emulator/constants.ts';

const NOW = '2025-06-01T12:00:00Z';
const DAY = 86_400_000;

describe('generateTenant', () => {
  it('is deterministic from the seed and differs across seeds', () => {
    const a = generateTenant({ seed: 42, now: NOW });
    const b = generateTenant({ seed: 42, now: NOW });
    const c = generateTenant({ seed: 43, now: NOW });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(c.id).not.toBe(a.id);
    expect(generateTenant({ seed: 'tenant-x', now: NOW }).id).toBe(generateTenant({ seed: 'tenant-x', now: NOW }).id);
  });

  it('honours sizes and the documented layout', () => {
    const t = generateTenant({ seed: 7, now: NOW, sizes: { users: 40, guests: 6, groups: 9, environments: 5, agents: 30 } });
    expect(t.users.filter((u) => u.userType === 'Member')).toHaveLength(40);
    const guests = t.users.filter((u) => u.userType === 'Guest');
    expect(guests).toHaveLength(6);
    for (const g of guests) expect(g.userPrincipalName).toMatch(new RegExp(`^[a-z.0-9]+_[a-z0-9.-]+#EXT#@${t.domains[0]!.replace(/\./g, '\\.')}$`));
    expect(t.groups).toHaveLength(9);
    expect(t.groups[0]!.displayName).toBe('All Company');
    expect(t.memberships[t.groups[0]!.id]).toHaveLength(40);
    expect(new Set(t.users.map((u) => u.userPrincipalName)).size).toBe(t.users.length);

    expect(t.environments).toHaveLength(5);
    expect(t.environments[0]!.isDefault).toBe(true);
    expect(t.environments[0]!.environmentSku).toBe('Default');
    expect(t.environments[0]!.displayName).toBe(`${t.displayName} (default)`);
    expect(t.environments.filter((e) => e.dataverse === null)).toHaveLength(1);
    expect(t.environments.filter((e) => e.isDefault)).toHaveLength(1);

    const connector = t.apps.find((a) => a.appId === t.connectorAppId)!;
    expect(connector.displayName).toBe('Vigil Connector');
    expect(connector.servicePrincipalObjectId).not.toBe(connector.appId);
    expect(t.id).not.toBe(connector.appId);
    expect(connector.secrets).toHaveLength(1);
    const secret = connector.secrets[0]!;
    expect(secret.value).toMatch(/^[A-Za-z0-9]{3}\dQ~[A-Za-z0-9_.~-]{34}$/);
    expect(secret.hint).toBe(secret.value.slice(0, 3));
    expect(secret.endDateTime).toBe('2027-06-01T12:00:00Z');
    expect(connector.isManagementApp).toBe(true);

    // Exactly one Dataverse environment without the connector's application user (default for 3+ environments).
    const dv = t.environments.filter((e) => e.dataverse);
    const without = dv.filter((e) => !e.dataverse!.appUsers.some((a) => a.appId === connector.appId));
    expect(without).toHaveLength(1);
    expect(without[0]!.isDefault).toBe(false);
    for (const e of dv) {
      const org = e.dataverse!;
      expect(org.systemusers.some((s) => s.fullname === 'SYSTEM' && s.azureactivedirectoryobjectid === null)).toBe(true);
      const makers = org.systemusers.filter((s) => s.azureactivedirectoryobjectid && t.users.some((u) => u.id === s.azureactivedirectoryobjectid));
      expect(makers.length).toBeGreaterThan(0);
      for (const au of org.appUsers) {
        expect(au.roles).toContain(SYSTEM_ADMINISTRATOR);
        const su = org.systemusers.find((s) => s.systemuserid === au.systemuserid)!;
        expect(su.applicationid).toBe(au.appId);
        expect(su.accessmode).toBe(4);
      }
    }
  });

  it('mixes member kinds in groups', () => {
    const t = generateTenant({ seed: 11, now: NOW, sizes: { users: 60, groups: 20 } });
    const truth = groundTruth(t);
    expect(truth.membershipsByKind.user).toBeGreaterThan(60);
    expect(truth.membershipsByKind.group).toBeGreaterThan(0);
    expect(truth.membershipsByKind.servicePrincipal).toBeGreaterThan(0);
    expect(truth.membershipsByKind.device).toBeGreaterThan(0);
    const total = Object.values(t.memberships).reduce((n, ids) => n + ids.length, 0);
    expect(truth.memberships).toBe(total);
  });

  it.each([0, 1, 7, 20, 37, 100, 333])('places risky settings at exact rates for %i agents', (agents) => {
    const t = generateTenant({ seed: agents + 5, now: NOW, sizes: { users: 30, agents, environments: 4 } });
    const truth = groundTruth(t);
    expect(truth.agentsAll).toBe(agents);
    expect(truth.risksAll.noAuthentication).toBe(Math.floor(AGENT_RISK_RATES.noAuthentication * agents));
    expect(truth.risksAll.accessAny).toBe(Math.floor(AGENT_RISK_RATES.accessAny * agents));
    expect(truth.risksAll.ownerDisabled).toBe(Math.floor(AGENT_RISK_RATES.ownerDisabled * agents));
    expect(truth.risksAll.ownerGone).toBe(Math.floor(AGENT_RISK_RATES.ownerGone * agents));
    expect(truth.risksAll.dormant).toBe(Math.floor(AGENT_RISK_RATES.dormant * agents));
    if (truth.risksAll.noAuthentication > 0 && truth.risksAll.accessAny > 0) expect(truth.risksAll.noAuthenticationAndAccessAny).toBeGreaterThan(0);

    // Dates: dormant agents are older than 180 days on both dates, all others newer on both.
    const now = Date.parse(NOW);
    for (const env of t.environments) {
      for (const bot of env.dataverse?.bots ?? []) {
        const f = agentRiskFlags(t, env, bot, now);
        const modified = Date.parse(bot.modifiedon);
        const published = Date.parse(bot.publishedon!);
        if (f.dormant) expect(Math.max(modified, published)).toBeLessThan(now - 180 * DAY);
        else expect(Math.min(modified, published)).toBeGreaterThan(now - 180 * DAY);
        expect(f.ownerDisabled && f.ownerGone).toBe(false);
        expect(Date.parse(bot.createdon)).toBeLessThanOrEqual(published);
      }
    }
  });

  it('spreads agents over every Dataverse environment and reports readability', () => {
    const t = generateTenant({ seed: 5, now: NOW, sizes: { environments: 4, agents: 21 } });
    const dv = t.environments.filter((e) => e.dataverse);
    expect(dv).toHaveLength(3);
    for (const e of dv) expect(e.dataverse!.bots.length).toBe(7);
    const truth = groundTruth(t);
    expect(truth.dataverseEnvironments).toBe(3);
    expect(truth.readableEnvironments).toBe(2);
    expect(truth.agents).toBe(14);
    expect(truth.agentsUnreadable).toBe(7);
    expect(truth.users).toBe(truth.members + truth.guests);
    expect(truth.environments).toBe(4);
  });

  it('supports small tenants and explicit environmentsWithoutAccess', () => {
    const two = generateTenant({ seed: 1, now: NOW, sizes: { environments: 2, agents: 4 } });
    expect(two.environments.every((e) => e.dataverse !== null)).toBe(true);
    expect(groundTruth(two).unreadableEnvironments).toBe(0);
    const none = generateTenant({ seed: 1, now: NOW, sizes: { environments: 6, agents: 10 }, environmentsWithoutAccess: 3 });
    expect(groundTruth(none).unreadableEnvironments).toBe(3);
    expect(() => generateTenant({ seed: 1, sizes: { environments: 0, agents: 3 } })).toThrow(RangeError);
    expect(() => generateTenant({ seed: 1, sizes: { environments: 3 }, environmentsWithoutAccess: 3 })).toThrow(RangeError);
  });

  it('grants the permission presets and explicit lists per resource', () => {
    const quick = generateTenant({ seed: 1, now: NOW }).apps[0]!.grantedRoles;
    expect(quick).toEqual(PERMISSION_SETS.quick);
    expect(quick['https://graph.microsoft.com']).toEqual([
      'GroupMember.Read.All',
      'User.Read.All',
      'ExternalConnection.Read.All',
      'TeamsAppInstallation.ReadForUser.All',
      'AiEnterpriseInteraction.Read.All',
    ]);
    const step = generateTenant({ seed: 1, now: NOW, permissions: 'step-by-step', managementApp: false }).apps[0]!;
    expect(step.grantedRoles['https://graph.microsoft.com']).toEqual(['User.Read.All', 'Group.Read.All']);
    expect(step.grantedRoles['https://manage.office.com']).toEqual(['ActivityFeed.Read']);
    expect(step.grantedRoles['https://analysis.windows.net/powerbi/api']).toEqual(['Tenant.Read.All']);
    expect(step.isManagementApp).toBe(false);
    expect(permissionsToGrantedRoles(['User.Read.All', 'ActivityFeed.Read', 'Tenant.Read.All', 'https://service.powerapps.com/Some.Role'])).toEqual({
      'https://graph.microsoft.com': ['User.Read.All'],
      'https://manage.office.com': ['ActivityFeed.Read'],
      'https://analysis.windows.net/powerbi/api': ['Tenant.Read.All'],
      'https://service.powerapps.com': ['Some.Role'],
    });
  });

  it('generates a large tenant quickly enough for benchmarks', () => {
    const t = generateTenant({ seed: 9, now: NOW, sizes: { users: 20_000, guests: 500, groups: 300, environments: 8, agents: 400 } });
    const truth = groundTruth(t);
    expect(truth.users).toBe(20_500);
    expect(truth.risksAll.dormant).toBe(60);
  });
});

describe('seeds', () => {
  it('treats a decimal string seed like the number (CLI --seed 42 equals seed: 42)', () => {
    expect(generateTenant({ seed: '42', now: NOW }).id).toBe(generateTenant({ seed: 42, now: NOW }).id);
    expect(generateTenant({ seed: 'forty-two', now: NOW }).id).not.toBe(generateTenant({ seed: 42, now: NOW }).id);
  });
});
