/**
 * Azure Resource Manager under `/arm` (reference §8): subscriptions, and Cognitive Services accounts (Azure AI Foundry
 * `AIServices`, `OpenAI`, other kinds) with their projects and deployments, filtered by the caller's Azure RBAC role
 * assignments.
 *
 * - `GET /arm/subscriptions?api-version=…`: subscriptions where the caller (token `oid`) holds any role assignment.
 * - `GET /arm/subscriptions/{sub}/providers/Microsoft.CognitiveServices/accounts?api-version=…`: needs a role that
 *   reads (`Reader`, `Contributor`, `Owner`, `Cognitive Services Contributor`) at subscription scope, else 403
 *   `AuthorizationFailed`; an unknown subscription → 404 `SubscriptionNotFound`.
 * - `GET /arm{accountId}/projects`, `/deployments` and `/raiPolicies` (same rule on the account's subscription).
 * - `GET /arm{accountId}/providers/Microsoft.Insights/diagnosticSettings`: the account's diagnostic settings in one
 *   page (same rule: Reader reads them).
 * - Paging: `value` + absolute `nextLink` with a `$skiptoken` (page size `azure.pageSize`, default 100).
 * - Errors use the ARM envelope `{"error":{"code","message"}}`; no `api-version` → 400 `MissingApiVersionParameter`;
 *   a token for another audience or tenant → 401 `InvalidAuthenticationToken`.
 *
 * Sources: azure-rest-api-specs `Microsoft.CognitiveServices/stable/2025-06-01/examples/{ListAccountsBySubscription,
 * GetProject,GetDeployment}.json`; ARM "Subscriptions - List"; learn.microsoft.com content filter concepts
 * (`raiPolicyName`, `Microsoft.Default` / `Microsoft.DefaultV2`). UNCONFIRMED: exact 403/401 message wording.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, queryParam, type EmulatorContext } from './common.ts';
import { RESOURCES } from './constants.ts';
import { createRng } from './prng.ts';
import type { Tenant } from './tenant.ts';

/** An Azure subscription (`GET /subscriptions` item). */
export interface AzureSubscription {
  subscriptionId: string;
  displayName: string;
  state: 'Enabled' | 'Disabled' | 'Warned';
}

/** An Azure RBAC role assignment: `principalId` (object id) holds `roleDefinitionName` at `scope`. */
export interface AzureRoleAssignment {
  principalId: string;
  roleDefinitionName: string;
  /** `/subscriptions/{id}` or a resource group below it. */
  scope: string;
}

/** A Cognitive Services account as ARM serves it, with its child collections (served by their own routes). */
export interface CognitiveAccount {
  id: string;
  name: string;
  type: 'Microsoft.CognitiveServices/accounts';
  kind: string;
  location: string;
  sku: { name: string };
  tags: Record<string, string>;
  properties: Record<string, unknown>;
  /** `identity` of the account (`{ type: 'SystemAssigned', principalId, tenantId }`), served at the top level; absent = none. */
  identity?: Record<string, unknown>;
  projects: Record<string, unknown>[];
  deployments: Record<string, unknown>[];
  /** Custom content filters (`accounts/raiPolicies`), served by their own route. */
  raiPolicies?: Record<string, unknown>[];
  /** `Microsoft.Insights/diagnosticSettings` on the account, served by their own route. */
  diagnosticSettings?: Record<string, unknown>[];
  /**
   * EMULATOR switch (no real field): reading this account's diagnostic settings answers 403 AuthorizationFailed, as for
   * a caller whose role was narrowed below the account (e.g. a deny assignment).
   */
  diagnosticSettingsForbidden?: boolean;
}

/** The Azure side of a tenant. */
export interface AzureEstate {
  subscriptions: AzureSubscription[];
  roleAssignments: AzureRoleAssignment[];
  accounts: CognitiveAccount[];
  /** Items per page of every list. @default 100 */
  pageSize?: number;
}

/** Roles that carry `Microsoft.CognitiveServices/accounts/read` (and the project/deployment reads) in the emulator. */
export const READ_ROLES = ['Reader', 'Contributor', 'Owner', 'Cognitive Services Contributor'];

