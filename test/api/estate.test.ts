import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groundTruth } from '../../emulator/index.ts';
import type { Tenant } from '../../emulator/index.ts';
import { collectAndEvaluate } from '../../src/sync/run.ts';
import { apiWorld, connector, signInAs, type ApiWorld, type Session } from './harness.ts';

/**
 * The estate as a picture through /api/v1 (issue 21): the agents table (totals, server-side sort, search, paging),
 * an agent's reach graph against the emulator's ground truth (its tools, knowledge sources and MCP servers), and one
 * environment's agents, apps and flows; each scoped to the caller's organization.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- generated YAML read loosely, as the ground truth does
type Yaml = Record<string, any>;

/** The active components of one bot in the emulated tenant, with their YAML parsed. */
function componentsOf(t: Tenant, botId: string) {
  const comps = t.environments.flatMap((e) => e.dataverse?.botcomponents ?? []).filter((c) => c._parentbotid_value === botId && c.statecode === 0);
  return comps.map((c) => ({ name: c.name, tree: (c.data ? parseYaml(c.data) : {}) as Yaml }));
}

describe('REST API: the estate (agents table, reach graph, environment)', () => {
  let w: ApiWorld;
  let admin: Session;
  let other: Session;
  const integration: Record<string, string> = {};
  beforeAll(async () => {
    w = await apiWorld();
    admin = await signInAs(w.app, 'admin@contoso.test', w.password);
    other = await signInAs(w.app, 'admin@fabrikam.test', w.password);
    for (const [org, s, t] of [
      ['contoso', admin, w.tenants.contoso],
      ['fabrikam', other, w.tenants.fabrikam],
    ] as const) {
      const res = await w.app.inject({
        method: 'POST',
        url: '/api/v1/integrations',
        headers: { cookie: s.cookie, 'x-csrf-token': s.csrf },
        payload: { mode: 'customer-app', name: org, ...connector(t) },
      });
      expect(res.statusCode, res.body).toBe(201);
      integration[org] = res.json().integration.id;
      await collectAndEvaluate(w.rt, integration[org]!);
    }
  }, 180_000);
  afterAll(async () => w?.close());

  const get = async (s: Session, url: string) => w.app.inject({ method: 'GET', url, headers: { cookie: s.cookie } });

  it('lists every agent of the organization with names, the total, a server-side order and search, page by page', async () => {
    const expected = groundTruth(w.tenants.contoso).agents;
    const all = (await get(admin, '/api/v1/estate/agents?limit=500')).json();
    expect(all.total).toBe(expected);
    expect(all.items).toHaveLength(expected);
    // Riskiest first by default, and every row carries the environment's name rather than only its id.
    const scores = all.items.map((a: { score: number }) => a.score);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
    const envNames = new Map(w.tenants.contoso.environments.map((e) => [e.name, e.displayName]));
    for (const a of all.items) expect(a.environmentName).toBe(envNames.get(a.environmentId));

    const byName = (await get(admin, '/api/v1/estate/agents?sort=name&order=asc&limit=1')).json();
    const names = all.items.map((a: { name: string }) => a.name).sort((x: string, y: string) => x.toLowerCase().localeCompare(y.toLowerCase()));
    expect(byName.items.map((a: { name: string }) => a.name)).toEqual(names.slice(0, 1));
    expect(byName.total).toBe(expected);
    const nextRes = await get(admin, `/api/v1/estate/agents?sort=name&order=asc&limit=1&cursor=${byName.nextCursor}`);
    expect(nextRes.statusCode, nextRes.body).toBe(200);
    const next = nextRes.json();
    expect(next.items.map((a: { name: string }) => a.name)).toEqual(names.slice(1, 2));
    expect(expected).toBeGreaterThan(1);

    const one = names[0] as string;
    const found = (await get(admin, `/api/v1/estate/agents?q=${encodeURIComponent(one.slice(1, 6).toUpperCase())}`)).json();
    expect(found.items.map((a: { name: string }) => a.name)).toContain(one);
    expect(found.total).toBe(found.items.length);
    // Near miss: a search nothing matches finds nothing, and another organization sees none of these agents.
    expect((await get(admin, '/api/v1/estate/agents?q=zz-no-such-agent')).json()).toEqual({ items: [], total: 0, nextCursor: null });
    const theirs = (await get(other, '/api/v1/estate/agents?limit=500')).json();
    expect(theirs.total).toBe(groundTruth(w.tenants.fabrikam).agents);
    expect(theirs.items.map((a: { agentId: string }) => a.agentId)).not.toContain(all.items[0].agentId);
    expect((await get(admin, '/api/v1/estate/agents?sort=colour')).statusCode).toBe(400);
  });

  it("draws an agent's reach from the inventory: its tools, knowledge sources and MCP servers, and who can reach it", async () => {
    const all = (await get(admin, '/api/v1/estate/agents?limit=500')).json().items as { agentId: string; tools: number | null }[];
    let checked = 0;
    for (const a of all) {
      const res = await get(admin, `/api/v1/integrations/${integration.contoso}/agents/${a.agentId}/reach`);
      expect(res.statusCode, res.body).toBe(200);
      const reach = res.json() as { nodes: { id: string; kind: string; label: string; flags: string[] }[]; edges: { from: string; to: string }[] };
      const labels = (kind: string) => reach.nodes.filter((n) => n.kind === kind).map((n) => n.label);
      expect(labels('agent')).toHaveLength(1);
      expect(labels('audience')).toHaveLength(1);
      // Every node is joined to the graph.
      for (const n of reach.nodes)
        expect(
          reach.edges.some((e) => e.from === n.id || e.to === n.id),
          n.id,
        ).toBe(true);
      const truth = componentsOf(w.tenants.contoso, a.agentId);
      const tools = truth.filter((c) => c.tree.kind === 'TaskDialog' && c.tree.action?.kind !== 'InvokeConnectedAgentTaskAction');
      const knowledge = truth.filter((c) => c.tree.kind === 'KnowledgeSourceConfiguration');
      const mcp = tools.filter((c) => c.tree.action?.operationDetails?.kind === 'ModelContextProtocolMetadata');
      expect(labels('tool').sort()).toEqual(tools.map((c) => c.name).sort());
      for (const c of mcp) {
        const connectorId = String(c.tree.action.connectionReference).split('.')[1];
        expect(
          reach.nodes.find((n) => n.kind === 'mcpServer' && n.id === `mcp:${connectorId}`),
          connectorId,
        ).toBeTruthy();
      }
      for (const k of knowledge) {
        const node = reach.nodes.find((n) => n.kind === 'knowledge' && n.label === new URL(k.tree.source.site).hostname);
        expect(node, k.tree.source.site).toBeTruthy();
        // Public websites are flagged; SharePoint is not.
        expect(node!.flags.includes('public-website')).toBe(k.tree.source.kind === 'PublicSiteSearchSource');
      }
      if (tools.length && knowledge.length) checked++;
    }
    expect(checked, 'agents with both tools and knowledge in the emulated tenant').toBeGreaterThan(0);
  });

  it("answers 404 for another organization's agent, integration or environment", async () => {
    const theirs = (await get(other, '/api/v1/estate/agents?limit=1')).json().items[0] as { agentId: string; environmentId: string };
    const mine = (await get(admin, '/api/v1/estate/agents?limit=1')).json().items[0] as { agentId: string; environmentId: string };
    const wrongAgent = await get(admin, `/api/v1/integrations/${integration.contoso}/agents/${theirs.agentId}/reach`);
    expect([wrongAgent.statusCode, wrongAgent.json().error.code]).toEqual([404, 'AGENT_NOT_FOUND']);
    const wrongIntegration = await get(admin, `/api/v1/integrations/${integration.fabrikam}/agents/${theirs.agentId}/reach`);
    const absentIntegration = await get(admin, `/api/v1/integrations/00000000-0000-4000-8000-000000000000/agents/${theirs.agentId}/reach`);
    expect(wrongIntegration.statusCode).toBe(404);
    expect(wrongIntegration.json().error.code).toBe(absentIntegration.json().error.code);
    expect((await get(other, `/api/v1/integrations/${integration.contoso}/agents/${mine.agentId}/reach`)).statusCode).toBe(404);
    expect((await get(other, `/api/v1/integrations/${integration.contoso}/environments/${mine.environmentId}/estate`)).statusCode).toBe(404);
    const noEnv = await get(admin, `/api/v1/integrations/${integration.contoso}/environments/${theirs.environmentId}/estate`);
    expect([noEnv.statusCode, noEnv.json().error.code]).toEqual([404, 'ENVIRONMENT_NOT_FOUND']);
  });

  it("shows an environment's agents, apps and flows by name, riskiest first", async () => {
    const env = w.tenants.contoso.environments.find((e) => (e.dataverse?.bots.length ?? 0) > 0)!;
    const res = await get(admin, `/api/v1/integrations/${integration.contoso}/environments/${env.name}/estate`);
    expect(res.statusCode, res.body).toBe(200);
    const view = res.json();
    expect(view.environment).toMatchObject({ id: env.name, name: env.displayName });
    const agents = (await get(admin, `/api/v1/estate/agents?environmentId=${env.name}&limit=500`)).json();
    expect(view.agents.map((a: { agentId: string }) => a.agentId).sort()).toEqual(agents.items.map((a: { agentId: string }) => a.agentId).sort());
    for (const list of [view.agents, view.apps, view.flows]) {
      const scores = list.map((x: { score: number }) => x.score);
      expect(scores).toEqual([...scores].sort((x, y) => y - x));
    }
    expect(view.apps.length + view.flows.length).toBeGreaterThan(0);
  });
});
