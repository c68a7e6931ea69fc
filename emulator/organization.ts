/**
 * Dataverse `organization` rows (environment-level settings) served at
 * `GET /dataverse/{uniqueName}/api/data/v9.2/organizations` — today the content security policy (CSP) columns
 * Microsoft Learn "Content security policy" (power-platform/admin/content-security-policy) configures per environment:
 * `iscontentsecuritypolicyenabled` (model-driven apps), `iscontentsecuritypolicyenabledforcanvas`,
 * `contentsecuritypolicyconfiguration`, `contentsecuritypolicyconfigurationforcanvas`,
 * `contentsecuritypolicyreporturi` (Dataverse `organization` EntityType); and the security settings of the same row:
 * auditing (`isauditenabled`, `isuseraccessauditenabled`, `auditretentionperiodv2` days, -1 = forever — Learn "Manage
 * Dataverse auditing"), session and inactivity timeouts (`sessiontimeoutenabled`, `sessiontimeoutinmins`,
 * `inactivitytimeoutenabled`, `inactivitytimeoutinmins` — Learn "Security and session settings"), `blockedattachments`
 * (semicolon list, Learn "System settings"), the IP firewall (`enableipbasedfirewallrule`, `allowediprangeforfirewall`
 * comma-separated CIDR, `enableipbasedfirewallruleinauditmode` — Learn "IP firewall", whose PATCH payload shows these
 * names and shapes) and `enableipbasedcookiebinding` (Learn "IP address-based cookie binding").
 *
 * Access mirrors `dataverse.ts`: the token audience must be `{base}/dataverse/{uniqueName}` and its tenant must own
 * the org (else 401 with `WWW-Authenticate`); Global / Power Platform Administrator users are admitted; an app that is
 * not an application user of the org → 403 `0x80072560` "The user is not a member of the organization."; an
 * application user without System Administrator → 403 `0x80040220` (missing `prvReadOrganization`). Unknown column in
 * `$select` → 400 `0x80060888`; `$filter` and other options are not implemented (400). One page (one row).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, newId, parseSelect, queryParam, type EmulatorContext } from './common.ts';
import { POWER_PLATFORM_ADMIN_ROLES, SYSTEM_ADMINISTRATOR } from './constants.ts';
import { privilegeId, rolesOf } from './dataverse.ts';
import { createRng } from './prng.ts';
import type { DataverseOrg, Environment, Tenant } from './tenant.ts';

/** One `organization` row as served (the columns the emulator models). */
export interface OrganizationRow {
  organizationid: string;
  name: string;
  iscontentsecuritypolicyenabled: boolean;
  iscontentsecuritypolicyenabledforcanvas: boolean;
  contentsecuritypolicyconfiguration: string | null;
  contentsecuritypolicyconfigurationforcanvas: string | null;
  contentsecuritypolicyreporturi: string | null;
  isauditenabled: boolean;
  isuseraccessauditenabled: boolean;
  auditretentionperiodv2: number;
  sessiontimeoutenabled: boolean;
  sessiontimeoutinmins: number;
  inactivitytimeoutenabled: boolean;
  inactivitytimeoutinmins: number;
  blockedattachments: string;
  enableipbasedfirewallrule: boolean;
  enableipbasedfirewallruleinauditmode: boolean;
  allowediprangeforfirewall: string | null;
  enableipbasedcookiebinding: boolean;
}

/** The `organization` row of each Dataverse org, keyed by the org's `uniqueName` (lower case). */
export type OrganizationSettingsModel = Record<string, OrganizationRow>;

/** Columns `$select` accepts. */
export const ORGANIZATION_COLUMNS: readonly string[] = [
  'organizationid',
  'name',
  'iscontentsecuritypolicyenabled',
  'iscontentsecuritypolicyenabledforcanvas',
  'contentsecuritypolicyconfiguration',
  'contentsecuritypolicyconfigurationforcanvas',
  'contentsecuritypolicyreporturi',
  'isauditenabled',
  'isuseraccessauditenabled',
  'auditretentionperiodv2',
  'sessiontimeoutenabled',
  'sessiontimeoutinmins',
  'inactivitytimeoutenabled',
  'inactivitytimeoutinmins',
  'blockedattachments',
  'enableipbasedfirewallrule',
  'enableipbasedfirewallruleinauditmode',
  'allowediprangeforfirewall',
  'enableipbasedcookiebinding',
];

/**
 * Dataverse's default blocked attachment extensions, as a new environment returns them for
 * `GET organizations?$select=blockedattachments` (Dataverse developer docs "Block certain types of files": example
 * response and `RetrieveBlockedAttachments` sample).
 */
const DEFAULT_BLOCKED_ATTACHMENTS =
  'ade;adp;app;asa;ashx;asmx;asp;bas;bat;cdx;cer;chm;class;cmd;com;config;cpl;crt;csh;dll;exe;fxp;hlp;hta;htr;htw;ida;idc;idq;inf;ins;isp;its;jar;js;jse;ksh;lnk;mad;maf;mag;mam;maq;mar;mas;mat;mau;mav;maw;mda;mdb;mde;mdt;mdw;mdz;msc;msh;msh1;msh1xml;msh2;msh2xml;mshxml;msi;msp;mst;ops;pcd;pif;prf;prg;printer;pst;reg;rem;scf;scr;sct;shb;shs;shtm;shtml;soap;stm;tmp;url;vb;vbe;vbs;vsmacros;vss;vst;vsw;ws;wsc;wsf;wsh;svg';

