import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, protectionPolicyInputSchema, resolvePolicy } from '../../../src/protection/policy.ts';
import type { ProtectionPolicy } from '../../../src/protection/types.ts';

const scope = { organizationId: 'org-1', integrationId: 'int-1', environmentId: 'Default-ENV', agentId: 'AGENT-1' };
const policy = (over: Partial<ProtectionPolicy> & { id: string }): ProtectionPolicy => ({
  organizationId: 'org-1',
  integrationId: null,
  environmentId: null,
  agentId: null,
  ...over,
});

describe('resolvePolicy', () => {
  it('gives the defaults when no policy applies: monitor, 250 ms, allow on timeout', () => {
    const p = resolvePolicy([policy({ id: 'other-org', organizationId: 'org-2', mode: 'block' })], scope);
    expect(p).toEqual({ ...DEFAULT_POLICY, policyIds: [] });
    expect(p.detectors.prompt_injection).toEqual({ action: 'block', threshold: 0.8 });
    expect(p.detectors.external_recipient).toEqual({ action: 'alert', threshold: 0.7 });
  });

  it('takes each field from the most specific policy that sets it: agent > environment > integration > organization', () => {
    const policies = [
      policy({ id: 'org', mode: 'block', deadlineMs: 400, allow: { hosts: ['api.contoso.com'], connectors: ['shared_office365'] } }),
      policy({ id: 'int', integrationId: 'INT-1', onTimeout: 'block', detectors: { jailbreak: { action: 'block', threshold: 0.6 } } }),
      policy({
        id: 'env',
        integrationId: 'int-1',
        environmentId: 'default-env',
        detectors: { jailbreak: { threshold: 0.9 } },
        allow: { hosts: ['x.example'] },
      }),
      policy({ id: 'agent', environmentId: 'Default-ENV', agentId: 'agent-1', mode: 'monitor' }),
      policy({ id: 'other-agent', agentId: 'agent-2', mode: 'block' }),
      policy({ id: 'other-env', environmentId: 'env-9', deadlineMs: 20 }),
    ];
    const p = resolvePolicy(policies, scope);
    expect(p.policyIds).toEqual(['agent', 'env', 'int', 'org']);
    expect(p.mode).toBe('monitor');
    expect(p.detectors.jailbreak).toEqual({ action: 'block', threshold: 0.9 });
    expect(p.allow.hosts).toEqual(['x.example']); // replaced, not merged
    expect(p.allow.connectors).toEqual(['shared_office365']);
    expect(p.deadlineMs).toBe(400);
    expect(p.onTimeout).toBe('block');
    expect(p.detectors.prompt_injection).toEqual({ action: 'block', threshold: 0.8 });
  });

  it('does not apply a narrowed policy to a call whose scope is unknown', () => {
    const p = resolvePolicy([policy({ id: 'agent', agentId: 'agent-1', mode: 'block' })], { ...scope, agentId: null });
    expect(p.mode).toBe('monitor');
    expect(p.policyIds).toEqual([]);
  });
});

describe('protectionPolicyInputSchema', () => {
  it('lower-cases allow-lists and accepts a valid policy', () => {
    const v = protectionPolicyInputSchema.parse({
      mode: 'block',
      detectors: { prompt_injection: { action: 'alert', threshold: 0.5 } },
      allow: { hosts: [' API.Contoso.com '], mcpServers: ['*.mcp.example'], connectors: ['Shared_Office365'], internalDomains: ['fabrikam.com'] },
      deadlineMs: 300,
      onTimeout: 'block',
    });
    expect(v.allow).toEqual({ hosts: ['api.contoso.com'], mcpServers: ['mcp.example'], connectors: ['shared_office365'], internalDomains: ['fabrikam.com'] });
  });

  it('names the field at fault', () => {
    const issues = (input: unknown) => {
      const r = protectionPolicyInputSchema.safeParse(input);
      return r.success ? [] : r.error.issues.map((i) => i.path.join('.'));
    };
    const message = (input: unknown) => protectionPolicyInputSchema.safeParse(input).error?.issues[0]?.message;
    expect(issues({ detectors: { jailbreak: { threshold: 1.5 } } })).toEqual(['detectors.jailbreak.threshold']);
    expect(issues({ detectors: { nope: { action: 'block' } } })).toEqual(['detectors']);
    expect(message({ detectors: { nope: { action: 'block' } } })).toContain('nope');
    expect(message({ allow: { hosts: ['https://evil.example/path'] } })).toMatch(/no scheme, path or port/);
    expect(issues({ allow: { hosts: ['https://evil.example/path'] } })).toEqual(['allow.hosts.0']);
    expect(issues({ deadlineMs: 950 })).toEqual(['deadlineMs']);
    expect(issues({ deadlineMs: 5 })).toEqual(['deadlineMs']);
    expect(issues({ mode: 'enforce' })).toEqual(['mode']);
    expect(issues({ onTimeout: 'retry' })).toEqual(['onTimeout']);
    expect(issues({ extra: 1 })).toHaveLength(1);
  });
});
