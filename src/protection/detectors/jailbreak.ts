import type { ProtectionDetector } from '../types.ts';
import { combine, evidenceOf, markersIn, nothing, scan, type PatternHit, type TextMarkers, type WeightedPattern } from './helpers.ts';

/**
 * Direct jailbreak patterns in what the user typed (OWASP LLM01:2025 "direct prompt injection" / jailbreaking;
 * MITRE ATLAS AML.T0054 "LLM Jailbreak" and AML.T0056 system prompt extraction; the classes Microsoft's "Prompt
 * Shields" names for user prompt attacks: changing system rules, role play, embedding a conversation mockup, encoding
 * attacks). The traits of in-the-wild jailbreak prompts follow Shen et al. 2023, "Do Anything Now: Characterizing and
 * Evaluating In-The-Wild Jailbreak Prompts on Large Language Models" (CCS '24) and Liu et al. 2023, "Jailbreaking
 * ChatGPT via Prompt Engineering" (pretending / attention shifting / privilege escalation): a persona the model is
 * told to become, claims that the persona has no rules, no ethics or no content policy, refusal suppression ("never
 * refuse", "never say I'm sorry"), two answers side by side (the normal one and the persona's, often marked
 * `[🔓JAILBREAK]`), "stay in character" enforcement (tokens, reminders), a fictional or hypothetical world where
 * nothing has consequences, a special "mode" (Developer Mode), and the prompt's target named (ChatGPT, OpenAI).
 * Each trait alone is weak — role play and hypotheticals are everyday requests — so weights are low and the noisy-or
 * of several traits decides. Linear patterns (bounded quantifiers only).
 */
