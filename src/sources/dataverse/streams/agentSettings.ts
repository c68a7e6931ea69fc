import type { EstateObject } from '../../../core/inventory.ts';
import { bool, objOrNull, str, type Json } from '../../../core/json.ts';
import { dataverseEntityStream } from '../entity.ts';
import type { Stream } from '../../stream.ts';

/**
 * `agentSettings`: `GET {org}/api/data/v9.2/bots?$select=botid,name,configuration` per environment with Dataverse — the
 * generative-AI settings and the published channels parsed from the `configuration` Memo (JSON). Its own stream (not
 * a component kind) because the settings belong to the bot row, one object per agent. Reading needs the same Dataverse
 * access as `agents`. Sources: see `agentComponents.ts`.
 */

/** A published channel of an agent. `channelId` as stored (`msteams`, `webchat`, `directline`, `facebook`, …). */
interface AgentChannel {
  channelId: string;
  /** Normalised family: `teams` (Teams and Microsoft 365 Copilot), `demoWebsite`, `customWebsite`, `directLine`, `facebook`, `other`. */
  family: 'teams' | 'demoWebsite' | 'customWebsite' | 'directLine' | 'facebook' | 'other';
}

/**
 * Generative-AI settings and channels of one agent, parsed from the bot `configuration` Memo (stream
 * `agentSettings`; `id` = botid; slice = environment name). Every field is null when the configuration lacks it.
 *
 * Sources: reference §4.3 (D-bot: `bot.md`); the Copilot Studio YAML written by microsoft/skills-for-copilot-studio.
 * UNCONFIRMED (not in Microsoft's documentation read): `aISettings.contentModeration`; channels in the bot
 * `configuration` (`channels[].channelId`).
 */
export interface AgentSettingsAttrs {
  botId: string;
  /** `configuration` was present and parsed as JSON. */
  configurationParsed: boolean;
  /** `settings.GenerativeActionsEnabled`: generative orchestration. */
  generativeActionsEnabled: boolean | null;
  /** `aISettings.useModelKnowledge`: "Use general knowledge" (answers from the model beyond the knowledge sources). */
  useModelKnowledge: boolean | null;
  /** `aISettings.isFileAnalysisEnabled`. */
  fileAnalysisEnabled: boolean | null;
  /** `aISettings.contentModeration` (`Low` | `Medium` | `High`; UNCONFIRMED field name). */
  contentModeration: string | null;
  /** `isAgentConnectable`: other agents may call this one. */
  agentConnectable: boolean | null;
  /** `recognizer.$kind`. */
  recognizer: string | null;
  /** Published channels (`configuration.channels[]`, UNCONFIRMED source); null when not recorded. */
  channels: AgentChannel[] | null;
}

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
export const agentSettingsStream: Stream<'agentSettings', EstateObject<AgentSettingsAttrs>> = dataverseEntityStream({
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
