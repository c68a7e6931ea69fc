import type { Evidence, ProtectionDetector, ToolExecution } from '../types.ts';
import {
  combine,
  domainOf,
  emailsIn,
  EVIDENCE_MAX,
  evidenceOf,
  flattenInputs,
  nothing,
  outputTexts,
  round,
  scan,
  urlHostsIn,
  userTexts,
  type PatternHit,
  type WeightedPattern,
} from './helpers.ts';

/**
 * Indirect prompt injection patterns, as found in retrieved documents, web pages and e-mails (OWASP LLM01:2025
 * "Prompt Injection" examples; MITRE ATLAS AML.T0051.001 "Indirect"; Microsoft's "Prompt Shields" document attack
 * classes: instruction override, role play, encoding, hidden text). Weights say how much one hit means on its own.
 * Every pattern is linear (bounded quantifiers, no nested unbounded repetition).
 */
const INJECTION_PATTERNS: readonly WeightedPattern[] = [
  {
    name: 'ignore-previous-instructions',
    weight: 0.75,
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass|skip)\s{1,5}(?:(?:all|any|the|your|of|these|those|my)\s{1,5}){0,3}(?:previous|prior|above|earlier|preceding|original|system|former)\s{1,5}(?:instructions?|prompts?|directions?|directives?|rules|messages?|context|guidelines|commands?)/gi,
  },
  {
    name: 'new-instructions',
    weight: 0.45,
    pattern:
      /\b(?:new|updated|revised|real|actual|important|additional)\s{1,5}(?:system\s{1,5})?(?:instructions?|directives?|system\s{1,3}prompt)\s{0,3}(?:for\s{1,3}(?:the\s{1,3})?(?:ai|assistant|agent|model|copilot|llm)\s{0,3})?[:\-–]/gi,
  },
  {
    name: 'instructions-to-assistant',
    weight: 0.45,
    pattern: /\b(?:attention|note|instructions?|message)\s{1,3}(?:to|for)\s{1,3}(?:the\s{1,3})?(?:ai|assistant|agent|model|copilot|llm|chatbot)\b/gi,
  },
  {
    name: 'you-are-now',
    weight: 0.45,
    pattern: /\byou\s{1,5}are\s{1,5}now\s{1,5}(?:a|an|the|in|no\s{1,5}longer|acting|operating|DAN|free)\b/gi,
  },
  { name: 'system-prompt', weight: 0.3, pattern: /\bsystem\s{0,3}prompt\b/gi },
  {
    name: 'chat-template-marker',
    weight: 0.7,
    pattern:
      /<\|(?:im_start|im_end|system|endoftext|start_header_id|eot_id)\|>|\[\/?INST\]|<<\/?SYS>>|^\s{0,3}#{2,4}\s{0,3}(?:System|Instruction|Instructions)\s{0,3}:/gim,
  },
  { name: 'hidden-unicode-tags', weight: 0.7, pattern: /[\u{E0000}-\u{E007F}]{2}/gu },
  { name: 'zero-width-run', weight: 0.4, pattern: /[\u200B-\u200D\u2060\uFEFF]{3}/gu },
  {
    name: 'exfiltration-instruction',
    weight: 0.5,
    pattern:
      /\b(?:send|forward|e-?mail|post|upload|exfiltrate|leak|transmit|copy|share)\b[^.\n]{0,60}?\b(?:to|at|into)\s{1,3}(?:[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}\.[A-Za-z0-9.-]{2,63}|https?:\/\/)/gi,
  },
  {
    name: 'tool-call-instruction',
    weight: 0.35,
    pattern:
      /\b(?:you\s{1,3}(?:must|should)|please|now|immediately|assistant,?)\s{1,3}(?:call|invoke|use|run|execute|trigger)\s{1,5}(?:the\s{1,5})?(?:[\w-]{1,40}\s{1,5})?(?:tool|function|action|plugin|connector)\b/gi,
  },
  {
    name: 'markdown-image-exfiltration',
    weight: 0.65,
    pattern: /!\[[^\]\n]{0,200}\]\(\s{0,3}https?:\/\/[^\s)?]{1,512}\?[^\s)=]{0,256}=[^\s)]{1,1024}\)/gi,
  },
  {
    name: 'markdown-link-exfiltration',
    weight: 0.5,
    pattern: /\[[^\]\n]{0,200}\]\(\s{0,3}https?:\/\/[^\s)?]{1,512}\?[^\s)=]{0,256}=(?:[^\s)&{}$<>%]{0,1024}[{}$<>]|[A-Za-z0-9+/_%-]{48})/gi,
  },
];