const JAILBREAK_PATTERNS: readonly WeightedPattern[] = [
  { name: 'do-anything-now', weight: 0.8, pattern: /\bdo\s{1,3}anything\s{1,3}now\b/gi },
  { name: 'dan', weight: 0.35, pattern: /\bDAN\b/g },
  {
    name: 'developer-mode',
    weight: 0.6,
    pattern:
      /\b(?:developer|god|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|DUDE|evil|sudo|admin|debug|DAN)\s{1,3}mode\b|\b(?:with|in|enter|activate|enable)\s{1,3}(?:the\s{1,3})?[A-Z][A-Za-z0-9]{1,20}\s{1,3}Mode\s{1,3}(?:enabled|activated|on)\b/gi,
  },
  {
    name: 'no-restrictions',
    weight: 0.45,
    pattern:
      /\b(?:no|without|free\s{1,3}(?:of|from)|not\s{1,3}(?:bound|constrained|limited|restricted)\s{1,3}by|never\s{1,3}restricted\s{1,3}by)\s{1,3}(?:any\s{1,3}|all\s{1,3})?(?:(?:the|its|their|your)\s{1,3})?(?:[\w-]{1,15}[\s,]{1,3}(?:(?:and|or)\s{1,3})?){0,5}?(?:restrictions|filters|filtering|limitations|limits|censorship|guidelines|rules|safeguards|guardrails|constraints|confines|principles|polic(?:y|ies)|moderation)\b|\b(?:zero|no)\s{1,3}(?:moderation|censorship|filtering)\b/gi,
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
    name: 'persona-adoption',
    weight: 0.35,
    pattern:
      /\b(?:from\s{1,3}now\s{1,3}on|for\s{1,3}the\s{1,3}rest\s{1,3}of\s{1,3}(?:this|our)\s{1,3}conversation)\s{0,3},?\s{0,3}(?:you|you're|you\s{1,3}are|we)\b|\bimmerse\s{1,3}yourself\s{1,3}(?:into|in)\s{1,3}the\s{1,3}role\b|\byou\s{1,3}(?:are|will|'re)\s{1,3}(?:now\s{1,3})?(?:about\s{1,3}to\s{1,3}|going\s{1,3}to\s{1,3})?(?:act|play|simulate|pose|roleplay|role-play|embody|become|be\s{1,3}replaced|operate\s{1,3}under)\b|\b(?:you\s{1,3}(?:will|must|should)\s{1,3})(?:respond|answer|reply|speak)\s{1,3}as\s{1,3}["“]?\w|\b(?:act\s{1,3}out|play\s{1,3}out)\s{1,3}a\s{1,3}scene\b|\bcontinue\s{1,3}as\s{1,3}["“]?[\w-]{1,20}\s{1,3}(?:language\s{1,3}model|ai|chatbot|persona|character)\b|\b(?:act|pose|roleplay|role-play|behave)\s{1,3}as\s{1,3}(?:(?:a|an|the|my)\s{1,3})?(?:[\w'-]{1,20}\s{1,3}){0,3}?(?:ai|chatbot|model|bot|persona|character|assistant|version)\b|\b(?:ai|chatbot|language\s{1,3}model|model|persona|character|user|guy|girl|man|woman|person|hacker|entity|being|robot)\s{1,3}(?:named|called|known\s{1,3}as)\b/gi,
  },
  {
    name: 'amoral-persona',
    weight: 0.5,
    pattern:
      /\b(?:unfiltered|uncensored|unrestricted|amoral|nonmoral|immoral|unethical|unbiased\s{1,3}and\s{1,3}immoral|unhinged|evil|corrupted|boundless)\s{1,3}(?:and\s{1,3}[\w-]{1,20}\s{1,3})?(?:ai|chatbot|model|language\s{1,3}model|persona|character|response|responses|version|confidant|assistant|entity)\b|\b(?:does\s{1,3}not|doesn'?t|do\s{1,3}not|don'?t|never|won'?t)\s{1,3}(?:have\s{1,3}(?:any\s{1,3})?|care\s{1,3}(?:about|for)\s{1,3}|follow\s{1,3}(?:any\s{1,3})?)(?:ethical|moral|ethics|morals|morality|laws?|rules|guidelines)\b|\bwithout\s{1,3}(?:any\s{1,3})?(?:moral|ethical|remorse|ethics|morals|censorship|moralizing)\b|\byou\s{1,3}(?:are|'re)\s{1,3}(?:now\s{1,3})?(?:unrestricted|unfiltered|uncensored|amoral|not\s{1,3}(?:restricted|bound|limited|censored))\b|\bso-called\s{1,3}["“]?(?:ethics|morals|morality|rules|guidelines|policies|restrictions)\b|\bviolat(?:e|es|ing)\s{1,3}(?:all\s{1,3}|any\s{1,3})?(?:ethical|moral)\s{1,3}(?:standards|guidelines|rules|principles|norms)\b|\b(?:filter|safety|censorship|moderation)\s{1,3}(?:level|setting)\s{1,3}(?:is\s{1,3})?(?:set\s{1,3})?(?:to\s{1,3})?(?:0|zero|off|none|disabled)\b/gi,
  },
  {
    name: 'policy-evasion',
    weight: 0.55,
    pattern:
      /\b(?:not\s{1,3}(?:comply|complies|governed|bound)|doesn'?t\s{1,3}comply|violat(?:e|es|ing)|against|break(?:ing)?|ignor(?:e|es|ing)|bypass(?:es|ing)?|free\s{1,3}(?:of|from)|not\s{1,3}(?:have\s{1,3}to\s{1,3})?(?:abide|follow)\s{1,3}by|no\s{1,3}longer\s{1,3}(?:bound|limited)\s{1,3}by)\b(?:[^.\n]|\.(?=\S)){0,40}?\b(?:open\s?ai|content|usage|safety)\s{1,3}(?:polic(?:y|ies)|guidelines|rules|filters?)\b|\b(?:open\s?ai'?s?|chatgpt'?s?)\s{1,3}(?:rules|policies|guidelines|restrictions|content\s{1,3}polic(?:y|ies))\b|\b(?:rules|policies|guidelines|restrictions|filters|instructions|(?:system\s{1,3})?prompt|programming)\s{1,3}(?:of\s{1,3}[\w-]{1,20}\s{1,3})?(?:(?:and|or)\s{1,3}(?:[\w-]{1,20}\s{1,3}){0,2})?(?:don'?t|do\s{1,3}not|no\s{1,3}longer)\s{1,3}apply\b/gi,
  },
  {
    name: 'refusal-suppression',
    weight: 0.5,
    pattern:
      /\b(?:never|won'?t|will\s{1,3}not|cannot|can'?t)\s{1,3}(?:ever\s{1,3})?(?:refuse|deny|decline|reject)s?\b|\b(?:none\s{1,3}of\s{1,3}(?:your|\w{1,20}'s)\s{1,3}(?:responses|answers|replies)|your\s{1,3}(?:responses|answers)\s{1,3}(?:should|must|will)\s{1,3}(?:never|not))\s{1,3}(?:should\s{1,3}|will\s{1,3}|must\s{1,3})?(?:contain|include|inform|say|mention)\b|\b(?:never|don'?t|do\s{1,3}not)\s{1,3}(?:ever\s{1,3})?(?:remind|tell|inform|warn)\s{1,3}(?:me|the\s{1,3}user)\s{1,3}(?:that|about)\s{1,3}(?:you|it|the)|\bwithout\s{1,3}(?:any\s{1,3})?(?:warnings?|disclaimers?|caveats)\b|\bnever[\s,]{1,3}(?:ever[\s,]{1,3})?(?:respond|reply|answer|say)\s{1,3}(?:with\s{1,3})?["“']?I'?m\s{1,3}sorry/gi,
  },
  {
    name: 'dual-response',
    weight: 0.55,
    pattern:
      /\b(?:two|2)\s{1,3}(?:(?:different|separate|distinct|clearly\s{1,3}separated)\s{1,3}){0,2}(?:responses|answers|ways|paragraphs|outputs)\b(?:[^.\n]|\.(?=\S)){0,80}?\b(?:one|first|normal|default|classic|standard)\b|\b(?:answer|respond|reply)\s{1,3}(?:to\s{1,3})?(?:every|each|all|my)\s{1,3}(?:question|prompt|message)s?\s{1,3}in\s{1,3}(?:two|2)\s{1,3}ways\b|\[\s{0,2}(?:🔓|🔒)|\[\s{0,2}(?:JAILBREAK|JAILBROKEN|CLASSIC|DAN|UNFILTERED)\s{0,2}\]|\bas\s{1,3}both\s{1,3}(?:ais|personas|characters)\b|\b(?:default|normal|usual|classic|standard|regular)\s{1,3}(?:ChatGPT\s{1,3}|GPT\s{1,3}|AI\s{1,3})?(?:response|answer|reply|way)\b[^]{0,160}?\b(?:second|other|another|unfiltered|unhinged|uncensored|jailbr\w{2,6}|DAN)\b|\b(?:GPT|ChatGPT)\s{0,2}:\s{0,2}\[|\b(?:prefix|start|begin)\s{1,3}(?:all|each|every)\s{1,3}(?:of\s{1,3})?your\s{1,3}(?:answers|responses|outputs|replies|messages)\s{1,3}(?:with|as|by)\b/gi,
  },
  {
    name: 'stay-in-character',
    weight: 0.5,
    pattern:
      /\b(?:stay|remain|keep)\s{1,3}in\s{1,3}character\b|\bbreak(?:ing)?\s{1,3}(?:of\s{1,3})?character\b|\b(?:lose|lost|deducted|gain)\s{1,3}(?:a|one|\d{1,3})?\s{0,3}(?:life\s{1,3})?tokens?\b|\btokens?\s{1,3}(?:will\s{1,3}be\s{1,3})?deducted\b/gi,
  },
  {
    name: 'fictional-framing',
    weight: 0.3,
    pattern:
      /\b(?:hypothetical|fictional|imaginary|fake|make-believe)\s{1,3}(?:story|world|scenario|setting|universe|movie|console|machine|game)\b|\b(?:none\s{1,3}of\s{1,3}your|your)\s{1,3}actions\s{1,3}(?:will\s{1,3})?(?:have|has)\s{1,3}(?:no\s{1,3})?consequences\b|\bnothing\s{1,3}(?:you\s{1,3}say\s{1,3})?(?:is|will\s{1,3}be)\s{1,3}(?:real|off-?limits)\b/gi,
  },
  {
    name: 'unbounded-capability',
    weight: 0.4,
    pattern:
      /\b(?:can|will|could)\s{1,3}(?:do|say|generate|write|answer)\s{1,3}(?:anything|everything|any\s{1,3}kind\s{1,3}of\s{1,3}content)\b|\b(?:always|will)\s{1,3}(?:answer|respond|send\s{1,3}a\s{1,3}response)\s{1,3}(?:no\s{1,3}matter\s{1,3}(?:how|what)|regardless)\b|\bregardless\s{1,3}(?:of\s{1,3})?(?:how\s{1,3})?(?:illegal|immoral|unethical|harmful|dangerous|offensive)\b/gi,
  },
  {
    name: 'labelled-answer-template',
    weight: 0.35,
    pattern: /(?:^|\s)(?:\p{Extended_Pictographic}\uFE0F?){1,2}\s{0,2}:\s{0,2}\[/gmu,
  },
  { name: 'target-model-named', weight: 0.25, pattern: /\b(?:ChatGPT|OpenAI|Open\s{1,3}AI|GPT-?[34](?:\.5)?)\b/g },
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
 * The jailbreak patterns over one user message outside a tool-execution request (a conversation transcript's user
 * turn), detected at the detector's threshold. Evidence is redacted.
 */
export function jailbreakMarkers(text: string, field: string): TextMarkers {
  return markersIn(text, field, JAILBREAK_PATTERNS, DETECT_AT);
}

/**
 * Jailbreak: the user's own message and the user's messages of the chat history tried to take the agent out of its
 * rules ({@link JAILBREAK_PATTERNS}: DAN, developer mode, persona without rules, policy evasion, refusal suppression,
 * dual responses, stay in character, fictional framing, "ignore your guidelines", system-prompt extraction, encoded
 * instructions, chat-template mockups). Confidence is the noisy-or of the traits seen; the current message counts
 * fully, earlier messages at 0.8.
 */
export const detector: ProtectionDetector = {
  id: 'jailbreak',
  title: 'Jailbreak attempt',
  description:
    "Looks in the user's message and the user's earlier messages for attempts to lift the agent's rules: DAN / do anything now, developer mode, a persona without rules or ethics, claims that the content policy does not apply, refusal suppression, two answers side by side, 'stay in character', fictional framing, 'ignore your guidelines', system prompt extraction, encoded instructions to follow, chat-template mockups. Each trait alone is weak; several together are a jailbreak.",
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
