import type { Page } from 'playwright-core';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalWorld, type PortalWorld } from './harness.ts';
import { apiSession, createdIntegration, recordProblems, runCollection, signIn, type ApiSession } from './session.ts';

/**
 * The estate as a picture in the portal (issue 21), in Debian's Chromium against a real `vigil serve` and the
 * emulator: Contoso's integration is created and collected through the API; a person opens /agents, sorts and
 * searches the table (on the server, in the URL), opens an agent and reads its reach graph — the tool, knowledge
 * source and MCP server the emulator gave it appear as nodes and in the text list — then opens its environment's
 * agents, apps and flows; with no console error and no Content Security Policy violation (React Flow included).
 */
describe('portal: agents, reach graph and environment', () => {
  let w: PortalWorld;
  let page: Page;
  let api: ApiSession;
  const problems: string[] = [];
  let signedIn = false;
  /** The emulated agent with a tool, a knowledge source and an MCP server, and those as the emulator holds them. */
  let known: { botId: string; name: string; environment: string; tool: string; mcpConnector: string; knowledgeHost: string };

  beforeAll(async () => {
    w = await portalWorld();
    page = w.page;
    // CSP violations are reported to the page as events, whether or not Chromium also logs them.
    await recordProblems(page, problems, { counting: () => signedIn, csp: true });
    api = await apiSession(w);
    const integrationId = await createdIntegration(w, api);
    await runCollection(w, api, integrationId);
    // Ground truth: an agent Vigil could read that has a connector tool, an MCP tool and a knowledge source.
    const listed = await api.get<{ items: { agentId: string }[] }>('/estate/agents?limit=500');
    const readable = new Set(listed.items.map((a) => a.agentId));
    for (const env of w.contoso.environments)
      for (const bot of env.dataverse?.bots ?? []) {
        if (!readable.has(bot.botid) || known) continue;
        const comps = (env.dataverse?.botcomponents ?? [])
          .filter((c) => c._parentbotid_value === bot.botid && c.data)
          .map((c) => ({
            name: c.name,
            tree: parseYaml(c.data!) as {
              kind?: string;
              source?: { site?: string };
              action?: { connectionReference?: string; operationDetails?: { kind?: string } };
            },
          }));
        const mcp = comps.find((c) => c.tree.action?.operationDetails?.kind === 'ModelContextProtocolMetadata');
        const tool = comps.find((c) => c.tree.kind === 'TaskDialog' && c.tree.action?.connectionReference && c !== mcp);
        const knowledge = comps.find((c) => c.tree.kind === 'KnowledgeSourceConfiguration' && c.tree.source?.site);
        if (mcp && tool && knowledge)
          known = {
            botId: bot.botid,
            name: bot.name,
            environment: env.displayName,
            tool: tool.name,
            mcpConnector: mcp.tree.action!.connectionReference!.split('.')[1]!,
            knowledgeHost: new URL(knowledge.tree.source!.site!).hostname,
          };
      }
    expect(known, 'the emulated tenant has an agent with a tool, an MCP server and a knowledge source').toBeTruthy();
  }, 180_000);
  afterAll(async () => w?.close());

  const table = () => page.getByRole('region', { name: 'Agents', exact: true });
  const names = async () => (await table().locator('tbody tr td:nth-child(2) a').allTextContents()).map((t) => t.trim());

  it('lists the agents with the total, sorted and searched on the server', async () => {
    await signIn(w);
    signedIn = true;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    await table().waitFor();
    const total = await api.get<{ total: number }>('/estate/agents?limit=1');
    await page.getByText(new RegExp(`^${total.total} agents?\\.$`)).waitFor();
    // Environment names, not GUIDs.
    expect(await table().textContent()).toContain(known.environment);
    expect(await table().textContent()).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
    await w.screenshot('estate-01-agents');

    await table()
      .getByRole('button', { name: /^Agent/ })
      .click();
    await expect.poll(() => page.url()).toMatch(/sort=name/);
    // The URL changes first; the rows follow with the server's answer.
    const zToA = (xs: string[]) => [...xs].sort((a, b) => b.toLowerCase().localeCompare(a.toLowerCase()));
    await expect.poll(async () => (await names()).join('|') === zToA(await names()).join('|')).toBe(true);
    const desc = await names();
    expect(desc).toEqual(zToA(desc));
    await table()
      .getByRole('button', { name: /^Agent/ })
      .click();
    await expect.poll(() => page.url()).toMatch(/order=asc/);
    await expect.poll(names).toEqual([...desc].reverse());
    expect(await table().locator('th[aria-sort="ascending"]').textContent()).toMatch(/Agent/);

    await page.getByLabel('Search').fill(known.name.slice(0, 6).toLowerCase());
    await page.getByLabel('Search').press('Enter');
    await expect.poll(names).toContain(known.name);
    expect(page.url()).toContain('q=');
    // Near miss: a search nothing matches.
    await page.getByLabel('Search').fill('zz no such agent');
    await page.getByLabel('Search').press('Enter');
    await page.getByText('No agent matches this search.').waitFor();
    await page.getByLabel('Search').fill(known.name);
    await page.getByLabel('Search').press('Enter');
    await expect.poll(names).toEqual([known.name]);
    await page.getByText(/^1 agent matching/).waitFor();
  });

  it('opens an agent and reads its reach graph and the same as a list', async () => {
    await table().getByRole('link', { name: known.name }).click();
    await page.getByRole('heading', { level: 1, name: known.name }).waitFor();
    const graph = page.locator('.reach-canvas');
    await graph.locator('.react-flow__node').first().waitFor();
    const node = (text: string) => graph.locator('.react-flow__node', { hasText: text });
    await node(known.tool).first().waitFor();
    expect(await node(known.tool).first().textContent()).toMatch(/^Tool/);
    expect(await node(known.mcpConnector).first().textContent()).toMatch(/^MCP server/);
    expect(await node(known.knowledgeHost).first().textContent()).toMatch(/^Knowledge/);
    expect(await node('Who may chat').count()).toBe(1);
    // Near miss: nothing of another agent's is drawn.
    expect(await node('zz no such').count()).toBe(0);
    await w.screenshot('estate-02-agent-reach');

    await page.getByText(/The reach graph as a list/).click();
    const out = page.getByRole('list', { name: 'What it reaches' });
    await out.waitFor();
    const text = (await out.textContent()) ?? '';
    expect(text).toContain(`Tool ${known.tool}`);
    expect(text).toContain(`MCP server ${known.mcpConnector}`);
    expect(text).toContain(`Knowledge ${known.knowledgeHost}`);
    expect(await page.getByRole('list', { name: 'Who can reach it' }).textContent()).toMatch(/Who may chat/);
    // GUIDs only where asked: behind "IDs".
    await page.getByText('IDs', { exact: true }).click();
    await page.getByText(known.botId).first().waitFor();
  });

  it("opens the agent's environment: its agents, apps and flows by risk, by name", async () => {
    await page.getByRole('link', { name: known.environment }).first().click();
    await page.getByRole('heading', { level: 1, name: known.environment }).waitFor();
    const agents = page.getByRole('region', { name: 'Agents of this environment' });
    await agents.waitFor();
    expect(await agents.textContent()).toContain(known.name);
    await page.getByRole('heading', { level: 2, name: /^Apps \(\d+\)$/ }).waitFor();
    await page.getByRole('heading', { level: 2, name: /^Flows \(\d+\)$/ }).waitFor();
    // Sorted on the page by name, both ways.
    const rows = async () => (await agents.locator('tbody tr td:nth-child(2) a').allTextContents()).map((t) => t.trim());
    await agents.getByRole('button', { name: /^Agent/ }).click();
    const byName = await rows();
    expect(byName).toEqual([...byName].sort((a, b) => b.localeCompare(a)));
    await w.screenshot('estate-03-environment');
  });

  it('raised no console error, page error or CSP violation', () => {
    expect(problems).toEqual([]);
  });
});