/** The security columns of one org: `weak` (index 0), `strong` (index 1) or drawn from `rng`. */
function securityColumns(rng: ReturnType<typeof createRng>, which: 'weak' | 'strong' | 'random') {
  const pick = (p: number) => (which === 'weak' ? false : which === 'strong' ? true : rng.chance(p));
  const audit = pick(0.6);
  const firewall = pick(0.3);
  const sessionLong = which === 'weak' ? true : which === 'strong' ? false : rng.chance(0.2);
  const attachmentsTrimmed = which === 'weak' ? true : which === 'strong' ? false : rng.chance(0.25);
  return {
    isauditenabled: audit,
    isuseraccessauditenabled: audit && pick(0.7),
    auditretentionperiodv2: which === 'strong' ? -1 : rng.pick([30, 90, 365, -1]),
    sessiontimeoutenabled: sessionLong || pick(0.3),
    sessiontimeoutinmins: sessionLong ? rng.pick([2880, 10080, 43200]) : rng.pick([480, 720, 1440]),
    inactivitytimeoutenabled: pick(0.4),
    inactivitytimeoutinmins: which === 'strong' ? 30 : rng.pick([30, 60, 240]),
    blockedattachments: attachmentsTrimmed
      ? DEFAULT_BLOCKED_ATTACHMENTS.split(';')
          .filter((e) => !['exe', 'js', 'vbs', 'hta'].includes(e))
          .join(';')
      : DEFAULT_BLOCKED_ATTACHMENTS,
    enableipbasedfirewallrule: firewall,
    enableipbasedfirewallruleinauditmode: which === 'strong' ? false : firewall && rng.chance(0.3),
    allowediprangeforfirewall: firewall ? '203.0.113.0/24,2001:db8::/48' : null,
    enableipbasedcookiebinding: pick(0.3),
  };
}

const CONTENT_TYPE = 'application/json; odata.metadata=minimal';

/** The default (non-strict) model-driven CSP configuration JSON as the admin center stores it once customised. */
const CSP_CONFIGURATION = JSON.stringify({ 'frame-ancestors': { sources: [{ source: "'self'" }, { source: 'https://*.powerapps.com' }] } });

/**
 * Generates the `organization` row of every environment with Dataverse, from its own seeded generator (so no other
 * generated value changes). The first org does not enforce CSP and the second enforces it for model-driven and canvas
 * apps (both outcomes always exist when there are two orgs); the others are random (model-driven ~50 %, canvas ~40 %,
 * a report URI ~30 %). The security columns likewise: the first org has every one weak (auditing off, sessions of 2+
 * days, no inactivity timeout, .exe/.js/.vbs/.hta unblocked, IP firewall and cookie binding off), the second every
 * one strong, the others random.
 */
export function generateOrganizationSettings(environments: readonly Environment[], seed: number | string): OrganizationSettingsModel {
  const rng = createRng(`${String(seed)}:organization`);
  // The security columns draw from their own stream, so adding them changed no CSP value.
  const securityRng = createRng(`${String(seed)}:organization-security`);
  const out: OrganizationSettingsModel = {};
  let i = 0;
  for (const env of environments) {
    if (!env.dataverse) continue;
    const model = i === 0 ? false : i === 1 ? true : rng.chance(0.5);
    const canvas = i === 0 ? false : i === 1 ? true : rng.chance(0.4);
    const report = rng.chance(0.3);
    out[env.dataverse.uniqueName.toLowerCase()] = {
      organizationid: rng.guid(),
      name: env.dataverse.uniqueName,
      iscontentsecuritypolicyenabled: model,
      iscontentsecuritypolicyenabledforcanvas: canvas,
      contentsecuritypolicyconfiguration: model ? CSP_CONFIGURATION : null,
      contentsecuritypolicyconfigurationforcanvas: canvas ? CSP_CONFIGURATION : null,
      contentsecuritypolicyreporturi: report ? `https://csp-report.${env.dataverse.domainName}.example.com/report` : null,
      ...securityColumns(securityRng, i === 0 ? 'weak' : i === 1 ? 'strong' : 'random'),
    };
    i++;
  }
  return out;
}

/** What a collection by app `appId` should store: the rows of the orgs the app can read, by environment name. */
export interface OrganizationSettingsGroundTruth {
  /** Environment name → served row, for orgs where the app is an application user holding System Administrator. */
  readable: Record<string, OrganizationRow>;
  /** Environments with Dataverse the app cannot read (their slice errors). */
  unreadableEnvironments: number;
}

