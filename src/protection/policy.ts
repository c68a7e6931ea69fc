import { isIP } from 'node:net';
import { z } from 'zod';
import type { AllowLists, DetectorAction, DetectorId, DetectorSetting, EffectivePolicy, ProtectionMode, ProtectionPolicy } from './types.ts';

/**
 * Per-detector defaults, chosen for few false blocks once an organization switches to block mode:
 * - `prompt_injection` block@0.8: a directive aimed at the assistant's answer or a bare generative task in retrieved
 *   content reaches it alone, and so does an impersonal question or task at the first or last sentence of a document
 *   of five sentences or more that shares no word with the document nor with the user's message (0.85); an
 *   instruction override (0.75) or an order to send data needs a second signal (role markers, hidden text, text
 *   addressed to the AI, the thought following it, the tool carrying a target it named); such an off-topic request
 *   elsewhere (0.75) counts only beside a pattern's hit (or, when impersonal, the thought following it).
 *   On the corpus of issue 19 no benign case reaches it (test/unit/protection/quality.test.ts).
 * - `sensitive_data_egress` block@0.8: a secret leaving through a sending tool is 0.9, a card, SSN, NINO or IBAN 0.85
 *   (internal recipients too); e-mail addresses in content 0.6 at most.
 * - `unapproved_tool` block@0.9: a known MCP server or connector outside the organization's own allow-list (0.95);
 *   an MCP tool whose server is unknown (0.7) is not blocked.
 * - `external_recipient` alert@0.7: external mail is often legitimate; alert when the model or a tool output chose
 *   the address (0.8/0.95), not when the user wrote it (0.6).
 * - `jailbreak` alert@0.8: a user's attempt does not by itself make the tool call harmful; the tool-level detectors block.
 * - `changed_agent` alert@0.9: a tool missing from the last collection may be a change made since; alert, do not stop.
 */
const DEFAULT_DETECTORS: Record<DetectorId, DetectorSetting> = {
  prompt_injection: { action: 'block', threshold: 0.8 },
  sensitive_data_egress: { action: 'block', threshold: 0.8 },
  unapproved_tool: { action: 'block', threshold: 0.9 },
  external_recipient: { action: 'alert', threshold: 0.7 },
  jailbreak: { action: 'alert', threshold: 0.8 },
  changed_agent: { action: 'alert', threshold: 0.9 },
};

/** Every detector id: the keys of {@link DEFAULT_DETECTORS} (a record over `DetectorId`, so none can be missing). */
const DETECTOR_IDS = Object.keys(DEFAULT_DETECTORS) as [DetectorId, ...DetectorId[]];

/**
 * The policy when an organization has none: `monitor` (decide and record, never block: an organization opts in to
 * blocking); a 250 ms internal deadline (a quarter of Copilot Studio's 1,000 ms, leaving room for the network and
 * token validation); `onTimeout: 'allow'` (Copilot Studio's own default error behaviour, per
 * https://learn.microsoft.com/microsoft-copilot-studio/external-security-provider); empty allow-lists.
 */
export const DEFAULT_POLICY: Readonly<EffectivePolicy> = Object.freeze({
  mode: 'monitor',
  detectors: DEFAULT_DETECTORS,
  allow: { mcpServers: [], connectors: [], hosts: [], internalDomains: [] },
  deadlineMs: 250,
  onTimeout: 'allow',
  policyIds: [],
});