const armError = (reply: FastifyReply, status: number, code: string, message: string): FastifyReply =>
  reply.code(status).header('content-type', 'application/json; charset=utf-8').header('x-ms-failure-cause', 'gateway').send({ error: { code, message } });

const subOf = (scope: string): string => (/^\/subscriptions\/([^/]+)/i.exec(scope)?.[1] ?? '').toLowerCase();

/** Whether `principalId` may read Cognitive Services resources at subscription scope. */
function canReadSubscription(azure: AzureEstate, principalId: string, subscriptionId: string): boolean {
  return azure.roleAssignments.some(
    (r) =>
      r.principalId === principalId && READ_ROLES.includes(r.roleDefinitionName) && r.scope.toLowerCase() === `/subscriptions/${subscriptionId.toLowerCase()}`,
  );
}

/** Subscriptions where the principal holds any role. */
function visibleSubscriptions(azure: AzureEstate, principalId: string): AzureSubscription[] {
  return azure.subscriptions.filter((s) =>
    azure.roleAssignments.some((r) => r.principalId === principalId && subOf(r.scope) === s.subscriptionId.toLowerCase()),
  );
}

/** Registers the ARM routes (prefix `/arm`). */
export function registerArm(app: FastifyInstance, ctx: EmulatorContext): void {
  const caller = async (req: FastifyRequest, reply: FastifyReply): Promise<{ tenant: Tenant; azure: AzureEstate; oid: string } | null> => {
    if (!queryParam(req, 'api-version')) {
      armError(reply, 400, 'MissingApiVersionParameter', 'The api-version query parameter (?api-version=) is required for all requests.');
      return null;
    }
    const result = await ctx.tokens.verify(bearerToken(req));
    const tenant = result.ok ? ctx.store.get(result.claims.tid) : undefined;
    if (!result.ok || !tenant || result.claims.aud.replace(/\/+$/, '').toLowerCase() !== RESOURCES.arm) {
      armError(reply, 401, 'InvalidAuthenticationToken', 'The access token is invalid.');
      return null;
    }
    return { tenant, azure: tenant.azure ?? { subscriptions: [], roleAssignments: [], accounts: [] }, oid: result.claims.oid };
  };

  const page = (req: FastifyRequest, reply: FastifyReply, azure: AzureEstate, items: unknown[]): FastifyReply => {
    const size = Math.max(1, azure.pageSize ?? 100);
    const skip = Number(queryParam(req, '$skiptoken') ?? '0');
    const start = Number.isInteger(skip) && skip >= 0 ? skip : 0;
    const body: Record<string, unknown> = { value: items.slice(start, start + size) };
    if (start + size < items.length) {
      const url = new URL(req.url, ctx.baseUrl());
      url.searchParams.set('$skiptoken', String(start + size));
      body.nextLink = `${ctx.baseUrl()}${url.pathname}${url.search}`;
    }
    return reply.header('content-type', 'application/json; charset=utf-8').send(body);
  };

  const forbidden = (reply: FastifyReply, oid: string, action: string, scope: string): FastifyReply =>
    armError(
      reply,
      403,
      'AuthorizationFailed',
      `The client '${oid}' with object id '${oid}' does not have authorization to perform action '${action}' over scope '${scope}' or the scope is invalid. If access was recently granted, please refresh your credentials.`,
    );

  app.get('/subscriptions', async (req, reply) => {
    const c = await caller(req, reply);
    if (!c) return reply;
    const subs = visibleSubscriptions(c.azure, c.oid).map((s) => ({
      id: `/subscriptions/${s.subscriptionId}`,
      subscriptionId: s.subscriptionId,
      tenantId: c.tenant.id,
      displayName: s.displayName,
      state: s.state,
    }));
    return page(req, reply, c.azure, subs);
  });

  app.get<{ Params: { sub: string } }>('/subscriptions/:sub/providers/Microsoft.CognitiveServices/accounts', async (req, reply) => {
    const c = await caller(req, reply);
    if (!c) return reply;
    const sub = req.params.sub.toLowerCase();
    if (!c.azure.subscriptions.some((s) => s.subscriptionId.toLowerCase() === sub))
      return armError(reply, 404, 'SubscriptionNotFound', `The subscription '${req.params.sub}' could not be found.`);
    if (!canReadSubscription(c.azure, c.oid, sub))
      return forbidden(reply, c.oid, 'Microsoft.CognitiveServices/accounts/read', `/subscriptions/${req.params.sub}`);
    const accounts = c.azure.accounts
      .filter((a) => subOf(a.id) === sub)
      .map(({ projects: _p, deployments: _d, raiPolicies: _r, diagnosticSettings: _s, diagnosticSettingsForbidden: _f, ...a }) => a);
    return page(req, reply, c.azure, accounts);
  });

  for (const child of ['projects', 'deployments', 'raiPolicies'] as const) {
    app.get<{ Params: { sub: string; rg: string; name: string } }>(
      `/subscriptions/:sub/resourceGroups/:rg/providers/Microsoft.CognitiveServices/accounts/:name/${child}`,
      async (req, reply) => {
        const c = await caller(req, reply);
        if (!c) return reply;
        const id =
          `/subscriptions/${req.params.sub}/resourceGroups/${req.params.rg}/providers/Microsoft.CognitiveServices/accounts/${req.params.name}`.toLowerCase();
        const account = c.azure.accounts.find((a) => a.id.toLowerCase() === id);
        if (!canReadSubscription(c.azure, c.oid, req.params.sub)) return forbidden(reply, c.oid, `Microsoft.CognitiveServices/accounts/${child}/read`, id);
        if (!account)
          return armError(
            reply,
            404,
            'ResourceNotFound',
            `The Resource 'Microsoft.CognitiveServices/accounts/${req.params.name}' under resource group '${req.params.rg}' was not found.`,
          );
        return page(req, reply, c.azure, account[child] ?? []);
      },
    );
  }

  // Diagnostic settings of an account: one page, no nextLink (the real list returns every setting at once).
  app.get<{ Params: { sub: string; rg: string; name: string } }>(
    '/subscriptions/:sub/resourceGroups/:rg/providers/Microsoft.CognitiveServices/accounts/:name/providers/Microsoft.Insights/diagnosticSettings',
    async (req, reply) => {
      const c = await caller(req, reply);
      if (!c) return reply;
      const id =
        `/subscriptions/${req.params.sub}/resourceGroups/${req.params.rg}/providers/Microsoft.CognitiveServices/accounts/${req.params.name}`.toLowerCase();
      const account = c.azure.accounts.find((a) => a.id.toLowerCase() === id);
      if (!canReadSubscription(c.azure, c.oid, req.params.sub) || account?.diagnosticSettingsForbidden)
        return forbidden(reply, c.oid, 'Microsoft.Insights/diagnosticSettings/read', id);
      if (!account)
        return armError(
          reply,
          404,
          'ResourceNotFound',
          `The Resource 'Microsoft.CognitiveServices/accounts/${req.params.name}' under resource group '${req.params.rg}' was not found.`,
        );
      return reply.header('content-type', 'application/json; charset=utf-8').send({ value: account.diagnosticSettings ?? [] });
    },
  );
}

