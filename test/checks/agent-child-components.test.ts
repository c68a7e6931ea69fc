import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { AgentComponentAttrs } from '../../src/sources/dataverse/streams/agentComponents.ts';
import { normaliseComponent } from '../../src/sources/dataverse/streams/agentComponents.ts';
import { agentRow, checkContext, estateRow, resultFor, runCheck } from '../support/checks.ts';

/**
 * Child and connected agents as real Copilot Studio solution exports hold them (microsoft/CopilotStudioSamples, MIT;
 * test/fixtures/real/powerbi-agents/SOURCES.md): each component's `botcomponent.xml` (componenttype, schema name) and
 * `data` (the YAML), turned into the Dataverse `botcomponents` row Vigil reads.
 */
const DIR = join(import.meta.dirname, '../fixtures/real/powerbi-agents/copilotstudio');

function tag(xml: string, name: string): string | null {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? null;
}

/** The `botcomponents` row of an exported component (`data` replaced when given). */
function row(folder: string, data?: string): Record<string, unknown> {
  const xml = readFileSync(join(DIR, folder, 'botcomponent.xml'), 'utf8');
  return {
    botcomponentid: `id-${folder}`,
    name: tag(xml, 'name'),
    schemaname: /schemaname="([^"]+)"/.exec(xml)?.[1] ?? null,
    componenttype: Number(tag(xml, 'componenttype')),
    data: data ?? readFileSync(join(DIR, folder, 'data'), 'utf8'),
    _parentbotid_value: 'bot-1',
    statecode: Number(tag(xml, 'statecode')),
  };
}

const CHILD = 'copilots_header_cref7_LookupDataAgent.agent.Agent';
const CHILD2 = 'cref7_resumeJobMatchAssistant.agent.Agent';
const CONNECTED = 'cr26e_OrdersAgent.InvokeConnectedAgentTaskAction.Warehouseagent';
const PARENT = 'cr26e_OrdersAgent.gpt.default';

/** The real child agent with a credential written into its instructions (the only change). */
function childWithSecret(): string {
  const tree = parseYaml(readFileSync(join(DIR, CHILD2, 'data'), 'utf8')) as { settings: { instructions: string } };
  // Assembled at run time so that no key-shaped literal sits in the repository.
  tree.settings.instructions += `\n\nWhen you call the jobs API send the header x-api-key: ${['sk', 'live', '4eC39HqLyjWDarjtT1zdp7dcQ8vXw2Zn'].join('_')}`;
  return stringifyYaml(tree);
}

describe('child and connected agents from real solution exports', () => {
  it('types an AgentDialog (componenttype 9) as a child agent with inspected instructions, not as a topic', () => {
    for (const folder of [CHILD, CHILD2]) {
      const a = normaliseComponent(row(folder));
      const text = (parseYaml(readFileSync(join(DIR, folder, 'data'), 'utf8')) as { settings: { instructions: string } }).settings.instructions;
      expect(a, folder).toMatchObject({
        componentType: 9,
        yamlKind: 'AgentDialog',
        kind: 'agent',
        agent: { relation: 'child', triggerKind: 'OnToolSelected', botSchemaName: null },
      });
      expect(a.instructions, folder).toEqual({ length: text.length, containsSecret: false, webBrowsing: null });
      expect(a.topic).toBeUndefined();
    }
  });

  it('types a TaskDialog invoking InvokeConnectedAgentTaskAction as a connected agent naming the called bot, not as a connector tool', () => {
    const a = normaliseComponent(row(CONNECTED));
    expect(a).toMatchObject({
      componentType: 9,
      yamlKind: 'TaskDialog',
      kind: 'agent',
      agent: { relation: 'connected', triggerKind: null, botSchemaName: 'cr26e_Warehouseagent' },
    });
    expect(a.tool).toBeUndefined();
  });

  it("keeps the parent GptComponentMetadata (componenttype 15) as the agent's instructions", () => {
    expect(normaliseComponent(row(PARENT))).toMatchObject({
      componentType: 15,
      kind: 'instructions',
      instructions: { length: 0, containsSecret: false, webBrowsing: true },
    });
  });

  it("finds a credential in a child agent's instructions, and agent_hardcoded_credentials fails its parent agent", async () => {
    const leaking = normaliseComponent(row(CHILD2, childWithSecret()));
    expect(leaking).toMatchObject({ kind: 'agent', instructions: { containsSecret: true } });
    const comp = (id: string, botId: string, attrs: AgentComponentAttrs) => estateRow('agentComponents', id, { ...attrs, botId }, { sliceKey: 'env1' });
    const agents = [agentRow({ id: 'a' }), agentRow({ id: 'b' })];
    const estate = {
      agentComponents: [
        comp('parent-a', 'a', normaliseComponent(row(PARENT))),
        comp('child-a', 'a', leaking),
        comp('parent-b', 'b', normaliseComponent(row(PARENT))),
        comp('child-b', 'b', normaliseComponent(row(CHILD))),
        comp('connected-b', 'b', normaliseComponent(row(CONNECTED))),
      ],
    };
    const r = await runCheck('agent_hardcoded_credentials', checkContext({ agents, estate }));
    expect(resultFor(r, 'a')).toMatchObject({ status: 'fail', detail: { components: ['child-a'] } });
    expect(resultFor(r, 'b')?.status).toBe('pass');
  });
});
