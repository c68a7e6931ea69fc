/**
 * Steps a person takes to fix an error, named in domain terms. A text below `cli/` names such a step as an
 * {@link Action} (through the {@link ActionNamer} its `ErrorText` function receives), never as a command line: each
 * surface words the step its own way. The CLI shows the `vigil` command line (`cli/flags.ts`); the API, the portal,
 * logs and stored reports show {@link describeAction}'s words with the API route where there is one, and never a CLI
 * flag a portal user cannot use.
 *
 * A step only the Vigil operator can take (moving a tenant, resetting the master key: `operator: true` below) is
 * worded as a request to the operator on every surface.
 *
 * `core/` imports nothing: these types are shared by every layer.
 */

/** One step, with the objects it concerns (ids as the person gave them, or `undefined` for a placeholder). */
export type Action =
  | { do: 'listIntegrations' }
  | { do: 'verifyIntegration'; integration?: string }
  | { do: 'rotateSecret'; integration?: string }
  | { do: 'consentLink'; tenant?: string }
  | { do: 'registerManagementApp'; integration?: string; tenantId?: string; applicationId?: string }
  | { do: 'registerManagementAppPowerShell' }
  | { do: 'addManagedIntegration'; tenantId?: string }
  | { do: 'grantEnvironmentAccess'; integration?: string }
  | { do: 'listRuns'; integration?: string }
  | { do: 'listFindings' }
  | { do: 'listAlerts' }
  | { do: 'listEvents' }
  | { do: 'listApiKeys' }
  | { do: 'listUsers' }
  | { do: 'createApiKey' }
  | { do: 'copyWholeId' }
  | { do: 'listTenants' }
  | { do: 'bindTenant'; tenantId?: string }
  | { do: 'listOrganizations' }
  | { do: 'createOrganization'; name?: string }
  | { do: 'findAccount' }
  | { do: 'resetMasterKey' };

/** What an {@link Action} is called on one surface: a verb phrase that completes a sentence ("Then <phrase>."). */
export type ActionNamer = (action: Action) => string;

/** The domain wording of one kind of step. */
interface ActionEntry<A extends Action> {
  /** Only the Vigil operator can take the step (a deployment-wide command): API users are told to ask for it. */
  readonly operator?: true;
  /** The step as a verb phrase in domain words, without the API route. */
  readonly says: (a: A) => string;
  /** The API route or portal page that takes the step, when one does. */
  readonly api?: (a: A) => string;
}

const id = (v: string | undefined) => (v ? `/${v}` : '/{id}');

/** Every step, its domain wording and whether only the operator can take it. */
export const ACTIONS: { readonly [K in Action['do']]: ActionEntry<Extract<Action, { do: K }>> } = {
  listIntegrations: { says: () => 'list the integrations', api: () => 'GET /api/v1/integrations' },
  verifyIntegration: {
    says: (a) => `verify the integration${a.integration ? ` ${a.integration}` : ''} again`,
    api: (a) => `"Verify again" on its portal page, or POST /api/v1/integrations${id(a.integration)}/verify`,
  },
  rotateSecret: {
    says: (a) => `give Vigil the new secret of the integration${a.integration ? ` ${a.integration}` : ''}`,
    api: (a) => `"Rotate secret" on its portal page, or PUT /api/v1/integrations${id(a.integration)}/secret`,
  },
  consentLink: {
    says: (a) => `get a consent link for the tenant${a.tenant ? ` ${a.tenant}` : ''}`,
    api: () => '"Get consent link" in the portal, or POST /api/v1/integrations/consent-link',
  },
  registerManagementApp: {
    says: (a) => `register the application${a.applicationId ? ` ${a.applicationId}` : ''} as a Power Platform admin management application`,
    api: (a) =>
      a.integration || !a.applicationId
        ? `the integration's registration steps: GET /api/v1/integrations${id(a.integration)}/registration`
        : `New-PowerAppManagementApp -ApplicationId ${a.applicationId} in PowerShell`,
  },
  registerManagementAppPowerShell: {
    says: () => 'register the application with New-PowerAppManagementApp in PowerShell, on a device your policies allow',
  },
  addManagedIntegration: {
    says: (a) => `create the integration with the managed application${a.tenantId ? ` for tenant ${a.tenantId}` : ''} and that Object ID`,
    api: () => '"New integration" on the portal\'s Integrations page, or POST /api/v1/integrations',
  },
  grantEnvironmentAccess: {
    says: () => 'grant the application System Administrator in the environments',
    api: (a) => `"Grant System Administrator" on its portal page, or POST /api/v1/integrations${id(a.integration)}/environments/grant`,
  },
  listRuns: { says: () => "look at the integration's collection runs", api: (a) => `GET /api/v1/integrations${id(a.integration)}/runs` },
  listFindings: { says: () => 'list the findings', api: () => 'GET /api/v1/findings' },
  listAlerts: { says: () => 'list the alerts', api: () => 'GET /api/v1/alerts' },
  listEvents: { says: () => 'list the audit events', api: () => 'GET /api/v1/events' },
  listApiKeys: { says: () => 'list the API keys', api: () => 'GET /api/v1/organization/api-keys' },
  listUsers: { says: () => 'list the portal users', api: () => 'Settings > Users in the portal, or GET /api/v1/organization/users' },
  createApiKey: { says: () => 'create an API key', api: () => 'POST /api/v1/organization/api-keys' },
  copyWholeId: { says: () => 'copy the whole id from a list' },
  listTenants: { operator: true, says: () => 'list the bound tenants' },
  bindTenant: { operator: true, says: (a) => `move the tenant${a.tenantId ? ` ${a.tenantId}` : ''} to another organization` },
  listOrganizations: { operator: true, says: () => 'list the organizations' },
  createOrganization: { operator: true, says: (a) => `create the organization${a.name ? ` ${JSON.stringify(a.name)}` : ''}` },
  findAccount: { operator: true, says: () => 'look up which organization holds the address' },
  resetMasterKey: { operator: true, says: () => 'write a new master key and forget the secrets the lost key encrypted' },
};

/** The entry of an action (one lookup, typed for the action's own fields). */
function entryOf<A extends Action>(a: A): ActionEntry<A> {
  return ACTIONS[a.do] as unknown as ActionEntry<A>;
}

/** True when only the Vigil operator can take the step. */
export function isOperatorAction(a: Action): boolean {
  return entryOf(a).operator === true;
}

/** The step in domain words for the API, the portal, logs and stored reports, e.g. "list the alerts (GET /api/v1/alerts)". */
export const describeAction: ActionNamer = (a) => {
  const e = entryOf(a);
  if (e.operator) return `ask the Vigil operator to ${e.says(a)}`;
  return e.api ? `${e.says(a)} (${e.api(a)})` : e.says(a);
};