/** ARM 404 for unknown paths. */
export function armNotFound(_req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return armError(reply, 404, 'NotFound', 'The requested resource was not found.');
}

const REGIONS = ['eastus', 'swedencentral', 'westeurope', 'eastus2'];
const MODELS = [
  { name: 'gpt-4o', version: '2024-11-20' },
  { name: 'gpt-4.1-mini', version: '2025-04-14' },
  { name: 'text-embedding-3-large', version: '1' },
  { name: 'o4-mini', version: '2025-04-16' },
];

/**
 * Generates the Azure side with its own random stream: `subscriptions` subscriptions, each with a Reader assignment
 * for `principalId` (the connector's service principal); `accounts` Cognitive Services accounts cycling kinds
 * AIServices, OpenAI, AIServices, FormRecognizer; AIServices accounts get `projectsPerAccount` projects; AIServices
 * and OpenAI accounts get 1–`deploymentsPerAccount` deployments, about a third without `raiPolicyName`. About half the
 * accounts allow public network access with local (key) auth.
 */
export function generateAzure(options: {
  seed: number | string;
  principalId: string | null;
  subscriptions: number;
  accounts: number;
  projectsPerAccount: number;
  deploymentsPerAccount: number;
}): AzureEstate {
  const rng = createRng(`${String(options.seed)}:arm`);
  const subscriptions: AzureSubscription[] = Array.from({ length: options.subscriptions }, (_, i) => ({
    subscriptionId: rng.guid(),
    displayName: i === 0 ? 'Production' : `Subscription ${i + 1}`,
    state: 'Enabled',
  }));
  const roleAssignments: AzureRoleAssignment[] = options.principalId
    ? subscriptions.map((s) => ({ principalId: options.principalId!, roleDefinitionName: 'Reader', scope: `/subscriptions/${s.subscriptionId}` }))
    : [];
  const kinds = ['AIServices', 'OpenAI', 'AIServices', 'FormRecognizer'];
  const accounts: CognitiveAccount[] = [];
  for (let i = 0; i < options.accounts && subscriptions.length > 0; i++) {
    const sub = subscriptions[i % subscriptions.length]!;
    const kind = kinds[i % kinds.length]!;
    const rg = `rg-ai-${rng.pick(['prod', 'dev', 'lab'])}`;
    const name = `${kind === 'OpenAI' ? 'aoai' : kind === 'AIServices' ? 'foundry' : 'docintel'}-${rng.chars(6, 'abcdefghijklmnopqrstuvwxyz0123456789')}`;
    const id = `/subscriptions/${sub.subscriptionId}/resourceGroups/${rg}/providers/Microsoft.CognitiveServices/accounts/${name}`;
    const location = rng.pick(REGIONS);
    const open = rng.chance(0.5);
    const account: CognitiveAccount = {
      id,
      name,
      type: 'Microsoft.CognitiveServices/accounts',
      kind,
      location,
      sku: { name: 'S0' },
      tags: {},
      properties: {
        endpoint: `https://${name}.cognitiveservices.azure.com/`,
        provisioningState: 'Succeeded',
        publicNetworkAccess: open ? 'Enabled' : 'Disabled',
        disableLocalAuth: !open,
        networkAcls: { defaultAction: open ? 'Allow' : 'Deny', ipRules: [], virtualNetworkRules: [] },
        ...(kind === 'AIServices' ? { allowProjectManagement: true } : {}),
      },
      projects: [],
      deployments: [],
    };
    if (kind === 'AIServices') {
      for (let p = 0; p < options.projectsPerAccount; p++) {
        const pname = `project-${p + 1}`;
        account.projects.push({
          id: `${id}/projects/${pname}`,
          name: pname,
          type: 'Microsoft.CognitiveServices/accounts/projects',
          location,
          tags: {},
          properties: {
            provisioningState: 'Succeeded',
            displayName: `Project ${p + 1}`,
            description: null,
            isDefault: p === 0,
            endpoints: { 'AI Foundry API': `https://${name}.services.ai.azure.com/api/projects/${pname}` },
          },
        });
      }
    }
    if (kind === 'AIServices' || kind === 'OpenAI') {
      const count = rng.int(1, Math.max(1, options.deploymentsPerAccount));
      for (let d = 0; d < count; d++) {
        const model = MODELS[(i + d) % MODELS.length]!;
        const filter = rng.chance(0.66) ? rng.pick(['Microsoft.DefaultV2', 'Microsoft.Default', 'strict-filter']) : null;
        account.deployments.push({
          id: `${id}/deployments/${model.name}`,
          name: model.name,
          type: 'Microsoft.CognitiveServices/accounts/deployments',
          sku: { name: rng.pick(['Standard', 'GlobalStandard']), capacity: rng.int(1, 100) },
          properties: {
            model: { format: 'OpenAI', name: model.name, version: model.version },
            ...(filter ? { raiPolicyName: filter } : {}),
            provisioningState: 'Succeeded',
          },
        });
      }
    }
    accounts.push(account);
  }
  addAccountSecurity(accounts, options.seed);
  return { subscriptions, roleAssignments, accounts };
}

