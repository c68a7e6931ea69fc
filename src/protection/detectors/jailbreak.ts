import type { ProtectionDetector } from '../types.ts';
import { combine, evidenceOf, nothing, scan, type PatternHit, type WeightedPattern } from './helpers.ts';

/**
 * Direct jailbreak patterns in what the user typed (OWASP LLM01:2025 "direct prompt injection" / jailbreaking;
 * MITRE ATLAS AML.T0054 "LLM Jailbreak" and AML.T0056 system prompt extraction; the classes Microsoft's "Prompt
 * Shields" names for user prompt attacks: changing system rules, role play, embedding a conversation mockup, encoding
 * attacks). Linear patterns (bounded quantifiers only).
 */
const JAILBREAK_PATTERNS: readonly WeightedPattern[] = [
  { name: 'do-anything-now', weight: 0.8, pattern: /\bdo\s{1,3}anything\s{1,3}now\b/gi },
  { name: 'dan', weight: 0.35, pattern: /\bDAN\b/g },
  {
    name: 'developer-mode',
    weight: 0.6,
    pattern: /\b(?:developer|god|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|DUDE|evil)\s{1,3}mode\b/gi,
  },
  {
    name: 'no-restrictions',
    weight: 0.45,
    pattern:
      /\b(?:no|without|free\s{1,3}(?:of|from)|not\s{1,3}bound\s{1,3}by)\s{1,3}(?:any\s{1,3})?(?:(?:ethical|moral|content|safety|usual)\s{1,3})?(?:restrictions|filters|filtering|limitations|limits|censorship|guidelines|rules|safeguards|guardrails)\b/gi,
  },
  {
    name: 'ignore-your-rules',
    weight: 0.7,
    pattern:
      /\b(?:ignore|disregard|forget|bypass|override|break)\s{1,5}(?:(?:all|of|any)\s{1,5}){0,2}(?:your|the|previous|prior|above)\s{1,5}(?:[\w-]{1,20}\s{1,5})?(?:guidelines|rules|instructions|policies|restrictions|programming|training|safety\s{1,3}(?:rules|measures|filters)|content\s{1,3}polic(?:y|ies))\b/gi,
  },
  {
    name: 'role-play-bypass',
    weight: 0.5,
    pattern:
      /\b(?:pretend|imagine|act\s{1,3}as(?:\s{1,3}if)?|role-?\s?play|let'?s\s{1,3}play\s{1,3}a\s{1,3}game|from\s{1,3}now\s{1,3}on\s{1,3}you)\b[^\n]{0,120}?\b(?:no\s{1,3}(?:rules|restrictions|limits|filters)|without\s{1,3}(?:rules|restrictions|limits|filters)|unfiltered|uncensored|evil|not\s{1,3}bound|amoral|anything\s{1,3}goes)/gi,
  },
  {
    name: 'system-prompt-extraction',
    weight: 0.7,
    pattern:
      /\b(?:repeat|print|show|reveal|output|display|tell\s{1,3}me|write\s{1,3}out|what\s{1,3}(?:are|is|were|was))\s{1,5}(?:me\s{1,3})?(?:(?:all\s{1,3})?(?:of\s{1,3})?(?:the\s{1,3})?(?:words|text|everything)\s{1,3}(?:above|before\s{1,3}this)|your\s{1,3}(?:system\s{1,3}|initial\s{1,3}|original\s{1,3}|hidden\s{1,3}|secret\s{1,3})?(?:prompt|instructions)|the\s{1,3}(?:system|initial|hidden|original)\s{1,3}(?:prompt|instructions|message))\b/gi,
  },
  {
    name: 'encoded-instructions',
    weight: 0.5,
    pattern: /\b(?:decode|decipher|base64|rot13|reverse|hex)\b[^\n]{0,60}?\b(?:and|then)\s{1,3}(?:follow|execute|obey|do|run|act\s{1,3}on|answer)\b/gi,
  },
  {
    name: 'conversation-mockup',
    weight: 0.5,
    pattern: /<\|(?:im_start|im_end|system|endoftext|start_header_id|eot_id)\|>|\[\/?INST\]|<<\/?SYS>>|^\s{0,3}#{2,4}\s{0,3}System\s{0,3}:/gim,
  },
];

/** Confidence at which the detector reports a detection. */
const DETECT_AT = 0.5;

/**
 * Jailbreak: the user's own message and the user's messages of the chat history tried to take the agent out of its
 * rules (DAN, developer mode, "no restrictions", "ignore your guidelines", role play to bypass, system-prompt
 * extraction, encoded instructions, chat-template mockups). Confidence is the noisy-or of the patterns seen; the
 * current message counts fully, earlier messages at 0.8.
 */
export const detector: ProtectionDetector = {
  id: 'jailbreak',
  title: 'Jailbreak attempt',
  description:
    "Looks in the user's message and the user's earlier messages for attempts to lift the agent's rules: DAN / do anything now, developer mode, 'no restrictions', 'ignore your guidelines', role play to bypass, system prompt extraction, encoded instructions to follow, chat-template mockups.",
  mappings: [
    'LLM01:2025 Prompt Injection',
    'LLM07:2025 System Prompt Leakage',
    'AML.T0054 LLM Jailbreak',
    'AML.T0051.000 LLM Prompt Injection: Direct',
    'AML.T0056 Extract LLM System Prompt',
  ],
  run(exec) {
    const hits: PatternHit[] = scan(exec.userMessage, 'plannerContext.userMessage', JAILBREAK_PATTERNS);
    exec.chatHistory.forEach((m, i) => {
      if (m.role.toLowerCase() === 'user' && m.content !== exec.userMessage) {
        hits.push(...scan(m.content, `plannerContext.chatHistory[${i}].content`, JAILBREAK_PATTERNS, 0.8));
      }
    });
    if (hits.length === 0) return nothing('jailbreak', 'No jailbreak attempt in the user’s messages.');
    const confidence = combine(hits);
    const names = [...new Set(hits.map((h) => h.name))].join(', ');
    const detected = confidence >= DETECT_AT;
    return {
      detector: 'jailbreak',
      detected,
      confidence,
      summary: detected ? `The user tried to lift the agent's rules (${names}).` : `Weak hints of a jailbreak (${names}), below detection.`,
      evidence: evidenceOf(hits),
    };
  },
};
