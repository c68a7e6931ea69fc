/**
 * Fabric / Power BI tenant settings (`Tenant.powerBi.tenantSettings`), served as the Fabric admin API "Tenants - List
 * Tenant Settings" under `/powerbi`:
 *
 * - `GET /v1/admin/tenantsettings[?continuationToken=…]` → `{"value":[TenantSetting…],"continuationUri","continuationToken"}`
 *   (`tenantSettingsPageSize` settings a page, default all; the last page has neither continuation field). Authorised
 *   like every Power BI admin route (`authorizePowerBiAdmin`); `tenantSettingsStatus` 403 / 404 answers that status
 *   with the Fabric `ErrorResponse` body instead (a refused or absent API).
 *
 * Shapes: microsoft/fabric-rest-api-specs `admin/swagger.json` (Tenants_ListTenantSettings, x-ms-pageable
 * `continuationUri`), `admin/definitions.json` (TenantSetting: `settingName`, `title`, `enabled`,
 * `canSpecifySecurityGroups`, `enabledSecurityGroups`, `excludedSecurityGroups`, `tenantSettingGroup`, `properties`),
 * `common/definitions.json` (ErrorResponse: `errorCode`, `message`, `requestId`). Setting names and titles: CISA
 * ScubaGear `Testing/Unit/Rego/PowerBI/PowerBIBaseConfig.rego` (real exports of the setting objects) and
 * learn.microsoft.com/fabric/admin/tenant-settings-index; the group titles ("Export and sharing settings", …) as
 * ScubaGear's fixtures show them.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createRng } from './prng.ts';
import { authorizePowerBiAdmin, type PowerBiContext } from './powerbi.ts';
import type { Tenant } from './tenant.ts';

/** A security group a setting names. */
interface SettingGroup {
  graphId: string;
  name: string;
}

/** One tenant setting as the API returns it. */
export interface PowerBiTenantSetting {
  settingName: string;
  title: string;
  enabled: boolean;
  canSpecifySecurityGroups: boolean;
  tenantSettingGroup: string;
  enabledSecurityGroups?: SettingGroup[];
  excludedSecurityGroups?: SettingGroup[];
  properties?: { name: string; value: string; type: string }[];
}

/** The settings generated, with the value Microsoft ships by default (Learn tenant settings index) and ScubaGear's wish. */
const CATALOGUE: { settingName: string; title: string; group: string; groups: boolean }[] = [
  { settingName: 'PublishToWeb', title: 'Publish to web', group: 'Export and sharing settings', groups: true },
  { settingName: 'AllowGuestUserToAccessSharedContent', title: 'Guest users can access Microsoft Fabric', group: 'Export and sharing settings', groups: true },
  {
    settingName: 'ExternalSharingV2',
    title: 'Users can invite guest users to collaborate through item sharing and permissions',
    group: 'Export and sharing settings',
    groups: true,
  },
  {
    settingName: 'ShareLinkToEntireOrg',
    title: 'Allow shareable links to grant access to everyone in your organization',
    group: 'Export and sharing settings',
    groups: true,
  },
  { settingName: 'ServicePrincipalAccessPermissionAPIs', title: 'Service principals can call Fabric public APIs', group: 'Developer settings', groups: true },
  {
    settingName: 'AllowServicePrincipalsCreateAndUseProfiles',
    title: 'Allow service principals to create and use profiles',
    group: 'Developer settings',
    groups: true,
  },
  { settingName: 'BlockResourceKeyAuthentication', title: 'Block ResourceKey Authentication', group: 'Developer settings', groups: false },
  { settingName: 'RScriptVisual', title: 'Interact with and share R and Python visuals', group: 'R and Python visuals settings', groups: false },
  { settingName: 'EimInformationProtectionEdit', title: 'Allow users to apply sensitivity labels for content', group: 'Information protection', groups: true },
  { settingName: 'AdminApisIncludeDetailedMetadata', title: 'Enhance admin APIs responses with detailed metadata', group: 'Admin API settings', groups: true },
];

/**
 * Varied settings for a generated tenant (seeded): each setting is off, on for the organisation, or (where groups are
 * allowed) on for one security group.
 */