/** A custom content filter (`accounts/raiPolicies` item) that blocks at Medium with Prompt Shields, or a weakened one. */
function raiPolicy(accountId: string, name: string, relaxed: boolean): Record<string, unknown> {
  const harm = (category: string, source: 'Prompt' | 'Completion') => ({
    name: category,
    blocking: true,
    enabled: !(relaxed && category === 'Violence' && source === 'Completion'),
    severityThreshold: relaxed && source === 'Prompt' ? 'High' : 'Medium',
    source,
  });
  return {
    id: `${accountId}/raiPolicies/${name}`,
    name,
    properties: {
      basePolicyName: 'Microsoft.DefaultV2',
      mode: relaxed ? 'Asynchronous_filter' : 'Blocking',
      contentFilters: [
        ...['Hate', 'Sexual', 'Selfharm', 'Violence'].flatMap((c) => [harm(c, 'Prompt'), harm(c, 'Completion')]),
        { name: 'Jailbreak', blocking: !relaxed, source: 'Prompt', enabled: !relaxed },
        { name: 'Indirect Attack', blocking: !relaxed, source: 'Prompt', enabled: !relaxed },
        { name: 'Protected Material Text', blocking: true, source: 'Completion', enabled: true },
        { name: 'Protected Material Code', blocking: true, source: 'Completion', enabled: true },
      ],
    },
  };
}

