import { z } from 'zod';
import { Timestamp } from './common.ts';
import { RunSchema } from './runs.ts';

/** Contract of `/api/v1/integrations`: list, create in either mode, consent link, verify, rotate, registration, environments. */

/** An integration as listed (never its secret). */
const IntegrationSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    mode: z.enum(['customer-app', 'managed-app']),
    tenantId: z.string(),
    clientId: z.string().describe('Application (client) ID'),
    servicePrincipalObjectId: z.string().nullable(),
    secretExpiresAt: Timestamp.nullable(),
    secretDaysLeft: z.number().nullable().describe('Whole days until the client secret expires (negative once expired)'),
    secretWarning: z.string().nullable(),
    createdAt: Timestamp,
    verifiedAt: Timestamp.nullable(),
    credentialState: z.string().describe('ok, expired or rejected; collection stops until ok'),
    credentialError: z.string().nullable(),
    lastRun: RunSchema.pick({ id: true, status: true, startedAt: true, finishedAt: true }).nullable(),
  })
  .meta({ id: 'Integration' });

/** System Administrator access in one environment, as last verified. */
const EnvironmentAccessSchema = z
  .object({ id: z.string(), name: z.string().nullable(), dataverse: z.boolean(), agentsReadable: z.boolean().nullable(), reason: z.string().optional() })
  .meta({ id: 'EnvironmentAccess' });

/** The last verification of an integration's setup. */
const VerificationSchema = z
  .object({
    verified: z.boolean(),
    servicePrincipalObjectId: z.string().nullable(),
    permissionList: z.enum(['quick', 'step-by-step', 'partial']),
    grantedRoles: z.record(z.string(), z.array(z.string())),
    capabilities: z.array(
      z.object({
        id: z.string(),
        title: z.string(),
        api: z.string(),
        status: z.enum(['granted', 'missing']),
        grantedBy: z.string().optional(),
        add: z.string().optional(),
        detail: z.string().optional(),
      }),
    ),
    missingPermissions: z.array(z.object({ api: z.string(), permission: z.string(), capability: z.string() })),
    managementApp: z.object({ registered: z.boolean().nullable(), detail: z.string() }),
    powerBi: z
      .object({
        access: z.enum(['granted', 'refused', 'unknown']),
        consentedPermissions: z.array(z.string()),
        tenantSetting: z.string(),
        detail: z.string(),
        fix: z.string().optional(),
      })
      .optional()
      .describe('Power BI read-only admin API access, judged by what the API answered'),
    environments: z.array(EnvironmentAccessSchema),
    warnings: z.array(z.string()),
    checkedAt: Timestamp,
  })
  .meta({ id: 'Verification' });

/** One step of the setup checklist. */
const SetupStepSchema = z
  .object({ order: z.number(), title: z.string(), state: z.enum(['done', 'incomplete', 'missing', 'info']), observed: z.string(), fix: z.string().optional() })
  .meta({ id: 'SetupStep' });

/** One integration with its setup checklist. */
export const IntegrationDetailSchema = z
  .object({
    integration: IntegrationSchema,
    verification: VerificationSchema.nullable(),
    steps: z.array(SetupStepSchema).describe('The ordered setup checklist of the seed, as last verified'),
    safelist: z.object({ region: z.string(), name: z.string(), egressIps: z.array(z.string()) }),
  })
  .meta({ id: 'IntegrationDetail' });
/** One integration with its setup checklist, as the API and `vigil integrations show --json` print it. */
export type IntegrationDetail = z.infer<typeof IntegrationDetailSchema>;

/** Body of an integration's creation: Mode A (customer-created app) or Mode B (operator-managed app). */
export const CreateIntegrationBody = z.discriminatedUnion('mode', [
  z.object({
    mode: z.literal('customer-app'),
    name: z.string().max(200).optional(),
    tenantId: z.string().max(100).describe('Directory (tenant) ID, a GUID'),
    clientId: z.string().max(100).describe('Application (client) ID of your app registration, a GUID'),
    clientSecret: z.string().max(1024).describe('The secret Value (not its Secret ID); write-only'),
    secretExpires: z.string().max(40).optional().describe('YYYY-MM-DD the secret expires; default 24 months from today'),
  }),
  z.object({
    mode: z.literal('managed-app'),
    name: z.string().max(200).optional(),
    tenant: z.string().max(253).describe('Tenant ID or primary domain (contoso.onmicrosoft.com)'),
    servicePrincipalObjectId: z.string().max(100).describe("Object ID of Vigil's enterprise application in your tenant"),
  }),
]);

/** The integrations of the organization. */
export const IntegrationListSchema = z.object({ items: z.array(IntegrationSchema) });

/** Body of a consent link request. */
export const ConsentLinkBody = z.object({ tenant: z.string().min(1).max(253).describe('Tenant ID or primary domain') });

/** A single-use admin consent link (Mode B, step 1). */
export const ConsentLinkSchema = z
  .object({ url: z.string(), tenantId: z.string(), clientId: z.string(), redirectUri: z.string(), expiresAt: Timestamp, instructions: z.array(z.string()) })
  .meta({ id: 'ConsentLink' });

/** Body of a secret rotation. */
export const RotateSecretBody = z.object({ clientSecret: z.string().max(1024), secretExpires: z.string().max(40).optional() });

/** Registration as a Power Platform admin management application: status and both ways to register. */
export const RegistrationSchema = z
  .object({
    registered: z.boolean().nullable(),
    detail: z.string(),
    applicationId: z.string(),
    powershell: z.array(z.string()),
    api: z.object({ method: z.literal('PUT'), url: z.string(), note: z.string() }),
  })
  .meta({ id: 'Registration' });

/** Environment access per environment. */
export const EnvironmentListSchema = z.object({ items: z.array(EnvironmentAccessSchema) });
/** System Administrator access in one environment, as the API and `vigil environments list --json` print it. */
export type EnvironmentAccess = z.infer<typeof EnvironmentAccessSchema>;

/** Outcome of granting System Administrator in one environment. */
const GrantResultSchema = z
  .object({
    environmentId: z.string(),
    name: z.string().nullable(),
    result: z.enum(['granted', 'already-granted', 'failed', 'no-dataverse']),
    via: z.enum(['addAppUser', 'dataverse']).optional(),
    reason: z.string().optional(),
    fix: z.string().optional(),
  })
  .meta({ id: 'GrantResult' });
/** Outcome of granting System Administrator in one environment. */
export type GrantResult = z.infer<typeof GrantResultSchema>;

/** Outcomes of granting System Administrator. */
export const GrantListSchema = z.object({ items: z.array(GrantResultSchema) });
