import { evaluateAgentComponents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails agents whose instructions hold a credential (as found by Vigil's content inspection at collection time; the
 * text itself is never stored): the agent's own instructions (`GptComponentMetadata`) and those of its child agents
 * (`AgentDialog` `settings.instructions`). Not evaluated for an agent with an instructions component whose `data` could
 * not be parsed (its text was not inspected).
 */
export const check: CheckFunction = (ctx) =>
  evaluateAgentComponents(ctx, (_agent, components) => {
    const instructions = components.filter((c) => c.attrs.kind === 'instructions' || (c.attrs.kind === 'agent' && c.attrs.instructions !== undefined));
    const leaking = instructions.filter((c) => c.attrs.instructions?.containsSecret === true);
    if (leaking.length)
      return {
        status: 'fail',
        reason: `The instructions of ${leaking.map((c) => c.name ?? c.id).join(', ')} contain a credential.`,
        detail: { components: leaking.map((c) => c.id) },
      };
    if (instructions.some((c) => c.attrs.dataUnparsed))
      return { status: 'not_evaluated', reason: 'The instructions could not be parsed, so their text was not inspected.' };
    return { status: 'pass', reason: null };
  });