/**
 * Gives accounts their security settings from a generator of its own (so no other generated value changes):
 * outbound restriction (`restrictOutboundNetworkAccess`, `allowedFqdnList`), encryption key source, managed identity,
 * custom content filters for the deployments that name `strict-filter` (half of those accounts get a weakened
 * `relaxed-filter` instead: High-only prompt thresholds, violence off for completions, Prompt Shields off) and
 * diagnostic settings (logs to a workspace, metrics only, or none). The first account is hardened in every respect
 * and the second in none, so both outcomes exist.
 * Shapes: azure-rest-api-specs `Microsoft.CognitiveServices/stable/2025-06-01/examples/{ListAccountsBySubscription,
 * ListRaiPolicies}.json`; `Microsoft.Insights/preview/2021-05-01-preview/examples/getDiagnosticSetting.json`.
 */
function addAccountSecurity(accounts: CognitiveAccount[], seed: number | string): void {
  const rng = createRng(`${String(seed)}:arm-security`);
  accounts.forEach((account, i) => {
    const hardened = (p: number) => (i === 0 ? true : i === 1 ? false : rng.chance(p));
    const restricted = hardened(0.3);
    account.properties.restrictOutboundNetworkAccess = restricted;
    if (restricted) account.properties.allowedFqdnList = [`${account.name}.blob.core.windows.net`, 'search-contoso.search.windows.net'];
    const cmk = hardened(0.25);
    account.properties.encryption = cmk
      ? {
          keySource: 'Microsoft.KeyVault',
          keyVaultProperties: { keyName: 'aikey', keyVersion: rng.chars(32, '0123456789abcdef'), keyVaultUri: 'https://kv-ai.vault.azure.net/' },
        }
      : { keySource: 'Microsoft.CognitiveServices' };
    if (cmk || hardened(0.5)) account.identity = { type: 'SystemAssigned', principalId: rng.guid(), tenantId: rng.guid() };
    const custom = account.deployments.filter((d) => (d.properties as Record<string, unknown>).raiPolicyName === 'strict-filter');
    if (custom.length > 0) {
      const relaxed = i === 0 ? false : i === 1 ? true : rng.chance(0.5);
      if (relaxed) for (const d of custom) (d.properties as Record<string, unknown>).raiPolicyName = 'relaxed-filter';
      account.raiPolicies = [raiPolicy(account.id, relaxed ? 'relaxed-filter' : 'strict-filter', relaxed)];
    } else account.raiPolicies = [];
    const logs = i === 0 ? 'logs' : i === 1 ? 'none' : rng.pick(['logs', 'logs', 'metrics', 'none'] as const);
    account.diagnosticSettings =
      logs === 'none'
        ? []
        : [
            {
              id: `${account.id}/providers/microsoft.insights/diagnosticSettings/${logs === 'logs' ? 'to-sentinel' : 'metrics-only'}`,
              type: 'Microsoft.Insights/diagnosticSettings',
              name: logs === 'logs' ? 'to-sentinel' : 'metrics-only',
              properties: {
                workspaceId:
                  '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-sec/providers/Microsoft.OperationalInsights/workspaces/law-sentinel',
                metrics: [{ category: 'AllMetrics', enabled: true, retentionPolicy: { enabled: false, days: 0 } }],
                logs: [
                  { categoryGroup: 'audit', enabled: logs === 'logs', retentionPolicy: { enabled: false, days: 0 } },
                  { categoryGroup: 'allLogs', enabled: logs === 'logs', retentionPolicy: { enabled: false, days: 0 } },
                ],
              },
            },
          ];
  });
}

