import type { AgentChannel, AgentSettingsAttrs } from '../../../core/estate/agentcomponents.ts';
import type { EstateObject } from '../../../core/inventory.ts';
import { bool, objOrNull, str, type Json } from '../../../core/json.ts';
import { dataverseEntityStream } from '../entity.ts';

/**
 * `agentSettings`: `GET {org}/api/data/v9.2/bots?$select=botid,name,configuration` per environment with Dataverse — the
 * generative-AI settings and the published channels parsed from the `configuration` Memo (JSON). Its own stream (not
 * a component kind) because the settings belong to the bot row, one object per agent. Reading needs the same Dataverse
 * access as `agents`. Sources: see `agentComponents.ts`.
 */

const CHANNEL_FAMILIES: Record<string, AgentChannel['family']> = {
  msteams: 'teams',
  m365copilot: 'teams',
  microsoft365copilot: 'teams',
  demowebsite: 'demoWebsite',
  pvademo: 'demoWebsite',
  webchat: 'customWebsite',
  customwebsite: 'customWebsite',
  directline: 'directLine',
  facebook: 'facebook',
};

/**
 * Settings of one bot from its `configuration` JSON (generative orchestration, general knowledge, content moderation,
 * channels). Malformed JSON gives `configurationParsed: false` and nulls.
 */
function parseAgentSettings(botId: string, configuration: string | null): AgentSettingsAttrs {
  let c: Json | null = null;
  if (configuration) {
    try {
      c = objOrNull(JSON.parse(configuration));
    } catch {
      c = null;
    }
  }
  const ai = objOrNull(c?.aISettings);
  const rawChannels = Array.isArray(c?.channels) ? (c.channels as unknown[]) : null;
  const channels =
    rawChannels === null
      ? null
      : rawChannels
          .map((x) => str(objOrNull(x)?.channelId) ?? str(x))
          .filter((id): id is string => id !== null)
          .map((channelId) => ({ channelId, family: CHANNEL_FAMILIES[channelId.toLowerCase()] ?? 'other' }));
  return {
    botId,
    configurationParsed: c !== null,
    generativeActionsEnabled: bool(objOrNull(c?.settings)?.GenerativeActionsEnabled),
    useModelKnowledge: bool(ai?.useModelKnowledge),
    fileAnalysisEnabled: bool(ai?.isFileAnalysisEnabled),
    contentModeration: str(ai?.contentModeration),
    agentConnectable: bool(c?.isAgentConnectable),
    recognizer: str(objOrNull(c?.recognizer)?.$kind),
    channels,
  };
}

/** Generative-AI settings and channels of every agent, one object per bot (id = botid). */
export const agentSettingsStream = dataverseEntityStream({
  name: 'agentSettings',
  primaryKey: ['sliceKey', 'id'],
  entitySet: 'bots',
  select: 'botid,name,configuration',
  map: (j, slice): EstateObject<AgentSettingsAttrs> => {
    const attrs = parseAgentSettings(String(j.botid), str(j.configuration));
    const { botId: _b, ...settings } = attrs;
    return { sliceKey: slice.key, id: String(j.botid), name: str(j.name), attrs, raw: { botid: j.botid, name: j.name, settings } };
  },
});
