import { describe, expect, it } from 'vitest';
import { scoreAgents } from '../../src/checks/risk.ts';

const agent = (
  id: string,
  over: Partial<{ authentication_mode: number | null; access_control_policy: number | null; published_on: string | null; state_code: number | null }> = {},
) => ({
  environment_id: 'env1',
  id,
  name: id,
  authentication_mode: 2,
  access_control_policy: 0,
  published_on: '2026-10-01T00:00:00Z',
  state_code: 0,
  ...over,
});
const finding = (resourceId: string, severity: string, checkId = 'c') => ({ resource_type: 'agent', resource_id: resourceId, severity, check_id: checkId });

describe('agent risk score: findings weighted by severity plus reach', () => {
  it('ranks a public agent without authentication and with findings first, and explains every point', () => {
    const [top, second, third] = scoreAgents(
      [agent('quiet', { access_control_policy: 2 }), agent('open', { authentication_mode: 1 }), agent('org')],
      [finding('open', 'critical', 'agent_public_without_authentication'), finding('open', 'high', 'agent_no_authentication'), finding('org', 'low')],
    );
    expect(top).toMatchObject({ agentId: 'open', score: 95, reach: 'anyone', openFindings: 2 });
    expect(top!.reasons).toEqual(['2 open finding(s): agent_public_without_authentication, agent_no_authentication (+65)', 'reach: anyone (+30)']);
    expect([second!.agentId, second!.score, second!.reach]).toEqual(['org', 25, 'organization']);
    expect([third!.agentId, third!.score, third!.reach]).toEqual(['quiet', 12, 'restricted']);
    expect(top!.touch.status).toBe('not_evaluated');
  });

  it('caps findings at 70 and the score at 100; unpublished and switched-off agents reach less', () => {
    const many = Array.from({ length: 5 }, () => finding('a', 'critical'));
    expect(scoreAgents([agent('a', { authentication_mode: 1 })], many)[0]!.score).toBe(100);
    expect(scoreAgents([agent('draft', { published_on: null })], [])[0]).toMatchObject({ reach: 'makers only', score: 6 });
    expect(scoreAgents([agent('off', { state_code: 1, authentication_mode: 1 })], [])[0]).toMatchObject({ reach: 'off', score: 3 });
    // Findings on other resources (environments, the tenant) do not count for an agent.
    expect(scoreAgents([agent('a')], [{ resource_type: 'environment', resource_id: 'a', severity: 'high', check_id: 'x' }])[0]!.openFindings).toBe(0);
  });

  it('scales reach by what the agent can touch once its components are known', () => {
    const base = {
      botId: 'x',
      parentComponentId: null,
      schemaName: null,
      componentType: 9,
      yamlKind: null,
      stateCode: 0,
      modifiedOn: null,
      dataUnparsed: false,
    };
    const tool = {
      actionKind: 'InvokeConnectorTaskAction',
      connectionReference: null,
      connectorId: 'shared_office365',
      customConnector: false,
      operationId: null,
      serverHost: null,
      httpHosts: [],
      httpOrigins: [],
    };
    const components = new Map([
      ['maker', [{ ...base, kind: 'action' as const, tool: { ...tool, connectionMode: 'maker' as const } }]],
      [
        'sp',
        [
          {
            ...base,
            kind: 'knowledge' as const,
            knowledge: { sourceType: 'sharePoint' as const, sourceKind: null, url: null, host: null, connectionName: null },
          },
        ],
      ],
    ]);
    const ranked = scoreAgents([agent('maker'), agent('sp'), agent('bare')], [], components);
    expect(ranked.map((r) => [r.agentId, r.score])).toEqual([
      ['maker', 21],
      ['sp', 17],
      ['bare', 13],
    ]);
    expect(ranked[0]!.reasons[0]).toMatch(/1 tool\(s\) on the maker's credentials/);
    expect(ranked[0]!.touch).toMatchObject({ status: 'evaluated', tools: 1, makerCredentialTools: 1 });
  });
});