/** What a complete Foundry collection must find for the principal (default: the connector's service principal). */
export interface FoundryGroundTruth {
  visibleSubscriptions: number;
  /** Visible subscriptions where the principal lacks a read role (403). */
  forbiddenSubscriptions: number;
  /** AIServices + OpenAI accounts in readable subscriptions. */
  accounts: number;
  projects: number;
  deployments: number;
  deploymentsWithoutContentFilter: number;
  accountsPublicWithLocalAuth: number;
  /** Per collected account: whether it sends resource logs, uses a customer-managed key, has an identity, restricts outbound. */
  accountSecurity: Record<string, { logs: boolean; cmk: boolean; identity: boolean; outboundRestricted: boolean }>;
  /** Custom content filters (`raiPolicies` items) of the collected accounts. */
  raiPolicies: number;
}

/** Recomputes the expected Foundry collection from the tenant. */
export function foundryGroundTruth(tenant: Tenant, options: { principalId?: string } = {}): FoundryGroundTruth {
  const principal = options.principalId ?? tenant.apps.find((a) => a.appId === tenant.connectorAppId)?.servicePrincipalObjectId ?? '';
  const azure = tenant.azure ?? { subscriptions: [], roleAssignments: [], accounts: [] };
  const visible = visibleSubscriptions(azure, principal);
  const readable = new Set(visible.filter((s) => canReadSubscription(azure, principal, s.subscriptionId)).map((s) => s.subscriptionId.toLowerCase()));
  const accounts = azure.accounts.filter((a) => readable.has(subOf(a.id)) && ['AIServices', 'OpenAI'].includes(a.kind));
  const deployments = accounts.flatMap((a) => a.deployments);
  return {
    visibleSubscriptions: visible.length,
    forbiddenSubscriptions: visible.length - readable.size,
    accounts: accounts.length,
    projects: accounts.reduce((n, a) => n + a.projects.length, 0),
    deployments: deployments.length,
    deploymentsWithoutContentFilter: deployments.filter((d) => !(d.properties as Record<string, unknown>).raiPolicyName).length,
    accountsPublicWithLocalAuth: accounts.filter((a) => a.properties.publicNetworkAccess === 'Enabled' && a.properties.disableLocalAuth === false).length,
    accountSecurity: Object.fromEntries(
      accounts.map((a) => [
        a.id,
        {
          logs: (a.diagnosticSettings ?? []).some((s) =>
            (((s.properties as Record<string, unknown>).logs as { enabled: boolean }[] | undefined) ?? []).some((l) => l.enabled),
          ),
          cmk: (a.properties.encryption as { keySource?: string } | undefined)?.keySource === 'Microsoft.KeyVault',
          identity: a.identity !== undefined,
          outboundRestricted: a.properties.restrictOutboundNetworkAccess === true,
        },
      ]),
    ),
    raiPolicies: accounts.reduce((n, a) => n + (a.raiPolicies ?? []).length, 0),
  };
}
