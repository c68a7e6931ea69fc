import { ACTIONS, isOperatorAction, type Action, type ActionNamer } from '../core/actions.ts';
import type { FieldNamer } from '../core/errors.ts';

/**
 * The CLI's name of each domain field an error can name (errors below `cli/` name fields in domain terms, as the
 * API's JSON does). The one place where a field becomes a flag.
 */
export const FIELD_FLAGS: Readonly<Record<string, string>> = {
  tenantId: '--tenant-id',
  tenant: '--tenant',
  clientId: '--client-id',
  clientSecret: '--client-secret-env',
  secretExpires: '--secret-expires',
  servicePrincipalObjectId: '--sp-object-id',
  name: '--name',
  applicationId: '--application-id',
  mode: '--mode',
  region: '--region',
  adminUsername: '--username',
  adminPassword: '--password-stdin',
  dataDir: '--data-dir',
  appId: '--app-id',
  deadlineMs: '--deadline-ms',
  onTimeout: '--on-timeout',
  detectors: '--detector',
  'allow.mcpServers': '--allow-mcp',
  'allow.connectors': '--allow-connector',
  'allow.hosts': '--allow-host',
  'allow.internalDomains': '--internal-domain',
  agentId: '--agent',
  environmentId: '--environment',
  alertId: '--alert',
  stepId: '--step',
  actor: '--by',
  framework: '--framework',
  since: '--since',
  until: '--until',
  role: '--role',
  disabled: '--disable',
};

/**
 * A field's flag (`tenantId` → `--tenant-id`); a nested field takes its nearest named parent's flag
 * (`allow.hosts.2` → `--allow-host`, `detectors.jailbreak.threshold` → `--detector`); other fields (environment
 * variables, flags already) as they are.
 */
export const flagOf: FieldNamer = (field) => {
  for (let f = field; f; f = f.includes('.') ? f.slice(0, f.lastIndexOf('.')) : '') {
    const flag = FIELD_FLAGS[f];
    if (flag) return flag;
  }
  return field;
};

/**
 * The CLI's command line of each step an error or report can name (`core/actions.ts`): a `vigil` command, or a
 * phrase where the step is not one command. The one place where a step becomes a command line; a step added to
 * `Action` without a line here does not compile.
 */
export const ACTION_COMMANDS: { readonly [K in Action['do']]: (a: Extract<Action, { do: K }>) => string } = {
  listIntegrations: () => 'vigil integrations list',
  verifyIntegration: (a) => `vigil integrations verify ${a.integration ?? '<integration>'}`,
  rotateSecret: (a) => `vigil integrations rotate-secret ${a.integration ?? '<integration>'}`,
  consentLink: (a) => `vigil consent-url --tenant ${a.tenant ?? '<tenant id or domain>'}`,
  registerManagementApp: (a) =>
    a.integration || !a.tenantId
      ? `vigil register-management-app --integration ${a.integration ?? '<integration>'}`
      : `vigil register-management-app --tenant-id ${a.tenantId}${a.applicationId ? ` --application-id ${a.applicationId}` : ''}`,
  registerManagementAppPowerShell: () => 'run the PowerShell steps that `vigil register-management-app --powershell` prints, on a device your policies allow',
  addManagedIntegration: (a) => `vigil integrations add --mode managed-app --tenant-id ${a.tenantId ?? '<tenant id>'} --sp-object-id <Object ID>`,
  grantEnvironmentAccess: (a) => `vigil environments grant-access --integration ${a.integration ?? '<integration>'}`,
  listRuns: (a) => `vigil runs ${a.integration ?? '<integration>'}`,
  listFindings: () => 'vigil findings --status all',
  listAlerts: () => 'vigil alerts',
  listEvents: () => 'vigil events',
  listApiKeys: () => 'vigil api-keys list',
  listUsers: () => 'vigil users list',
  createApiKey: () => 'vigil api-keys create',
  copyWholeId: () => 'copy it whole from the `--wide` or `--json` output of the list',
  listTenants: () => 'vigil tenants list',
  bindTenant: (a) => `vigil tenants bind --tenant-id ${a.tenantId ?? '<tenant id>'} --organization <name>`,
  listOrganizations: () => 'vigil organizations list',
  createOrganization: (a) => `vigil organizations create ${a.name === undefined ? '<name>' : JSON.stringify(a.name)}`,
  findAccount: () => 'vigil users list',
  resetMasterKey: () => 'vigil master-key reset --forget-secrets',
};

/**
 * A step as the CLI words it: "run `vigil …`" (a step only the operator can take: its domain words and the command
 * in brackets, since the person at the terminal may be that operator), or the table's phrase.
 */
export const actionOf: ActionNamer = (a) => {
  const line = (ACTION_COMMANDS[a.do] as (a: Action) => string)(a);
  if (!line.startsWith('vigil ')) return line;
  return isOperatorAction(a) ? `${ACTIONS[a.do].says(a as never)} (operator: \`${line}\`)` : `run \`${line}\``;
};
