import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { VigilError } from '../core/errors.ts';

/**
 * Cloud profiles: the one table of upstream base URLs and token resources. Nothing else in Vigil hard-codes a
 * Microsoft host (DESIGN.md). `public` is built in; sovereign clouds come later; `custom` is read from a JSON file
 * named by `VIGIL_ENDPOINTS_FILE` (the emulator writes one).
 *
 * Sources: Microsoft identity platform national clouds (entra-docs `authentication-national-cloud.md`), Graph
 * deployments (`concepts/deployments.md`), Power Platform hosts and the BAP audience `https://service.powerapps.com`
 * (microsoft/terraform-provider-power-platform `internal/constants/constants.go`), Office 365 Management Activity API
 * reference, Power BI REST swagger, Azure Resource Manager. See shared/reference/microsoft-apis.md §1, §3–§8.
 */

/** One upstream API: where to call it and which resource to ask a token for (scope = `{resource}/.default`). */
interface ApiEndpoint {
  /** Base URL without a trailing slash, e.g. `https://graph.microsoft.com`. */
  baseUrl: string;
  /** Token resource (application ID URI), e.g. `https://graph.microsoft.com`. */
  resource: string;
}

/** A complete set of upstream endpoints. */
export interface CloudProfile {
  /** `public`, or `custom` when read from a file. */
  name: string;
  /** Microsoft Entra authority host, e.g. `https://login.microsoftonline.com` (no trailing slash). */
  authorityHost: string;
  /**
   * Origin of the issuer of v1.0 access tokens (`iss` = `{v1IssuerHost}/{tid}/`): `https://sts.windows.net` in the
   * public cloud (https://learn.microsoft.com/entra/identity-platform/access-token-claims-reference, `iss`), and
   * `https://sts.chinacloudapi.cn` in Microsoft Azure operated by 21Vianet. Absent: {@link DEFAULT_V1_ISSUER_HOST}.
   */
  v1IssuerHost?: string;
  graph: ApiEndpoint;
  /** Power Platform admin API (BAP). */
  bap: ApiEndpoint;
  /** Power Apps admin API (`api.powerapps.com`: apps, connectors, connections); token audience as BAP. */
  powerApps: ApiEndpoint;
  /** Power Automate admin API (`api.flow.microsoft.com`: flows). */
  flow: ApiEndpoint;
  /**
   * Power Platform API (`api.powerplatform.com`, token audience `https://api.powerplatform.com`): Copilot Studio's admin
   * actions (agent quarantine, https://learn.microsoft.com/microsoft-copilot-studio/admin-quarantine-api). Absent from
   * an endpoints file that does not name it: containment is then not available.
   */
  powerPlatform?: ApiEndpoint;
  managementActivity: ApiEndpoint;
  powerBi: ApiEndpoint;
  arm: ApiEndpoint;
  /**
   * Dataverse instance URLs come from BAP's `linkedEnvironmentMetadata.instanceUrl`; a token is only ever sent to an
   * instance under one of these URL prefixes (same origin, path at a segment boundary) or with a host ending in one of
   * {@link dataverseHostSuffixes} — the link policy, `platform/http/links.ts`.
   */
  dataverseUrlPrefixes: string[];
  /** Host suffixes accepted for Dataverse instance URLs (`.dynamics.com` in the public cloud), at a label boundary. */
  dataverseHostSuffixes: string[];
  /** PEM of an extra certificate authority to trust for these endpoints only (the emulator's), or null. */
  caPem: string | null;
}

/** The v1.0 token issuer origin of the public cloud (and of profiles that do not name one). */
export const DEFAULT_V1_ISSUER_HOST = 'https://sts.windows.net';

/** The Microsoft public (global) cloud. */
export const PUBLIC_CLOUD: CloudProfile = Object.freeze({
  name: 'public',
  authorityHost: 'https://login.microsoftonline.com',
  v1IssuerHost: DEFAULT_V1_ISSUER_HOST,
  graph: { baseUrl: 'https://graph.microsoft.com', resource: 'https://graph.microsoft.com' },
  bap: { baseUrl: 'https://api.bap.microsoft.com', resource: 'https://service.powerapps.com' },
  powerApps: { baseUrl: 'https://api.powerapps.com', resource: 'https://service.powerapps.com' },
  flow: { baseUrl: 'https://api.flow.microsoft.com', resource: 'https://service.flow.microsoft.com' },
  powerPlatform: { baseUrl: 'https://api.powerplatform.com', resource: 'https://api.powerplatform.com' },
  managementActivity: { baseUrl: 'https://manage.office.com', resource: 'https://manage.office.com' },
  powerBi: { baseUrl: 'https://api.powerbi.com', resource: 'https://analysis.windows.net/powerbi/api' },
  arm: { baseUrl: 'https://management.azure.com', resource: 'https://management.azure.com' },
  dataverseUrlPrefixes: [],
  dataverseHostSuffixes: ['.dynamics.com'],
  caPem: null,
}) as CloudProfile;

