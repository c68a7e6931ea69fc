import { describeAction, type ActionNamer } from '../core/actions.ts';
import { REGIONS, type Region } from '../config/regions.ts';
import type { Caller } from '../access/index.ts';
import { integrationOf } from '../access/scope.ts';
import { IntegrationDetailSchema, type IntegrationDetail } from '../contract/integrations.ts';
import type { Executor } from '../store/db.ts';
import type { IntegrationRow } from '../store/repositories/integrations.ts';
import type { IntegrationView } from './integrations.ts';
import { integrationSummary, toView } from './integrations.ts';
import { secretExpiryWarning } from '../integration/index.ts';
import type { VerificationReport } from './verify.ts';

/**
 * The setup doctor: the seed's ordered setup sequence for the integration's mode, one step per line with what Vigil
 * observed and, for each step that is not done, the exact fix. Source: the seed's "States and transitions" table
 * (Mode A: create app + secret + permissions + consent → register as management app → give Vigil the credentials;
 * Mode B: admin consent → register the managed app → create the integration), plus the System Administrator role in
 * every environment and the secret's expiry.
 */

/** One step. */
export interface SetupStep {
  order: number;
  title: string;
  state: 'done' | 'incomplete' | 'missing' | 'info';
  observed: string;
  fix?: string;
}

/**
 * Builds the ordered steps from an integration and its latest verification; `act` words the steps to take (the CLI
 * passes its command lines, everything else gets the domain wording).
 */
export function setupSteps(
  integration: IntegrationView,
  report: VerificationReport,
  region: Region = REGIONS.default,
  act: ActionNamer = describeAction,
): SetupStep[] {
  const managed = integration.mode === 'managed-app';
  const missing = report.missingPermissions;
  const steps: SetupStep[] = [];
  const permissionsObserved = `${report.permissionList === 'partial' ? 'incomplete grant' : `grant matches the ${report.permissionList} list`}; roles: ${Object.entries(
    report.grantedRoles,
  )
    .map(([api, r]) => `${api} ${r.length ? r.join(', ') : '(none)'}`)
    .join('; ')}`;
  const permissionsFix = missing.length
    ? `Add these application permissions and grant admin consent: ${missing.map((m) => `${m.api} ${m.permission}`).join(', ')}.`
    : undefined;
  if (managed) {
    steps.push({
      order: 1,
      title: 'A tenant administrator grants admin consent to the managed application',
      state: missing.length ? 'incomplete' : 'done',
      observed: `service principal ${report.servicePrincipalObjectId} issues tokens; ${permissionsObserved}`,
      fix: missing.length
        ? `Permissions were revoked after consent. Consent again (${act({ do: 'consentLink', tenant: integration.tenantId })}) or re-add: ${missing.map((m) => `${m.api} ${m.permission}`).join(', ')}. Until then these capabilities are not evaluated.`
        : undefined,
    });
  } else {
    steps.push({
      order: 1,
      title: 'Create the application, a client secret, the permissions, and grant admin consent',
      state: missing.length ? 'incomplete' : 'done',
      observed: `the secret works (service principal ${report.servicePrincipalObjectId}); ${permissionsObserved}`,
      fix: permissionsFix
        ? `${permissionsFix} (App registrations > your app > API permissions > Add a permission > Application permissions, then Grant admin consent.)`
        : undefined,
    });
  }
  steps.push({
    order: 2,
    title: `Register the ${managed ? 'managed ' : ''}application as a Power Platform admin management application`,
    state: report.managementApp.registered ? 'done' : 'missing',
    observed: report.managementApp.detail,
    fix: report.managementApp.registered
      ? undefined
      : `A Power Platform administrator does it: ${act({ do: 'registerManagementApp', integration: integration.id })}; or ${act({ do: 'registerManagementAppPowerShell' })}.`,
  });
  const secret = secretExpiryWarning(integration, act);
  steps.push({
    order: 3,
    title: managed ? 'Create the integration (tenant id and service principal Object ID)' : 'Give the client id, secret and tenant to Vigil',
    state: integration.credentialState !== 'ok' ? 'missing' : secret ? 'incomplete' : 'done',
    observed: `integration ${integration.id}${managed ? ` with Object ID ${integration.servicePrincipalObjectId}` : `; secret expires ${integration.secretExpiresAt?.slice(0, 10) ?? 'unknown'}`}${integration.credentialState !== 'ok' ? `; credentials ${integration.credentialState}` : ''}`,
    fix: integration.credentialState !== 'ok' ? (integration.credentialError ?? undefined) : (secret ?? undefined),
  });
  const withDataverse = report.environments.filter((e) => e.dataverse);
  const unreadable = withDataverse.filter((e) => !e.agentsReadable);
  steps.push({
    order: 4,
    title: 'Give the application System Administrator in every environment',
    state: !report.managementApp.registered ? 'missing' : unreadable.length ? 'incomplete' : 'done',
    observed: report.managementApp.registered
      ? `${withDataverse.length - unreadable.length} of ${withDataverse.length} Dataverse environments readable${unreadable.length ? `; not readable: ${unreadable.map((e) => e.name ?? e.id).join(', ')}` : ''}`
      : 'environments cannot be listed until step 2 is done',
    fix:
      unreadable.length || !report.managementApp.registered
        ? `${act({ do: 'grantEnvironmentAccess', integration: integration.id })} (or Power Platform admin center > Environments > Settings > Users + permissions > Application users > + New app user > System Administrator).`
        : undefined,
  });
  if (report.powerBi) {
    const p = report.powerBi;
    steps.push({
      order: 5,
      title: `Power BI: the tenant setting "${p.tenantSetting}" covers the application (no Power BI permission needed)`,
      state: p.access === 'granted' ? (p.consentedPermissions.length ? 'incomplete' : 'done') : p.access === 'refused' ? 'missing' : 'incomplete',
      observed: p.detail,
      fix: p.fix,
    });
  }
  steps.push({
    order: report.powerBi ? 6 : 5,
    title: 'Network (only if your policy requires safelisting)',
    state: 'info',
    observed: `${region.name} region source addresses: ${region.egressIps.join(', ')}`,
  });
  return steps;
}

