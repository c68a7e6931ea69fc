import { describe, expect, it } from 'vitest';
import { detector } from '../../../../src/protection/detectors/changed_agent.ts';
import { parseToolExecution } from '../../../../src/protection/request.ts';
import { agent, ctx, empty, exec, snapshot } from '../fixtures.ts';

describe('changed_agent', () => {
  it('detects a tool the agent did not have at its last collection (ids compare case-insensitively)', () => {
    const v = detector.run(exec({ tool: { id: 'cra65_otpdemo.action.ExportContacts' } }), ctx());
    expect(v).toMatchObject({ detector: 'changed_agent', detected: true, confidence: 0.95 });
    expect(v.evidence[0]).toEqual({ field: 'toolDefinition.id', match: 'tool-not-collected', excerpt: 'cra65_otpdemo.action.ExportContacts' });
    expect(detector.run(exec({ tool: { id: 'CRA65_OTPDEMO.action.SendEmail-SendEmail' } }), ctx()).detected).toBe(false);
  });

  it('detects an agent unknown to a collected inventory, less surely when its environment has no collected agent', () => {
    const other = agent([], { id: 'b0000000-0000-4000-8000-000000000009' });
    expect(detector.run(exec(), ctx(snapshot([other])))).toMatchObject({ detected: true, confidence: 0.6 });
    const elsewhere = agent([], { id: 'b0000000-0000-4000-8000-000000000009', environmentId: 'env-2' });
    expect(detector.run(exec(), ctx(snapshot([elsewhere])))).toMatchObject({ detected: true, confidence: 0.4 });
  });

  it('near miss: a prebuilt tool is only weakly suspicious; a never-collected tenant is not evaluated', () => {
    expect(detector.run(exec({ tool: { id: 'WebSearch', type: 'PrebuiltToolDefinition' } }), ctx()).confidence).toBe(0.5);
    const v = detector.run(exec(), ctx(empty()));
    expect(v).toMatchObject({ detected: false, confidence: 0 });
    expect(v.summary).toContain('Not evaluated');
  });

  it('empty and odd payloads: nothing detected, nothing thrown', () => {
    expect(detector.run(parseToolExecution({ toolDefinition: {} }), ctx()).detected).toBe(false);
  });
});
