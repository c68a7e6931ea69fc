/**
 * The parts of runtime protection the wire uses — request parsing (request.ts), policy resolution (policy.ts) and the
 * decision (engine.ts) — through one module. TEMPORARY: re-exported from ./core-stub.ts until those files are merged;
 * the merge replaces the line below with the real modules' exports (issue 19).
 */
export { decide, parseToolExecution, protectionPolicyInputSchema, resolvePolicy } from './core-stub.ts';
