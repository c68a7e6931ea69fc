import { evaluateAgentComponents } from '../../helpers.ts';
import type { CheckFunction } from '../../types.ts';

/**
 * Fails agents with generative orchestration on (`GenerativeActionsEnabled`) and no non-empty instructions component.
 * Not evaluated when the agent's configuration could not be read or does not state its orchestration.
 */
export const check: CheckFunction = (ctx) =>
  evaluateAgentComponents(ctx, (_agent, components, settings) => {
    if (!settings || settings.generativeActionsEnabled === null)
      return { status: 'not_evaluated', reason: "The agent's configuration does not state whether generative orchestration is on." };
    if (!settings.generativeActionsEnabled) return { status: 'pass', reason: 'Classic (topic-based) orchestration.' };
    const hasInstructions = components.some((c) => c.attrs.kind === 'instructions' && (c.attrs.instructions?.length ?? 0) > 0);
    return hasInstructions
      ? { status: 'pass', reason: null }
      : { status: 'fail', reason: 'Generative orchestration is on and the agent has no custom instructions.' };
  });