/**
 * A thought that quotes what a tool returned (double quotes or backticks — not apostrophes, which "I'll" has — or "the
 * document says…"): then the thought is scanned as tool output, at 0.8 of the weight.
 */
const QUOTES_OUTPUT =
  /["“”`]|\b(?:the\s{1,3})?(?:tool|document|page|e-?mail|result|output|file|website)\s{1,3}(?:says|said|states|asks|instructs|contains|reads)\b/i;

/** Confidence at which the detector reports a detection (a lone weak hint is not one). */
const DETECT_AT = 0.5;

/** Targets (e-mail addresses and hosts) the injected texts name. */
function targetsIn(texts: readonly string[]): { emails: Set<string>; hosts: Set<string> } {
  const emails = new Set<string>();
  const hosts = new Set<string>();
  for (const t of texts) {
    for (const e of emailsIn(t)) emails.add(e);
    for (const h of urlHostsIn(t)) hosts.add(h);
  }
  return { emails, hosts };
}

/**
 * Evidence that the tool's inputs carry a target the injected text named (an address or host in the tool output)
 * that the user never wrote: the injection is being acted on.
 */
function actedOn(exec: ToolExecution, injected: readonly string[]): Evidence[] {
  const named = targetsIn(injected);
  if (named.emails.size === 0 && named.hosts.size === 0) return [];
  const userOwn = targetsIn(userTexts(exec));
  const userText = userTexts(exec).join('\n').toLowerCase();
  const out: Evidence[] = [];
  for (const [field, text] of flattenInputs(exec.inputs)) {
    for (const e of emailsIn(text)) {
      if (named.emails.has(e) && !userOwn.emails.has(e)) out.push({ field, match: 'injected-recipient', excerpt: `…@${domainOf(e)}` });
    }
    for (const h of urlHostsIn(text)) {
      if (named.hosts.has(h) && !userOwn.hosts.has(h) && !userText.includes(h)) out.push({ field, match: 'injected-host', excerpt: h });
    }
    if (out.length >= EVIDENCE_MAX) break;
  }
  return out;
}

/**
 * Indirect prompt injection: instructions planted in what previous tools returned (retrieved documents, web results,
 * e-mails) and, when the orchestrator's thought quotes tool output, in the thought. Confidence is the noisy-or of the
 * patterns seen; it rises by 0.25 when the tool's inputs carry an address or host the injected text named and the
 * user did not.
 */
export const detector: ProtectionDetector = {
  id: 'prompt_injection',
  title: 'Indirect prompt injection',
  description:
    'Looks for instructions planted in previous tool outputs (documents, web pages, e-mails): instruction overrides, chat-template role markers, hidden Unicode text, orders to send data or call a tool, markdown image/link exfiltration URLs. Confidence rises when the tool about to run carries a recipient or host the injected text named.',
  mappings: [
    'LLM01:2025 Prompt Injection',
    'LLM06:2025 Excessive Agency',
    'AML.T0051.001 LLM Prompt Injection: Indirect',
    'AML.T0086 Exfiltration via AI Agent Tool Invocation',
  ],
  run(exec) {
    const hits: PatternHit[] = [];
    for (const [field, text] of outputTexts(exec)) hits.push(...scan(text, field, INJECTION_PATTERNS));
    if (exec.thought && QUOTES_OUTPUT.test(exec.thought)) hits.push(...scan(exec.thought, 'plannerContext.thought', INJECTION_PATTERNS, 0.8));
    if (hits.length === 0) return nothing('prompt_injection', 'No injected instructions in previous tool outputs.');
    let confidence = combine(hits);
    const injected = [...new Set(hits.map((h) => h.text))];
    const acted = confidence >= 0.3 ? actedOn(exec, injected) : [];
    if (acted.length > 0) confidence = round(Math.min(1, confidence + 0.25));
    const evidence = [...acted, ...evidenceOf(hits)].slice(0, EVIDENCE_MAX);
    const names = [...new Set(hits.map((h) => h.name))].join(', ');
    const detected = confidence >= DETECT_AT;
    const summary = detected
      ? `Previous tool output holds injected instructions (${names})${acted.length > 0 ? ' and the tool about to run carries a target they named' : ''}.`
      : `Weak hints of injected instructions (${names}), below detection.`;
    return { detector: 'prompt_injection', detected, confidence, summary, evidence };
  },
};