/** Ground truth of the `environmentSettings` stream for the tenant's connector app (or `appId`). */
export function organizationSettingsGroundTruth(tenant: Tenant, options: { appId?: string } = {}): OrganizationSettingsGroundTruth {
  const appId = options.appId ?? tenant.connectorAppId;
  const readable: Record<string, OrganizationRow> = {};
  let unreadableEnvironments = 0;
  for (const env of tenant.environments) {
    if (!env.dataverse) continue;
    const row = tenant.organizationSettings?.[env.dataverse.uniqueName.toLowerCase()];
    const appUser = env.dataverse.appUsers.find((a) => a.appId === appId);
    if (row && appUser?.roles.includes(SYSTEM_ADMINISTRATOR)) readable[env.name] = row;
    else unreadableEnvironments++;
  }
  return { readable, unreadableEnvironments };
}

function dvError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).header('content-type', CONTENT_TYPE).send({ error: { code, message } });
}

function findOrg(ctx: EmulatorContext, uniqueName: string): { tenant: Tenant; org: DataverseOrg } | undefined {
  const key = uniqueName.toLowerCase();
  for (const tenant of ctx.store.list()) {
    for (const env of tenant.environments) if (env.dataverse && env.dataverse.uniqueName.toLowerCase() === key) return { tenant, org: env.dataverse };
  }
  return undefined;
}

/** Registers `GET /{uniqueName}/api/data/v9.2/organizations` (mount under the `/dataverse` prefix). */
export function registerOrganization(app: FastifyInstance, ctx: EmulatorContext): void {
  app.get<{ Params: { org: string } }>('/:org/api/data/v9.2/organizations', async (req: FastifyRequest<{ Params: { org: string } }>, reply) => {
    const id = newId();
    reply.header('odata-version', '4.0').header('req_id', id).header('x-ms-service-request-id', id);
    const found = findOrg(ctx, req.params.org);
    if (!found) return dvError(reply, 404, '0x80072560', `The organization '${req.params.org}' does not exist.`);
    const resource = `${ctx.baseUrl()}/dataverse/${found.org.uniqueName}`;
    const result = await ctx.tokens.verify(bearerToken(req));
    if (!result.ok || result.claims.aud.replace(/\/+$/, '').toLowerCase() !== resource.toLowerCase() || result.claims.tid !== found.tenant.id) {
      return reply
        .code(401)
        .header('www-authenticate', `Bearer authorization_uri=${ctx.baseUrl()}/${found.tenant.id}/oauth2/authorize, resource_id=${resource}/`)
        .send();
    }
    let systemuserid: string;
    let sysAdmin: boolean;
    if (result.claims.idtyp === 'user') {
      const su = found.org.systemusers.find((s) => s.azureactivedirectoryobjectid === result.claims.oid);
      const admin = (result.claims.wids ?? []).some((w) => POWER_PLATFORM_ADMIN_ROLES.includes(w));
      if (!admin && !su) return dvError(reply, 403, '0x80072560', 'The user is not a member of the organization.');
      systemuserid = su?.systemuserid ?? result.claims.oid;
      sysAdmin = admin || (su !== undefined && rolesOf(found.org, su.systemuserid).includes(SYSTEM_ADMINISTRATOR));
    } else {
      const appUser = found.org.appUsers.find((a) => a.appId === result.claims.appid);
      if (!appUser) return dvError(reply, 403, '0x80072560', 'The user is not a member of the organization.');
      systemuserid = appUser.systemuserid;
      sysAdmin = appUser.roles.includes(SYSTEM_ADMINISTRATOR);
    }
    if (!sysAdmin) {
      return dvError(
        reply,
        403,
        '0x80040220',
        `Principal user (Id=${systemuserid}, type=8, roleCount=0, privilegeCount=0, accessMode='4', MetadataCachePrivilegesCount=0, businessUnitId=${found.org.businessUnitId}) is missing prvReadOrganization privilege (Id=${privilegeId('prvReadOrganization')}) on OTC=1019 for entity 'organization'.`,
      );
    }
    const select = parseSelect(queryParam(req, '$select'));
    const bad = select?.find((c) => !ORGANIZATION_COLUMNS.includes(c));
    if (bad) return dvError(reply, 400, '0x80060888', `Could not find a property named '${bad}' on type 'Microsoft.Dynamics.CRM.organization'.`);
    for (const opt of ['$filter', '$orderby', '$expand', '$apply', '$skip', '$skiptoken']) {
      if (queryParam(req, opt) !== undefined)
        return dvError(reply, 400, '0x80060888', `The emulator does not implement the query option '${opt}' on organizations.`);
    }
    const row = found.tenant.organizationSettings?.[found.org.uniqueName.toLowerCase()];
    const value = row
      ? [
          {
            '@odata.etag': `W/"${parseInt(row.organizationid.slice(0, 6), 16)}"`,
            ...(select ? Object.fromEntries(['organizationid', ...select].map((c) => [c, row[c as keyof OrganizationRow]])) : row),
          },
        ]
      : [];
    const context = `${resource}/api/data/v9.2/$metadata#organizations${select ? `(${select.join(',')})` : ''}`;
    return reply.code(200).header('content-type', CONTENT_TYPE).send({ '@odata.context': context, value });
  });
}
