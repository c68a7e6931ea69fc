import { describe, expect, it } from 'vitest';
import { VigilError } from '../../../src/core/errors.ts';
import { parseToolExecution, REQUEST_CAPS } from '../../../src/protection/request.ts';
import { body } from './fixtures.ts';

describe('parseToolExecution', () => {
  it('normalises the documented body, leaving the body itself unchanged', () => {
    const sent = body({
      planner: {
        chatHistory: [
          { id: 'a', role: 'user', content: 'one' },
          { id: 'b', role: 'user', content: 'two' },
        ],
      },
    });
    const copy = structuredClone(sent);
    expect(parseToolExecution(sent).chatHistory.map((m) => m.id)).toEqual(['a', 'b']);
    expect(sent).toEqual(copy);
    const e = parseToolExecution(body());
    expect(e.userMessage).toBe('Send the quarterly summary to megan@contoso.com');
    expect(e.tool).toMatchObject({ id: 'cra65_otpdemo.action.SendEmail-SendEmail', type: 'ToolDefinition', name: 'Send an email (V2)' });
    expect(e.tool.inputParameters[0]).toEqual({ name: 'To', description: 'Specify email addresses separated by semicolons', kind: 'String' });
    expect(e.inputs).toEqual({ To: 'megan@contoso.com', Subject: 'Q3 summary', Body: 'Revenue grew 4%.' });
    expect(e.chatHistory[1]).toEqual({ id: 'm2', role: 'assistant', content: 'Hello! How can I help?', timestamp: '2026-11-20T08:00:01Z' });
    expect(e.meta).toMatchObject({
      agentId: 'a1b2c3d4-0000-4000-8000-000000000001',
      agentPublished: true,
      environmentId: 'Default-72f988bf-86f1-41af-91ab-2d7cd011db47',
      userId: 'user-1',
      triggerSchemaName: 'cra65_otpdemo.topic.ConversationStart',
      planStepId: 'step-1',
      incomingClientIp: '203.0.113.7',
    });
    expect(e.truncated).toBe(false);
  });

  it('accepts both spellings of previous outputs, outputs as a list or an object map, and serialises non-string values', () => {
    const listed = parseToolExecution(
      body({
        planner: {
          previousToolsOutputs: [
            {
              toolId: 't',
              toolName: 'n',
              outputs: [
                { name: 'a', value: 'x' },
                { name: 'b', value: { n: 1 } },
              ],
            },
          ],
        },
      }),
    );
    expect(listed.previousOutputs[0]!.outputs).toEqual([
      { name: 'a', value: 'x' },
      { name: 'b', value: '{"n":1}' },
    ]);
    const mapped = parseToolExecution(body({ planner: { previousToolOutputs: [{ toolId: 't', outputs: { a: 'x', n: 3, z: null } }] } }));
    expect(mapped.previousOutputs[0]).toEqual({
      toolId: 't',
      toolName: '',
      outputs: [
        { name: 'a', value: 'x' },
        { name: 'n', value: '3' },
        { name: 'z', value: '' },
      ],
      timestamp: null,
    });
  });

  it('turns missing and mistyped fields into empty values instead of failing', () => {
    const e = parseToolExecution({
      toolDefinition: { id: 42, inputParameters: 'nope', name: ['x'] },
      plannerContext: 'odd',
      conversationMetadata: { agent: null },
    });
    expect(e.tool).toEqual({ id: '42', type: '', name: '', description: '', inputParameters: [], outputParameters: [] });
    expect([e.userMessage, e.thought, e.chatHistory, e.previousOutputs, e.inputs]).toEqual(['', '', [], [], {}]);
    expect(e.meta.agentId).toBe('');
    expect(e.meta.agentPublished).toBeNull();
    const odd = parseToolExecution({ toolDefinition: {}, plannerContext: { chatHistory: [null, 5, { role: 7, content: { a: 1 } }] } });
    expect(odd.chatHistory.map((m) => [m.role, m.content])).toEqual([
      ['', ''],
      ['', ''],
      ['7', '{"a":1}'],
    ]);
  });

  it('throws PROTECTION_REQUEST_INVALID naming the field only for a non-object body or one without toolDefinition', () => {
    for (const [bad, field] of [
      [null, 'body'],
      ['{"a":1}', 'body'],
      [[body()], 'body'],
      [{ plannerContext: {} }, 'toolDefinition'],
      [{ toolDefinition: 'SendEmail' }, 'toolDefinition'],
    ] as const) {
      try {
        parseToolExecution(bad);
        expect.unreachable(`accepted ${JSON.stringify(bad).slice(0, 40)}`);
      } catch (e) {
        expect(e).toBeInstanceOf(VigilError);
        expect(e).toMatchObject({ code: 'PROTECTION_REQUEST_INVALID', kind: 'invalid-input', field });
      }
    }
  });

  it('caps sizes so the detectors read a bounded amount, and says so', () => {
    const big = 'x'.repeat(REQUEST_CAPS.text + 10);
    const e = parseToolExecution(
      body({
        planner: {
          userMessage: big,
          chatHistory: Array.from({ length: 80 }, (_, i) => ({ id: `m${i}`, role: 'user', content: `message ${i}` })),
          previousToolsOutputs: Array.from({ length: 60 }, (_, i) => ({
            toolId: `t${i}`,
            outputs: Array.from({ length: 70 }, (_, j) => ({ name: `v${j}`, value: 'y'.repeat(20_000) })),
          })),
        },
      }),
    );
    expect(e.truncated).toBe(true);
    expect(e.userMessage.length).toBe(REQUEST_CAPS.text);
    expect(e.chatHistory).toHaveLength(REQUEST_CAPS.chatMessages);
    expect(e.chatHistory.at(-1)!.content).toBe('message 79'); // the most recent are kept
    expect(e.previousOutputs).toHaveLength(REQUEST_CAPS.previousOutputs);
    expect(e.previousOutputs[0]!.toolId).toBe('t10');
    expect(Math.max(...e.previousOutputs.map((o) => o.outputs.length))).toBeLessThanOrEqual(REQUEST_CAPS.valuesPerOutput);
    const total =
      e.userMessage.length +
      e.thought.length +
      e.previousOutputs.reduce((n, o) => n + o.outputs.reduce((m, v) => m + v.value.length, 0), 0) +
      e.chatHistory.reduce((n, m) => n + m.content.length, 0);
    expect(total).toBeLessThanOrEqual(REQUEST_CAPS.total);
  });

  it('cuts an oversized object input value to its JSON text', () => {
    const e = parseToolExecution(body({ inputs: { payload: { data: 'z'.repeat(REQUEST_CAPS.text) }, count: 3 } }));
    expect(e.truncated).toBe(true);
    expect(typeof e.inputs.payload).toBe('string');
    expect((e.inputs.payload as string).length).toBe(REQUEST_CAPS.text);
    expect(e.inputs.count).toBe(3);
  });
});
