import { VigilError } from '../core/errors.ts';
import type { ChatMessage, ConversationMeta, ToolDescriptor, ToolExecution, ToolOutput, ToolParameter } from './types.ts';

/**
 * The size caps that bound what detectors read, so their cost stays bounded whatever Copilot Studio (or an attacker
 * behind it) sends. Exceeding any of them sets {@link ToolExecution.truncated}.
 */
export const REQUEST_CAPS = {
  /** Characters (UTF-16 code units) of one text: a message, a thought, an output value, an input value. */
  text: 32 * 1024,
  /** The most recent chat messages kept. */
  chatMessages: 50,
  /** The most recent previous tool outputs kept. */
  previousOutputs: 50,
  /** Values kept per previous tool output. */
  valuesPerOutput: 50,
  /** Parameters kept per tool definition list, and input values kept. */
  parameters: 100,
  /** Characters of every text together. */
  total: 512 * 1024,
} as const;

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objOf = (v: unknown): Obj => (isObj(v) ? v : {});
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Reads texts under the per-text and total caps, remembering whether anything was cut. */
class Budget {
  left: number = REQUEST_CAPS.total;
  truncated = false;

  /** A string as sent (numbers and booleans as text), '' when missing or another type; cut to the caps. */
  str(v: unknown): string {
    if (typeof v === 'string') return this.take(v);
    if (typeof v === 'number' || typeof v === 'boolean') return this.take(String(v));
    return '';
  }

  /**
   * An identifier or name (ids, roles, parameter names, metadata) as {@link str}, cut to `max` characters and outside
   * the total budget: the count caps bound how many there are, and an exhausted budget never blanks an id.
   */
  short(v: unknown, max = 256): string {
    const s = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
    if (s.length <= max) return s;
    this.truncated = true;
    return s.slice(0, max);
  }

  /** Any value as text: strings as they are, null/undefined '', anything else JSON-serialised; cut to the caps. */
  text(v: unknown): string {
    if (typeof v === 'string') return this.take(v);
    if (v === null || v === undefined) return '';
    let s: string;
    try {
      s = JSON.stringify(v) ?? '';
    } catch {
      s = '';
    }
    return this.take(s);
  }

  /** Runs `read` with at most `limit` more characters available (the rest of the total stays for later readers). */
  within<T>(limit: number, read: () => T): T {
    const rest = Math.max(0, this.left - limit);
    this.left -= rest;
    try {
      return read();
    } finally {
      this.left += rest;
    }
  }

  take(s: string): string {
    const cap = Math.min(REQUEST_CAPS.text, this.left);
    if (s.length > cap) {
      this.truncated = true;
      s = s.slice(0, cap);
    }
    this.left -= s.length;
    return s;
  }

  /** The last `cap` items of a list, newest (last) first, noting a cut. A new array: the body is never changed. */
  lastReversed<T>(items: T[], cap: number): T[] {
    if (items.length > cap) this.truncated = true;
    return items.slice(Math.max(0, items.length - cap)).reverse();
  }

  /** The first `cap` items of a list, noting a cut. */
  first<T>(items: T[], cap: number): T[] {
    if (items.length <= cap) return items;
    this.truncated = true;
    return items.slice(0, cap);
  }
}

function parameters(v: unknown, b: Budget): ToolParameter[] {
  return b.first(listOf(v), REQUEST_CAPS.parameters).map((p) => {
    const o = objOf(p);
    const kind = objOf(o.type).$kind;
    return { name: b.short(o.name), description: b.str(o.description), kind: typeof kind === 'string' ? b.short(kind, 128) : null };
  });
}

/** `outputs` as the documented `[{name, value}]`, an object map `{name: value}`, or a bare value (one unnamed output). */
function outputValues(v: unknown, b: Budget): { name: string; value: string }[] {
  let pairs: [unknown, unknown][];
  if (Array.isArray(v)) pairs = v.map((o) => (isObj(o) ? [o.name, o.value] : ['', o]));
  else if (isObj(v)) pairs = Object.entries(v);
  else if (v === undefined || v === null) pairs = [];
  else pairs = [['', v]];
  return b.first(pairs, REQUEST_CAPS.valuesPerOutput).map(([name, value]) => ({ name: b.short(name, 128), value: b.text(value) }));
}

function timestampOf(v: unknown): string | null {
  return typeof v === 'string' && v.length <= 64 ? v : null;
}

/** Input values as sent: strings cut to the text cap, other values kept unless their JSON exceeds it (then cut JSON). */
function inputsOf(v: unknown, b: Budget): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, value] of b.first(Object.entries(objOf(v)), REQUEST_CAPS.parameters)) {
    const name = k.length > 256 ? b.take(k.slice(0, 256)) : k;
    if (typeof value === 'string') out[name] = b.take(value);
    else if (value === null || typeof value !== 'object') out[name] = value;
    else {
      const before = b.truncated;
      const json = b.text(value);
      if (b.truncated && !before) out[name] = json;
      else out[name] = value;
    }
  }
  return out;
}