/** Renders the steps for people. */
export function renderSteps(steps: SetupStep[]): string {
  const mark = { done: 'ok     ', incomplete: 'PARTIAL', missing: 'MISSING', info: 'info   ' } as const;
  return steps.map((s) => `${s.order}. ${mark[s.state]} ${s.title}\n     ${s.observed}${s.fix ? `\n     fix: ${s.fix}` : ''}`).join('\n');
}

/** Builds the contract's `IntegrationDetail` of a stored integration for the deployment's region: the integration with its latest verification, its setup checklist (empty until verified once) and its region's safelist (the portal's page). */
export async function integrationDetail(db: Executor, row: IntegrationRow, region: Region = REGIONS.default): Promise<IntegrationDetail> {
  const view = toView(row);
  // Through the contract's schema, which keeps the fields the API declares (the report's own tenant and client ids,
  // repeating the integration's, are left out): the CLI prints exactly what the API sends.
  return IntegrationDetailSchema.parse({
    integration: await integrationSummary(db, row),
    verification: view.verification,
    steps: view.verification ? setupSteps(view, view.verification, region) : [],
    safelist: { region: region.id, name: region.name, egressIps: [...region.egressIps] },
  });
}

/**
 * One integration the caller sees, with its setup checklist: `GET /api/v1/integrations/{id}` and `vigil integrations
 * show --json` print this.
 * @param id the integration's full id (the CLI resolves a name or a start of an id first).
 * @throws VigilError `not-found` / `INTEGRATION_NOT_FOUND` when absent or another organization's.
 */
export async function showIntegration(db: Executor, caller: Caller, id: string, region: Region = REGIONS.default): Promise<IntegrationDetail> {
  return integrationDetail(db, await integrationOf(db, caller, id), region);
}