export function generatePowerBiTenantSettings(seed: number | string): PowerBiTenantSetting[] {
  const rng = createRng(`${String(seed)}:powerbi-tenant-settings`);
  const group = { graphId: rng.guid(), name: 'Fabric Approved Users' };
  return CATALOGUE.map((c) => {
    const mode = rng.pick(c.groups ? (['off', 'org', 'group'] as const) : (['off', 'org'] as const));
    return {
      settingName: c.settingName,
      title: c.title,
      enabled: mode !== 'off',
      canSpecifySecurityGroups: c.groups,
      tenantSettingGroup: c.group,
      ...(mode === 'group' ? { enabledSecurityGroups: [group] } : {}),
      ...(c.settingName === 'PublishToWeb' ? { properties: [{ name: 'CreateP2w', value: String(mode !== 'off'), type: 'Boolean' }] } : {}),
    };
  });
}

/**
 * The ScubaGear Power BI policies a tenant's settings meet (true) or not (false), by policy id; absent when the tenant
 * serves no such setting. Rules as in ScubaGear `Rego/PowerBIConfig.rego`: 1.1 and 6.1 off; 2.1, 3.1, 4.1, 4.2 off or
 * scoped to security groups; 5.1 and 7.1 on. Also `ShareLinkToEntireOrg` (CIS 9.1.7): off or scoped.
 */
export function powerBiTenantSettingsGroundTruth(tenant: Tenant): Record<string, boolean> {
  const byName = new Map((tenant.powerBi?.tenantSettings ?? []).map((s) => [s.settingName, s]));
  const offOrScoped = (n: string) => {
    const s = byName.get(n);
    return s === undefined ? undefined : !s.enabled || (s.enabledSecurityGroups ?? []).length > 0;
  };
  const is = (n: string, v: boolean) => {
    const s = byName.get(n);
    return s === undefined ? undefined : s.enabled === v;
  };
  const truth: Record<string, boolean | undefined> = {
    'MS.POWERBI.1.1': is('PublishToWeb', false),
    'MS.POWERBI.2.1': offOrScoped('AllowGuestUserToAccessSharedContent'),
    'MS.POWERBI.3.1': offOrScoped('ExternalSharingV2'),
    'MS.POWERBI.4.1': offOrScoped('ServicePrincipalAccessPermissionAPIs'),
    'MS.POWERBI.4.2': offOrScoped('AllowServicePrincipalsCreateAndUseProfiles'),
    'MS.POWERBI.5.1': is('BlockResourceKeyAuthentication', true),
    'MS.POWERBI.6.1': is('RScriptVisual', false),
    'MS.POWERBI.7.1': is('EimInformationProtectionEdit', true),
    'CIS.9.1.7': offOrScoped('ShareLinkToEntireOrg'),
  };
  return Object.fromEntries(Object.entries(truth).filter((e): e is [string, boolean] => e[1] !== undefined));
}

/** Registers `GET /v1/admin/tenantsettings` (under the `/powerbi` prefix). */
export function registerPowerBiTenantSettings(app: FastifyInstance, ctx: PowerBiContext): void {
  app.get('/v1/admin/tenantsettings', async (req: FastifyRequest, reply: FastifyReply) => {
    const tenant = await authorizePowerBiAdmin(ctx, req, reply);
    if (!tenant) return reply;
    const estate = tenant.powerBi;
    const status = estate?.tenantSettingsStatus;
    if (status === 403)
      return reply.code(403).type('application/json; charset=utf-8').send({
        requestId: crypto.randomUUID(),
        errorCode: 'InsufficientPrivileges',
        message: 'The caller does not have sufficient permissions to perform this operation.',
      });
    if (status === 404 || !estate)
      return reply
        .code(404)
        .type('application/json; charset=utf-8')
        .send({ requestId: crypto.randomUUID(), errorCode: 'EntityNotFound', message: 'The requested resource could not be found.' });
    const all = estate.tenantSettings ?? [];
    const q = req.query as Record<string, string | undefined>;
    const offset = q.continuationToken !== undefined ? Number(Buffer.from(q.continuationToken, 'base64url').toString('utf8')) : 0;
    if (!Number.isInteger(offset) || offset < 0)
      return reply
        .code(400)
        .type('application/json; charset=utf-8')
        .send({ requestId: crypto.randomUUID(), errorCode: 'InvalidContinuationToken', message: 'The continuation token is not valid.' });
    const size = Math.max(1, estate.tenantSettingsPageSize ?? (all.length || 1));
    const page = all.slice(offset, offset + size);
    const more = offset + page.length < all.length;
    const token = more ? Buffer.from(String(offset + page.length), 'utf8').toString('base64url') : null;
    return reply
      .code(200)
      .type('application/json; charset=utf-8')
      .send({
        value: page,
        ...(token ? { continuationToken: token, continuationUri: `${ctx.baseUrl()}/powerbi/v1/admin/tenantsettings?continuationToken=${token}` } : {}),
      });
  });
}