/**
 * Normalises the body of Copilot Studio's `POST {base}/analyze-tool-execution` into a {@link ToolExecution}.
 *
 * Shape (https://learn.microsoft.com/microsoft-copilot-studio/external-security-webhooks-interface-developers):
 * `plannerContext{userMessage, thought, chatHistory[{id, role, content, timestamp}], previousToolsOutputs[{toolId,
 * toolName, outputs[{name, value}], timestamp}]}`, `toolDefinition{id, type, name, description, inputParameters[{name,
 * description, type{$kind}}], outputParameters[]}`, `inputValues{name: value}`, `conversationMetadata{agent{id,
 * tenantId, environmentId, name, version, isPublished}, user{id, tenantId}, trigger{id, schemaName}, conversationId,
 * messageId, channelId, planId, planStepId, parentAgentComponentId, incomingClientIp}`.
 *
 * Tolerant by design (the payloads are attacks, and implementers report variants): every field is optional, a
 * missing or mistyped string is '', `previousToolOutputs` is accepted for `previousToolsOutputs`, `outputs` may be a
 * list or an object map, non-string output values are JSON-serialised, unknown fields are ignored. Sizes are capped
 * ({@link REQUEST_CAPS}: each text ≤ 32 KiB, the last 50 chat messages within a quarter of the total, the last 50
 * previous outputs with ≤ 50 values each, ≤ 512 KiB in all; read in the order tool definition, user message, thought,
 * inputs, chat newest first, outputs newest first); a cut sets `truncated`. Indices of the kept lists are those of the
 * normalised lists.
 *
 * @throws VigilError `PROTECTION_REQUEST_INVALID` (invalid-input) when the body is not a JSON object (field
 *   `body`) or has no `toolDefinition` object (field `toolDefinition`). Nothing else throws.
 */
export function parseToolExecution(body: unknown): ToolExecution {
  if (!isObj(body)) throw new VigilError('PROTECTION_REQUEST_INVALID', 'The analyze-tool-execution body is not a JSON object.', { field: 'body' });
  if (!isObj(body.toolDefinition)) {
    throw new VigilError('PROTECTION_REQUEST_INVALID', 'The analyze-tool-execution body has no toolDefinition object.', { field: 'toolDefinition' });
  }
  const b = new Budget();
  const planner = objOf(body.plannerContext);
  const def = body.toolDefinition;

  // The tool and what the user and model said first: they matter most when the total cap cuts.
  const tool: ToolDescriptor = {
    id: b.short(def.id),
    type: b.short(def.type),
    name: b.short(def.name, 1024),
    description: b.str(def.description),
    inputParameters: parameters(def.inputParameters, b),
    outputParameters: parameters(def.outputParameters, b),
  };
  const userMessage = b.str(planner.userMessage);
  const thought = b.str(planner.thought);
  const inputs = inputsOf(body.inputValues, b);

  // The user's messages, then what tools returned, newest first so the cut falls on the oldest; the chat may use at
  // most a quarter of the total, so a long conversation cannot crowd out the tool outputs indirect injections live in.
  const chatHistory: ChatMessage[] = b
    .within(REQUEST_CAPS.total / 4, () =>
      b.lastReversed(listOf(planner.chatHistory), REQUEST_CAPS.chatMessages).map((m) => {
        const o = objOf(m);
        return { id: b.short(o.id), role: b.short(o.role), content: b.text(o.content), timestamp: timestampOf(o.timestamp) };
      }),
    )
    .reverse();
  // Both spellings: an output sent under either is read (none can hide under the other).
  const rawOutputs = [...listOf(planner.previousToolsOutputs), ...listOf(planner.previousToolOutputs)];
  const previousOutputs: ToolOutput[] = b
    .lastReversed(rawOutputs, REQUEST_CAPS.previousOutputs)
    .map((o) => {
      const t = objOf(o);
      return { toolId: b.short(t.toolId), toolName: b.short(t.toolName, 1024), outputs: outputValues(t.outputs, b), timestamp: timestampOf(t.timestamp) };
    })
    .reverse();

  const meta = objOf(body.conversationMetadata);
  const agent = objOf(meta.agent);
  const user = objOf(meta.user);
  const trigger = objOf(meta.trigger);
  const conversation: ConversationMeta = {
    agentId: b.short(agent.id),
    agentName: b.short(agent.name),
    agentVersion: b.short(agent.version),
    agentPublished: typeof agent.isPublished === 'boolean' ? agent.isPublished : null,
    tenantId: b.short(agent.tenantId),
    environmentId: b.short(agent.environmentId),
    userId: b.short(user.id),
    userTenantId: b.short(user.tenantId),
    triggerId: b.short(trigger.id),
    triggerSchemaName: b.short(trigger.schemaName),
    conversationId: b.short(meta.conversationId),
    messageId: b.short(meta.messageId),
    channelId: b.short(meta.channelId),
    planId: b.short(meta.planId),
    planStepId: b.short(meta.planStepId),
    parentAgentComponentId: b.short(meta.parentAgentComponentId),
    incomingClientIp: b.short(meta.incomingClientIp),
  };
  return { userMessage, thought, chatHistory, previousOutputs, tool, inputs, meta: conversation, truncated: b.truncated };
}
