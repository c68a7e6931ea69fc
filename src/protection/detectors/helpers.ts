import { inspectText } from '../../inspection/index.ts';
import type { AgentToolSnapshot, DetectorContext, DetectorId, Evidence, ToolExecution, Verdict } from '../types.ts';

/**
 * What the protection detectors share: redacted excerpts, weighted patterns, e-mail and host extraction, and the
 * classification of the tool about to run. Everything here is pure and linear in its input (bounded quantifiers).
 */

/** Longest excerpt in evidence, characters. */
const EXCERPT_MAX = 160;
/** Evidence entries one verdict keeps. */
export const EVIDENCE_MAX = 5;

/** Hidden characters shown as a visible marker in excerpts (Unicode tags, zero-width, bidi controls). */
const HIDDEN = /[\u{E0000}-\u{E007F}\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF]/gu;

/** One line, hidden characters marked, at most {@link EXCERPT_MAX} characters. */
function tidy(s: string): string {
  const t = s.replace(HIDDEN, '·').replace(/\s+/g, ' ');
  return t.length > EXCERPT_MAX ? `${t.slice(0, EXCERPT_MAX - 1)}…` : t;
}

/**
 * A redacted excerpt of `text` around `[start, end)`: up to 40 characters before and the rest after, secrets and
 * personal data masked by the content inspection (each side inspected on its own window of ≤ 240 characters, so the
 * cost does not grow with the text), one line, ≤ 160 characters.
 */
function excerptAt(text: string, start: number, end: number): string {
  const before = inspectText(text.slice(Math.max(0, start - 240), start)).redacted.slice(-40);
  const after = inspectText(text.slice(start, Math.max(end, start + 240))).redacted;
  return tidy(before + after);
}

/** A pattern with a name (evidence's `match`) and a weight (0–1: how much one hit says on its own). */
export interface WeightedPattern {
  name: string;
  weight: number;
  /** Global (`g`) and linear: bounded quantifiers only. */
  pattern: RegExp;
  /** A benign reading of the matched text (tested on the match only): when it matches, the hit counts half. */
  unless?: RegExp;
}

/** One pattern's first hit in one text. */
export interface PatternHit {
  name: string;
  weight: number;
  field: string;
  text: string;
  start: number;
  end: number;
}

/** The first hit of each pattern in `text` (one per pattern, so the cost is one pass per pattern). */
export function scan(text: string, field: string, patterns: readonly WeightedPattern[], factor = 1): PatternHit[] {
  const hits: PatternHit[] = [];
  if (!text) return hits;
  for (const p of patterns) {
    p.pattern.lastIndex = 0;
    const m = p.pattern.exec(text);
    p.pattern.lastIndex = 0;
    if (m) {
      const weight = p.weight * factor * (p.unless?.test(m[0]) ? 0.5 : 1);
      hits.push({ name: p.name, weight, field, text, start: m.index, end: m.index + m[0].length });
    }
  }
  return hits;
}

/** Noisy-or of the strongest hit of each pattern name: independent signals add up, none exceeds 1. */
export function combine(hits: readonly PatternHit[]): number {
  const best = new Map<string, number>();
  for (const h of hits) best.set(h.name, Math.max(best.get(h.name) ?? 0, h.weight));
  let miss = 1;
  for (const w of best.values()) miss *= 1 - Math.min(1, Math.max(0, w));
  return round(1 - miss);
}

