import type { DetectionContext } from '../../src/detections/types.ts';

/**
 * A {@link DetectionContext} for a rule's test: integration `int_1`, no new events, and every read empty (no IP
 * history, no stored events or records, no collected flows, agent components, open findings or environments).
 * `overrides` replace any part (the events, a read the rule under test makes).
 */
export function detectionContext(overrides: Partial<DetectionContext> = {}): DetectionContext {
  return {
    integrationId: 'int_1',
    events: [],
    ipsSeenBefore: () => new Set(),
    find: async () => [],
    findRecords: async () => [],
    flows: async () => new Map(),
    agentComponents: async () => new Map(),
    openFindings: async () => [],
    environments: async () => new Map(),
    ...overrides,
  };
}