const HOST = /^(?=.{1,253}$)(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A host name (or IP address), trimmed and lower-cased; a leading `*.` is dropped (subdomains always count). */
const hostSchema = z
  .string()
  .trim()
  .toLowerCase()
  .refine((h) => HOST.test(h) || isIP(h) !== 0, { message: 'must be a host name such as api.contoso.com (no scheme, path or port)' })
  .transform((h) => (h.startsWith('*.') ? h.slice(2) : h));

const hostList = z.array(hostSchema).max(1000);

const detectorSettingSchema = z
  .object({
    action: z.enum(['block', 'alert', 'record', 'off'] satisfies DetectorAction[]).optional(),
    threshold: z.number().min(0).max(1).optional(),
  })
  .strict();

/**
 * The editable fields of a protection policy, for the API and the CLI: every field optional (unset = inherited from
 * the less specific policy, then {@link DEFAULT_POLICY}). Allow-lists are trimmed and lower-cased, hosts validated
 * (no scheme, path or port), connector ids like `shared_office365`. Errors name the field (`detectors.jailbreak.threshold`).
 */
export const protectionPolicyInputSchema = z
  .object({
    mode: z.enum(['monitor', 'block'] satisfies ProtectionMode[]).optional(),
    detectors: z.partialRecord(z.enum(DETECTOR_IDS), detectorSettingSchema).optional(),
    allow: z
      .object({
        mcpServers: hostList.optional(),
        connectors: z
          .array(
            z
              .string()
              .trim()
              .toLowerCase()
              .regex(/^[a-z0-9_-]{1,128}$/, { message: 'must be a connector id such as shared_office365' }),
          )
          .max(1000)
          .optional(),
        hosts: hostList.optional(),
        internalDomains: hostList.optional(),
      })
      .strict()
      .optional(),
    deadlineMs: z.number().int().min(10).max(900).optional(),
    onTimeout: z.enum(['allow', 'block']).optional(),
  })
  .strict();

/** The call a policy is resolved for. Ids compare case-insensitively; null = not known for this call. */
export interface PolicyScope {
  organizationId: string;
  integrationId: string | null;
  environmentId: string | null;
  agentId: string | null;
}

const same = (a: string | null, b: string | null): boolean => a !== null && b !== null && a.toLowerCase() === b.toLowerCase();

/** 3 agent, 2 environment, 1 integration, 0 organization; null when the policy does not apply to the scope. */
function specificity(p: ProtectionPolicy, scope: PolicyScope): number | null {
  if (!same(p.organizationId, scope.organizationId)) return null;
  if (p.integrationId !== null && !same(p.integrationId, scope.integrationId)) return null;
  if (p.environmentId !== null && !same(p.environmentId, scope.environmentId)) return null;
  if (p.agentId !== null && !same(p.agentId, scope.agentId)) return null;
  return p.agentId !== null ? 3 : p.environmentId !== null ? 2 : p.integrationId !== null ? 1 : 0;
}

const setCount = (p: ProtectionPolicy): number => Number(p.agentId !== null) + Number(p.environmentId !== null) + Number(p.integrationId !== null);

/**
 * The policy that applies to one call: of the organization's `policies`, those whose set scope fields all match
 * (`integrationId`, `environmentId`, `agentId`; case-insensitive), most specific first (agent > environment >
 * integration > organization; then more scope fields set; then id, for a stable order). Each field is taken from the
 * most specific policy that sets it, per detector and per setting (`action`, `threshold`), per allow-list (a list is
 * replaced, not merged); what none sets comes from {@link DEFAULT_POLICY}. `policyIds` lists the matching policies,
 * most specific first (empty: defaults only). Pure; never throws.
 */
export function resolvePolicy(policies: readonly ProtectionPolicy[], scope: PolicyScope): EffectivePolicy {
  const matching = policies
    .map((p) => ({ p, s: specificity(p, scope) }))
    .filter((x): x is { p: ProtectionPolicy; s: number } => x.s !== null)
    .sort((a, b) => b.s - a.s || setCount(b.p) - setCount(a.p) || (a.p.id < b.p.id ? -1 : a.p.id > b.p.id ? 1 : 0))
    .map((x) => x.p);
  const first = <T>(get: (p: ProtectionPolicy) => T | undefined, fallback: T): T => {
    for (const p of matching) {
      const v = get(p);
      if (v !== undefined) return v;
    }
    return fallback;
  };
  const detectors = {} as Record<DetectorId, DetectorSetting>;
  for (const id of DETECTOR_IDS) {
    detectors[id] = {
      action: first((p) => p.detectors?.[id]?.action, DEFAULT_DETECTORS[id].action),
      threshold: first((p) => p.detectors?.[id]?.threshold, DEFAULT_DETECTORS[id].threshold),
    };
  }
  const allowList = (key: keyof AllowLists): string[] => first((p) => p.allow?.[key], DEFAULT_POLICY.allow[key]).map((s) => s.toLowerCase());
  return {
    mode: first((p) => p.mode, DEFAULT_POLICY.mode),
    detectors,
    allow: {
      mcpServers: allowList('mcpServers'),
      connectors: allowList('connectors'),
      hosts: allowList('hosts'),
      internalDomains: allowList('internalDomains'),
    },
    deadlineMs: first((p) => p.deadlineMs, DEFAULT_POLICY.deadlineMs),
    onTimeout: first((p) => p.onTimeout, DEFAULT_POLICY.onTimeout),
    policyIds: matching.map((p) => p.id),
  };
}
