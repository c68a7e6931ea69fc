import { describe, expect, it } from 'vitest';
import { scoreAgents } from '../../src/checks/risk.ts';
import { toAgent } from '../../src/sources/dataverse/streams/agents.ts';
import { mappingOf } from '../../src/store/stream-tables.ts';
import { agentRow, checkContext, resultFor, runCheck, streamError } from '../support/checks.ts';

/**
 * The sharing checks on Copilot Studio agents as Dataverse returns them: `GET {org}/api/data/v9.2/bots?$select=…`
 * rows with the columns of the bot table reference (power-apps/developer/data-platform/reference/entities/bot) —
 * choice columns as numbers, lookups as `_…_value`, the `@odata.etag` annotation — mapped by the stream's own
 * `toAgent`. `accesscontrolpolicy` 3 is "Any (multitenant)" (Microsoft Defender / Azure Monitor AIAgentsInfo name it;
 * Maester MT.1113 fails it like "Any").
 */

const bot = (botid: string, accesscontrolpolicy: number | null, authenticationmode: number) => ({
  '@odata.etag': 'W/"4012388"',
  botid,
  name: `Agent ${botid.slice(0, 4)}`,
  schemaname: `cr3b1_agent${botid.slice(0, 4)}`,
  authenticationmode,
  authenticationtrigger: 1,
  accesscontrolpolicy,
  authorizedsecuritygroupids: null,
  publishedon: '2026-10-14T09:12:44Z',
  _publishedby_value: '5c0f3a56-1b0e-f011-998a-000d3a5c1d2e',
  _ownerid_value: '5c0f3a56-1b0e-f011-998a-000d3a5c1d2e',
  statecode: 0,
  statuscode: 1,
  language: 1033,
  runtimeprovider: 0,
  template: 'default-2.1.0',
  createdon: '2026-09-30T15:02:11Z',
  modifiedon: '2026-10-14T09:12:40Z',
  configuration: '{"$kind":"BotConfiguration","settings":{"GenerativeActionsEnabled":true}}',
});

/** The store row the repository writes for a bot of environment `env1`. */
const row = (j: ReturnType<typeof bot>) => {
  return agentRow({ ...mappingOf('agents').toRow(toAgent(j, 'env1')), raw: JSON.stringify(j) });
};

const MULTI = 'a1a1a1a1-0000-4000-8000-000000000003';
const ANY = 'b2b2b2b2-0000-4000-8000-000000000000';
const READERS = 'c3c3c3c3-0000-4000-8000-000000000001';
const GROUPS = 'd4d4d4d4-0000-4000-8000-000000000002';
const FUTURE = 'e5e5e5e5-0000-4000-8000-000000000009';

describe('access control policy 3, Any (multitenant)', () => {
  it('agent_shared_with_everyone fails it (broader than Any), fails Any, passes readers and groups, does not pass an unknown value', async () => {
    const r = await runCheck(
      'agent_shared_with_everyone',
      checkContext({ agents: [row(bot(MULTI, 3, 2)), row(bot(ANY, 0, 2)), row(bot(READERS, 1, 2)), row(bot(GROUPS, 2, 3)), row(bot(FUTURE, 9, 2))] }),
    );
    expect(resultFor(r, MULTI)).toMatchObject({
      status: 'fail',
      reason: expect.stringContaining('any Microsoft Entra tenant'),
      detail: expect.objectContaining({ reach: 'any-tenant' }),
    });
    expect(resultFor(r, ANY)).toMatchObject({ status: 'fail', detail: expect.objectContaining({ reach: 'organization' }) });
    expect(resultFor(r, READERS)?.status).toBe('pass');
    expect(resultFor(r, GROUPS)?.status).toBe('pass');
    expect(resultFor(r, FUTURE)).toMatchObject({ status: 'not_evaluated', reason: expect.stringContaining('Unknown access control policy value 9') });
  });

  it('agent_public_without_authentication fails 3 with authentication None, passes 3 with Microsoft authentication', async () => {
    const r = await runCheck(
      'agent_public_without_authentication',
      checkContext({ agents: [row(bot(MULTI, 3, 1)), row(bot(ANY, 3, 2)), row(bot(READERS, 1, 2)), row(bot(FUTURE, 9, 1))] }),
    );
    expect(resultFor(r, MULTI)).toMatchObject({ status: 'fail', reason: expect.stringContaining('Any (multitenant)') });
    expect(resultFor(r, ANY)?.status).toBe('pass');
    expect(resultFor(r, READERS)?.status).toBe('pass');
    expect(resultFor(r, FUTURE)?.status).toBe('not_evaluated');
  });

  it('the risk score ranks a multitenant agent above an organisation-wide one, below one without authentication', () => {
    const agents = [row(bot(ANY, 0, 2)), row(bot(MULTI, 3, 2)), row(bot(READERS, 1, 1))];
    const scores = scoreAgents(agents, []);
    const reach = Object.fromEntries(scores.map((s) => [s.agentId, s]));
    expect(reach[MULTI]!.reach).toBe('any tenant');
    expect(reach[MULTI]!.score).toBeGreaterThan(reach[ANY]!.score);
    expect(reach[READERS]!.score).toBeGreaterThan(reach[MULTI]!.score);
  });
});

describe('agent_shared_multitenant', () => {
  it('fails Any (multitenant) only: passes Any, and is not evaluated without a policy', async () => {
    const r = await runCheck(
      'agent_shared_multitenant',
      checkContext({
        agents: [
          agentRow({ id: 'm', access_control_policy: 3 }),
          agentRow({ id: 'o', access_control_policy: 0 }),
          agentRow({ id: 'n', access_control_policy: null }),
        ],
      }),
    );
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['m', 'fail'],
      ['o', 'pass'],
      ['n', 'not_evaluated'],
    ]);
  });
});

describe('agent_sign_in_not_required', () => {
  it('fails configured authentication with sign-in As Needed, passes Always, leaves out agents without authentication', async () => {
    const r = await runCheck(
      'agent_sign_in_not_required',
      checkContext({
        agents: [
          agentRow({ id: 'asNeeded', authentication_mode: 3, authentication_trigger: 0 }),
          agentRow({ id: 'always', authentication_mode: 2, authentication_trigger: 1 }),
          agentRow({ id: 'none', authentication_mode: 1, authentication_trigger: 0 }),
          agentRow({ id: 'unknown', authentication_mode: 2, authentication_trigger: null }),
        ],
      }),
    );
    expect(r.map((x) => [x.resourceId, x.status])).toEqual([
      ['asNeeded', 'fail'],
      ['always', 'pass'],
      ['unknown', 'not_evaluated'],
    ]);
  });
  it('is not evaluated for the tenant when agents were not collected', async () => {
    const r = await runCheck('agent_sign_in_not_required', checkContext({ checkpoints: [streamError('agents', 'PARENT_STREAM_FAILED')] }));
    expect(r).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'not_evaluated' })]);
  });
});