/** Evidence of the strongest hits (one per field and pattern), redacted. */
export function evidenceOf(hits: readonly PatternHit[]): Evidence[] {
  const sorted = [...hits].sort((a, b) => b.weight - a.weight);
  const out: Evidence[] = [];
  const seen = new Set<string>();
  for (const h of sorted) {
    const key = `${h.field}|${h.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field: h.field, match: h.name, excerpt: excerptAt(h.text, h.start, h.end) });
    if (out.length === EVIDENCE_MAX) break;
  }
  return out;
}

/** What the marker scans of a free text found (see {@link markersIn}): confidence 0–1, pattern names, redacted evidence. */
export interface TextMarkers {
  confidence: number;
  /** Confidence at or above the detector's detection threshold. */
  detected: boolean;
  /** Names of the patterns seen, in order of first hit. */
  names: string[];
  evidence: Evidence[];
}

/**
 * A detector's patterns over one free text outside a tool-execution request (a conversation transcript's turn): the
 * noisy-or of the patterns seen ({@link combine}), detected at `detectAt`, with redacted evidence.
 */
export function markersIn(text: string, field: string, patterns: readonly WeightedPattern[], detectAt: number): TextMarkers {
  const hits = scan(text, field, patterns);
  const confidence = hits.length ? combine(hits) : 0;
  return { confidence, detected: confidence >= detectAt, names: [...new Set(hits.map((h) => h.name))], evidence: evidenceOf(hits) };
}

/** Two decimals. */
export const round = (n: number): number => Math.round(n * 100) / 100;

/** A verdict that saw nothing (or could not judge: the summary says why). */
export const nothing = (detector: DetectorId, summary: string): Verdict => ({ detector, detected: false, confidence: 0, summary, evidence: [] });

/** E-mail addresses (bounded, linear); the domain is lower-cased by {@link emailsIn}. */
const EMAIL = /(?<![A-Za-z0-9._%+'-])[A-Za-z0-9._%+'-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}/g;
/** Hosts of http(s) URLs. */
const URL_HOST = /\bhttps?:\/\/(?:[^\s/@?#]{1,128}@)?([A-Za-z0-9.-]{1,253})/gi;

/**
 * Distinct e-mail addresses in `text`, lower case. Apostrophes are legal in a local part (o'brien@…), but leading
 * ones are quotes around the address (`to 'mark@example.com'`) and are dropped.
 */
export function emailsIn(text: string): string[] {
  if (!text.includes('@')) return [];
  const out = new Set<string>();
  for (const m of text.matchAll(EMAIL)) out.add(m[0].replace(/^'+/, '').toLowerCase());
  return [...out];
}

/** Distinct hosts of the http(s) URLs in `text`, lower case, without a trailing dot. */
export function urlHostsIn(text: string): string[] {
  if (!/https?:\/\//i.test(text)) return [];
  const out = new Set<string>();
  for (const m of text.matchAll(URL_HOST)) out.add(m[1]!.toLowerCase().replace(/\.+$/, ''));
  return [...out];
}

/** The domain of an address (after the last `@`), lower case. */
export const domainOf = (address: string): string => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** True when `host` is one of `domains` or a subdomain of one. */
export function inDomains(host: string, domains: Iterable<string>): boolean {
  const h = host.toLowerCase();
  for (const d of domains) {
    if (!d) continue;
    if (h === d || h.endsWith(`.${d}`)) return true;
  }
  return false;
}

/** An input value flattened to `[field path, text]` pairs (`inputValues.message.to[0]`), depth and count bounded. */
export function flattenInputs(inputs: Record<string, unknown>): [string, string][] {
  const out: [string, string][] = [];
  const walk = (v: unknown, path: string, depth: number): void => {
    if (out.length >= 500) return;
    if (typeof v === 'string') out.push([path, v]);
    else if (typeof v === 'number' || typeof v === 'boolean') out.push([path, String(v)]);
    else if (Array.isArray(v)) {
      if (depth < 6) v.slice(0, 100).forEach((x, i) => walk(x, `${path}[${i}]`, depth + 1));
    } else if (v && typeof v === 'object' && depth < 6) {
      for (const [k, x] of Object.entries(v).slice(0, 100)) walk(x, `${path}.${k}`, depth + 1);
    }
  };
  for (const [k, v] of Object.entries(inputs)) walk(v, `inputValues.${k}`, 0);
  return out;
}

/**
 * True when a flattened input's field path holds recipients: one of its keys after `inputValues` is a recipient
 * parameter (`inputValues.to`, `inputValues.message.toRecipients[0].emailAddress.address`).
 */
export function isRecipientField(field: string): boolean {
  return field
    .replace(/\[\d+\]/g, '')
    .split('.')
    .slice(1)
    .some(isRecipientParam);
}

/** The user's own words: the current message and the chat history's `user` messages. */
export function userTexts(exec: ToolExecution): string[] {
  const out = [exec.userMessage];
  for (const m of exec.chatHistory) if (m.role.toLowerCase() === 'user') out.push(m.content);
  return out;
}

/** Every previous tool output value, with its field path. */
export function outputTexts(exec: ToolExecution): [string, string][] {
  const out: [string, string][] = [];
  exec.previousOutputs.forEach((o, i) => o.outputs.forEach((v, j) => out.push([`plannerContext.previousToolsOutputs[${i}].outputs[${j}].value`, v.value])));
  return out;
}

/** How the tool about to run can move data out of the tenant. */
type ToolChannel = 'email' | 'message' | 'http' | 'connector' | 'mcp';

/** What {@link classifyTool} concluded. */
export interface ToolClass {
  /** The channels it found (several may apply: a custom connector that posts over HTTP). */
  channels: Set<ToolChannel>;
  /** True when a channel came from the collected inventory or the declared type, not only from names. */
  certain: boolean;
  /** The agent's component for this tool, when the snapshot has it. */
  component: AgentToolSnapshot | null;
  /** Why, for summaries: `connector shared_office365`, `name "Send an email"`. */
  basis: string[];
}

/**
 * E-mail connectors (Learn connector reference: Office 365 Outlook `shared_office365`, Outlook.com `shared_outlook`,
 * Mail `shared_sendmail`, Gmail `shared_gmail`, SMTP `shared_smtp`, SendGrid `shared_sendgrid`).
 */
const EMAIL_CONNECTORS = new Set(['shared_office365', 'shared_outlook', 'shared_sendmail', 'shared_gmail', 'shared_smtp', 'shared_sendgrid']);
/** Messaging connectors (Microsoft Teams `shared_teams`, Slack `shared_slack`, Twilio `shared_twilio`, Telegram, Webex). */
const MESSAGE_CONNECTORS = new Set(['shared_teams', 'shared_slack', 'shared_twilio', 'shared_telegrambot', 'shared_webexbot']);
/** HTTP connectors: HTTP with Microsoft Entra ID `shared_webcontents` / `shared_webcontentsv2`, and `shared_http*`. */
const isHttpConnector = (id: string): boolean => /^shared_(?:webcontents|http)/.test(id);

const NAME_EMAIL = /\b(?:send|forward|reply)[\s_-]{0,3}(?:an?[\s_-]{1,3})?(?:e-?mail|mail|message)s?|\b(?:sendmail|sendemail|send_email)/i;
const NAME_MESSAGE = /\b(?:post|send)[\s_-]{0,3}(?:an?[\s_-]{1,3})?(?:chat|teams|channel|slack)?[\s_-]{0,3}message|\b(?:sms|text[\s_-]message)\b/i;
const NAME_HTTP = /\b(?:http|https|web[\s_-]?request|webhook|rest[\s_-]?api|api[\s_-]?call)\b|HttpRequest|InvokeHttp/i;
const NAME_MCP = /\bmcp\b|model[\s_-]context[\s_-]protocol/i;
/**
 * Parameter names that hold recipients (compared with case and separators removed), meeting attendees included: an
 * invitation is mail to each attendee (Office 365 Outlook *Create event (V4)* `requiredAttendees`, `optionalAttendees`).
 */
const RECIPIENT_PARAM =
  /^(?:to|cc|bcc|recipients?|torecipients?|ccrecipients?|bccrecipients?|email|emails|emailaddress(?:es)?|mailto|sendto|replyto|address(?:es)?|toaddress(?:es)?|receivers?|(?:required|optional)?attendees|participants|invitees|guests)$/;
/** Parameter names that hold meeting attendees (an invitation is mail to each). */
const ATTENDEE_PARAM = /^(?:(?:required|optional)?attendees|invitees|participants)$/;
/** Parameter names that hold a URL or host. */
const URL_PARAM = /^(?:url|uri|endpoint|webhook|webhookurl|host|hostname|link|targeturl|callbackurl|requesturl|baseurl)$/;

/** A parameter name with case and separators removed (`To Recipients` → `torecipients`). */
const normName = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');
/** True when a parameter name holds recipients. */
const isRecipientParam = (name: string): boolean => RECIPIENT_PARAM.test(normName(name));
/** True when a parameter name holds a URL or host. */
const isUrlParam = (name: string): boolean => URL_PARAM.test(normName(name));

/** The agent's component for the tool about to run, when the snapshot has the agent and the tool (case-insensitive). */
function componentOf(exec: ToolExecution, ctx: DetectorContext): AgentToolSnapshot | null {
  const agent = ctx.snapshot.agents.get(exec.meta.agentId.toLowerCase());
  if (!agent || !exec.tool.id) return null;
  const id = exec.tool.id.toLowerCase();
  return agent.tools.find((t) => t.schemaName.toLowerCase() === id) ?? null;
}

/**
 * Classifies the tool about to run by the channels it can move data out through. Sources, strongest first:
 * 1. the agent's component in the collected inventory: `kind: 'mcp'` → mcp; its `connectorId` — e-mail connectors
 *    (Office 365 Outlook, Outlook.com, Mail, Gmail, SMTP, SendGrid), messaging connectors (Teams, Slack, Twilio,
 *    Telegram, Webex), HTTP connectors (`shared_webcontents*`, `shared_http*`) per the Learn connector reference
 *    (https://learn.microsoft.com/connectors/connector-reference/); a custom connector → connector; `httpHosts` → http;
 * 2. the declared `toolDefinition.type`: `CustomConnectorToolDefinition` → connector, a type naming MCP → mcp
 *    (https://learn.microsoft.com/microsoft-copilot-studio/external-security-webhooks-interface-developers);
 * 3. names: the tool's id, name and description (send/forward/reply e-mail, post message, HTTP/webhook, MCP) and its
 *    parameters (recipient parameters → email, attendee parameters → email, URL parameters → http). Names alone leave `certain` false.
 */
export function classifyTool(exec: ToolExecution, ctx: DetectorContext): ToolClass {
  const channels = new Set<ToolChannel>();
  const basis: string[] = [];
  let certain = false;
  const component = componentOf(exec, ctx);
  if (component) {
    const connector = component.connectorId?.toLowerCase() ?? '';
    if (component.kind.toLowerCase() === 'mcp') channels.add('mcp');
    if (EMAIL_CONNECTORS.has(connector)) channels.add('email');
    if (MESSAGE_CONNECTORS.has(connector)) channels.add('message');
    if (isHttpConnector(connector) || component.httpHosts.length > 0) channels.add('http');
    if (component.customConnector) channels.add('connector');
    if (channels.size > 0) {
      certain = true;
      basis.push(connector ? `connector ${connector}` : `component kind ${component.kind}`);
    }
  }
  const type = exec.tool.type.toLowerCase();
  if (type.includes('customconnector')) {
    channels.add('connector');
    certain = true;
    basis.push(`type ${exec.tool.type}`);
  }
  if (type.includes('mcp')) {
    channels.add('mcp');
    certain = true;
    basis.push(`type ${exec.tool.type}`);
  }
  const names = `${exec.tool.id} ${exec.tool.name} ${exec.tool.description.slice(0, 2048)}`;
  const before = channels.size;
  if (NAME_EMAIL.test(names)) channels.add('email');
  if (NAME_MESSAGE.test(names)) channels.add('message');
  if (NAME_HTTP.test(names)) channels.add('http');
  if (NAME_MCP.test(names)) channels.add('mcp');
  const params = [...exec.tool.inputParameters.map((p) => p.name), ...Object.keys(exec.inputs)];
  if (params.some(isRecipientParam) && (channels.has('email') || channels.has('message') || /mail/i.test(names))) channels.add('email');
  // Attendees are invited by mail whatever the tool is called (Outlook *Create event (V4)* `requiredAttendees`).
  if (params.some((p) => ATTENDEE_PARAM.test(normName(p)))) channels.add('email');
  if (params.some(isUrlParam)) channels.add('http');
  if (channels.size > before) basis.push(`name "${exec.tool.name || exec.tool.id}"`.slice(0, 120));
  return { channels, certain, component, basis };
}

/** True when the tool sends mail or messages. */
export const isMessaging = (c: ToolClass): boolean => c.channels.has('email') || c.channels.has('message');
