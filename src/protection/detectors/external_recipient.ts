import type { Evidence, ProtectionDetector } from '../types.ts';
import {
  classifyTool,
  domainOf,
  emailsIn,
  EVIDENCE_MAX,
  flattenInputs,
  inDomains,
  isMessaging,
  isRecipientField,
  nothing,
  outputTexts,
  userTexts,
} from './helpers.ts';

/** How an external address came to be a recipient, strongest first. */
type Origin = 'tool-output' | 'model' | 'user';

/** Confidence per origin: the user asked for it (0.6, below the default alert threshold 0.7), the model chose it, a tool output named it. */
const CONFIDENCE: Record<Origin, number> = { user: 0.6, model: 0.8, 'tool-output': 0.95 };

/**
 * External recipient: an e-mail or messaging tool (see helpers' `classifyTool`) whose recipient inputs (`to`, `cc`,
 * `bcc`, `recipient(s)`, `toRecipients`, `email`, `emailAddress`…, nested objects, comma/semicolon lists) hold an
 * address outside the tenant's domains (`snapshot.tenantDomains`) and `allow.internalDomains` (subdomains count as
 * inside). Confidence by where the address came from: written by the user in this conversation 0.6; chosen by the
 * model (in no user message) 0.8; named by a previous tool output and not by the user 0.95. Without any known
 * internal domain the detector does not judge (every address would look external). Evidence shows the domain only.
 */
export const detector: ProtectionDetector = {
  id: 'external_recipient',
  title: 'Message to an external recipient',
  description:
    "Reports e-mail and messaging tools whose recipients are outside the tenant's domains and the allowed internal domains, with more confidence when the address was chosen by the model or came from a previous tool output rather than from the user.",
  mappings: ['LLM02:2025 Sensitive Information Disclosure', 'LLM06:2025 Excessive Agency', 'AML.T0086 Exfiltration via AI Agent Tool Invocation'],
  run(exec, ctx) {
    const cls = classifyTool(exec, ctx);
    if (!isMessaging(cls)) return nothing('external_recipient', 'The tool does not send e-mail or messages.');
    const internal = [...ctx.snapshot.tenantDomains, ...ctx.allow.internalDomains];
    if (internal.length === 0) return nothing('external_recipient', 'Not evaluated: the tenant’s e-mail domains are not known yet (no inventory).');
    const external: { field: string; address: string }[] = [];
    for (const [field, text] of flattenInputs(exec.inputs)) {
      if (!isRecipientField(field)) continue;
      for (const address of emailsIn(text)) if (!inDomains(domainOf(address), internal)) external.push({ field, address });
    }
    if (external.length === 0) return nothing('external_recipient', 'Every recipient is internal.');

    const userSaid = new Set(userTexts(exec).flatMap(emailsIn));
    const outputSaid = new Set(outputTexts(exec).flatMap(([, t]) => emailsIn(t)));
    const originOf = (a: string): Origin => (userSaid.has(a) ? 'user' : outputSaid.has(a) ? 'tool-output' : 'model');
    let confidence = 0;
    const evidence: Evidence[] = [];
    const domains = new Set<string>();
    for (const { field, address } of external) {
      const origin = originOf(address);
      confidence = Math.max(confidence, CONFIDENCE[origin]);
      domains.add(domainOf(address));
      if (evidence.length < EVIDENCE_MAX) evidence.push({ field, match: `external-recipient:${origin}`, excerpt: `…@${domainOf(address)}` });
    }
    const from = confidence >= CONFIDENCE['tool-output'] ? ', named by a previous tool output' : confidence >= CONFIDENCE.model ? ', chosen by the model' : '';
    return {
      detector: 'external_recipient',
      detected: true,
      confidence,
      summary: `The tool sends to ${external.length} external recipient(s) at ${[...domains].slice(0, 5).join(', ')}${from}.`,
      evidence,
    };
  },
};
