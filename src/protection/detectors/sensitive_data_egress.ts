import { inspectText } from '../../inspection/index.ts';
import type { DetectorContext, Evidence, ProtectionDetector, ToolExecution } from '../types.ts';
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
  round,
  urlHostsIn,
  type ToolClass,
} from './helpers.ts';

/** Hosts the tool's inputs name that are neither allowed (`allow.hosts`) nor the tenant's own domains. */
function foreignHosts(exec: ToolExecution, ctx: DetectorContext): { field: string; host: string }[] {
  const trusted = [...ctx.allow.hosts, ...ctx.snapshot.tenantDomains];
  const out: { field: string; host: string }[] = [];
  for (const [field, text] of flattenInputs(exec.inputs)) {
    for (const host of urlHostsIn(text)) if (!inDomains(host, trusted)) out.push({ field, host });
  }
  return out;
}

/** True when every recipient the tool's inputs hold is internal (tenant or allowed domains), and there is one. */
function internalOnly(exec: ToolExecution, ctx: DetectorContext): boolean {
  const internal = [...ctx.snapshot.tenantDomains, ...ctx.allow.internalDomains];
  if (internal.length === 0) return false;
  let seen = 0;
  for (const [field, text] of flattenInputs(exec.inputs)) {
    if (!isRecipientField(field)) continue;
    for (const e of emailsIn(text)) {
      seen++;
      if (!inDomains(domainOf(e), internal)) return false;
    }
  }
  return seen > 0;
}

/** Why the tool can send data out, for the summary. */
function outwardOf(cls: ToolClass, foreign: readonly { host: string }[]): string {
  const parts: string[] = [...cls.channels].map((c) => (c === 'connector' ? 'custom connector' : c === 'mcp' ? 'MCP tool' : c));
  if (foreign.length > 0) parts.push(`host ${foreign[0]!.host}`);
  return parts.join(', ');
}

/**
 * Regulated identifiers: a full payment card number (PCI DSS v4.0 requirement 4.2.2 — a PAN sent by end-user messaging
 * such as e-mail or chat must be protected with strong cryptography, so a plain PAN in a message is a violation
 * whoever receives it), national identifiers (U.S. SSN, U.K. NINO) and bank accounts (IBAN), which data-protection
 * regimes treat as high-risk identifiers (GDPR Art. 87; Microsoft Purview's built-in sensitive information types put
 * them in the same high-confidence class). E-mail addresses are personal data too, but everyday content.
 */
const REGULATED = new Set(['card_number', 'us_ssn', 'uk_nino', 'iban']);

/**
 * Sensitive data egress: secrets (cloud keys, tokens, private keys, passwords) or personal data (payment cards, SSN,
 * NINO, IBAN, e-mail addresses) in the values the model proposes for a tool that sends data out.
 *
 * "Sends data out" ({@link classifyTool}): an e-mail or messaging tool, an HTTP/web request tool, a custom
 * connector, an MCP tool — from the agent's collected component (`connectorId` per the Learn connector reference,
 * `customConnector`, `kind: 'mcp'`, `httpHosts`), the declared `toolDefinition.type`, or names — or any tool whose
 * inputs hold a URL whose host is neither in `allow.hosts` nor a tenant domain.
 *
 * Confidence: a secret 0.9; a regulated identifier ({@link REGULATED}: card, SSN, NINO, IBAN) 0.85, to internal
 * recipients too (the identifier leaves the system of record in clear text; an organization that mails them
 * internally by design raises the threshold to 0.9); e-mail addresses only 0.6, 0.45 when mailed only to internal
 * recipients (recorded, not blocked by default); +0.05 for several findings; −0.1 when the channel comes from names
 * only. Evidence names the field path (`inputValues.body`) and the inspection type, with the inspection's redacted
 * excerpt.
 */
export const detector: ProtectionDetector = {
  id: 'sensitive_data_egress',
  title: 'Sensitive data sent out',
  description:
    'Inspects the values the model proposes for secrets and personal data, and reports them when the tool sends data out of the tenant: e-mail and messaging tools, HTTP requests, custom connectors, MCP tools, or a URL to a host that is neither allowed nor a tenant domain.',
  mappings: [
    'LLM02:2025 Sensitive Information Disclosure',
    'LLM06:2025 Excessive Agency',
    'AML.T0057 LLM Data Leakage',
    'AML.T0086 Exfiltration via AI Agent Tool Invocation',
  ],
  run(exec, ctx) {
    const findings: (Evidence & { kind: 'secret' | 'personal' })[] = [];
    for (const [field, text] of flattenInputs(exec.inputs)) {
      if (text.length < 4) continue;
      const recipients = isRecipientField(field);
      for (const m of inspectText(text).matches) {
        // Addresses in a recipient field are where the message goes (external_recipient judges them), not data it carries.
        if (recipients && m.type === 'email') continue;
        findings.push({ field, match: m.type, excerpt: m.excerpt.slice(0, 160), kind: m.kind });
      }
    }
    if (findings.length === 0) return nothing('sensitive_data_egress', 'No secret or personal data in the tool’s inputs.');
    const cls = classifyTool(exec, ctx);
    const foreign = foreignHosts(exec, ctx);
    const types = [...new Set(findings.map((f) => f.match))].join(', ');
    if (cls.channels.size === 0 && foreign.length === 0) {
      return { ...nothing('sensitive_data_egress', `The tool’s inputs hold ${types}, but the tool does not send data out.`), confidence: 0.1 };
    }
    const secret = findings.some((f) => f.kind === 'secret');
    const regulated = findings.some((f) => REGULATED.has(f.match));
    let confidence = secret ? 0.9 : regulated ? 0.85 : 0.6;
    if (findings.length > 1) confidence += 0.05;
    if (!cls.certain && foreign.length === 0) confidence -= 0.1;
    if (!secret && !regulated && isMessaging(cls) && foreign.length === 0 && cls.channels.size <= 2 && internalOnly(exec, ctx)) confidence = 0.45;
    const evidence: Evidence[] = findings
      .sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'secret' ? -1 : 1))
      .slice(0, EVIDENCE_MAX)
      .map(({ field, match, excerpt }) => ({ field, match, excerpt }));
    if (foreign.length > 0 && evidence.length < EVIDENCE_MAX) evidence.push({ field: foreign[0]!.field, match: 'external-host', excerpt: foreign[0]!.host });
    return {
      detector: 'sensitive_data_egress',
      detected: true,
      confidence: round(Math.min(1, confidence)),
      summary: `The tool sends data out (${outwardOf(cls, foreign)}) and its inputs hold ${types}.`,
      evidence,
    };
  },
};