const httpsUrl = z
  .string()
  .url()
  .refine((u) => u.startsWith('https://'), { message: 'must be an https:// URL' })
  .transform((u) => u.replace(/\/+$/, ''));
const endpointSchema = z.object({ baseUrl: httpsUrl, resource: z.string().min(1) });
const customFileSchema = z.object({
  name: z.string().default('custom'),
  authorityHost: httpsUrl,
  v1IssuerHost: httpsUrl.optional(),
  graph: endpointSchema,
  bap: endpointSchema,
  powerApps: endpointSchema,
  flow: endpointSchema,
  powerPlatform: endpointSchema.optional(),
  managementActivity: endpointSchema,
  powerBi: endpointSchema,
  arm: endpointSchema,
  dataverseUrlPrefixes: z.array(z.string().url()).default([]),
  dataverseHostSuffixes: z.array(z.string()).default([]),
  caFile: z.string().nullable().optional(),
});

/**
 * Reads a custom endpoint set from a JSON file (format: see docs/configuration.md and the emulator's
 * `writeEndpointsFile`). A relative `caFile` is resolved against the file's folder.
 *
 * @throws VigilError `configuration` / `ENDPOINTS_FILE_INVALID` naming the file and the offending field.
 */
export function loadCustomProfile(path: string): CloudProfile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new VigilError('ENDPOINTS_FILE_INVALID', `Cannot read the endpoints file ${path}: ${(e as Error).message}`, {
      field: 'VIGIL_ENDPOINTS_FILE',
      remediation: 'Point VIGIL_ENDPOINTS_FILE at a readable JSON file (see docs/configuration.md).',
    });
  }
  const parsed = customFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new VigilError('ENDPOINTS_FILE_INVALID', `Endpoints file ${path}: field '${issue.path.join('.')}' ${issue.message}`, {
      field: `VIGIL_ENDPOINTS_FILE:${issue.path.join('.')}`,
      remediation: 'Fix the field in the endpoints file (see docs/configuration.md).',
    });
  }
  const { caFile, ...rest } = parsed.data;
  const caPem = caFile ? readFileSync(isAbsolute(caFile) ? caFile : resolve(dirname(path), caFile), 'utf8') : null;
  return Object.freeze({ ...rest, caPem });
}

/**
 * The profile to use: `custom` from `VIGIL_ENDPOINTS_FILE` when set, else the named built-in one.
 *
 * @throws VigilError `configuration` for an unknown cloud name or a bad endpoints file.
 */
export function resolveCloudProfile(cloud: string, endpointsFile: string | undefined): CloudProfile {
  if (endpointsFile) return loadCustomProfile(endpointsFile);
  if (cloud === 'public') return PUBLIC_CLOUD;
  throw new VigilError('UNKNOWN_CLOUD', `Unknown cloud '${cloud}'.`, {
    field: 'VIGIL_CLOUD',
  });
}

/**
 * What to check when `host` of the cloud profile cannot be reached (the remediation of `UPSTREAM_UNREACHABLE`):
 * the endpoints file that named it (the emulator's, usually) or the public cloud's network access.
 * @param endpointsFile the value of VIGIL_ENDPOINTS_FILE, if any.
 */
export function unreachableRemediation(cloud: CloudProfile, endpointsFile: string | undefined, host: string): string {
  if (cloud.name !== 'public') {
    const source = endpointsFile ? `VIGIL_ENDPOINTS_FILE=${endpointsFile}` : 'the emulator of this command';
    return `${host} comes from ${source}. Is that emulator (or those endpoints) still running? Start one with \`vigil emulator\` and export what it prints, or unset VIGIL_ENDPOINTS_FILE to use Microsoft's public cloud.`;
  }
  return `${host} is a host of Microsoft's public cloud (VIGIL_CLOUD=public, VIGIL_ENDPOINTS_FILE not set): check this machine's DNS, firewall and proxy (docs/deployment.md lists every host Vigil calls). To try Vigil without a tenant, run \`vigil emulator\` and export the VIGIL_ENDPOINTS_FILE it prints; data added by \`vigil demo\` belongs to its emulator, which stopped with it.`;
}
