import type { CloudProfile } from '../config/cloud.ts';

/**
 * The set-up of Vigil as a Copilot Studio external threat-detection provider, step by step, with the exact values the
 * customer's administrator enters (issue 19, point 4).
 *
 * Sources:
 * - https://learn.microsoft.com/microsoft-copilot-studio/external-security-provider — the admin connects a provider per
 *   environment in the Power Platform admin center (Security → Threat detection → Additional threat detection), with
 *   an Entra application that has a federated identity credential, the endpoint link, and the error behaviour; saving
 *   calls `/validate`. Only agents with generative orchestration call the provider.
 * - https://learn.microsoft.com/graph/api/application-post-federatedidentitycredentials — the credential's `name`,
 *   `issuer`, `subject`, `audiences` (`api://AzureADTokenExchange`); https://learn.microsoft.com/graph/api/application-post-applications
 *   and https://learn.microsoft.com/graph/api/serviceprincipal-post-serviceprincipals — the application and its service
 *   principal.
 * - The subject Copilot Studio presents, as Microsoft's `Create-CopilotWebhookApp` script (PowerShell Gallery) builds
 *   it and independent implementers document it: `/eid1/c/pub/t/{tenant}/a/{app}/{endpoint}` where `{tenant}` and
 *   `{app}` are the base64url (unpadded) of the GUIDs' bytes in .NET `Guid.ToByteArray()` order (Python
 *   `uuid.bytes_le`), `{app}` being Copilot Studio's first-party application `9d8f559b-5984-46a4-902a-ad4271e83efa`
 *   ("Power Virtual Agents Service" in https://learn.microsoft.com/entra/identity/monitoring-health/reference-service-principal-table),
 *   and `{endpoint}` the base64url of the endpoint's base URL (UTF-8, no trailing slash).
 * - Implementers report that token issuance fails with AADSTS500011 unless the application's Application ID URI is the
 *   endpoint's base URL: Copilot Studio asks for a token whose audience is the base URL.
 */

/** Copilot Studio's first-party application ("Power Virtual Agents Service"), the `a/` part of the subject. */
const COPILOT_STUDIO_APP_ID = '9d8f559b-5984-46a4-902a-ad4271e83efa';

/** The audience of every federated identity credential Entra ID exchanges (Graph documentation's recommended value). */
const TOKEN_EXCHANGE_AUDIENCE = 'api://AzureADTokenExchange';

/**
 * The bytes of a GUID in .NET `Guid.ToByteArray()` order: the first three groups little-endian, the last two as written.
 * @throws TypeError when `guid` is not a GUID.
 */
function guidBytesLe(guid: string): Buffer {
  const m = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/i.exec(guid.trim());
  if (!m) throw new TypeError(`not a GUID: ${guid}`);
  const le = (hex: string) => Buffer.from(hex, 'hex').reverse();
  return Buffer.concat([le(m[1]!), le(m[2]!), le(m[3]!), Buffer.from(m[4]! + m[5]!, 'hex')]);
}

/** The endpoint base URL as Copilot Studio and the credential's subject use it: no trailing slash. */
export function normaliseBaseUrl(baseUrl: string): string {
  return baseUrl.trim().replace(/\/+$/, '');
}

/**
 * The federated identity credential's subject for a tenant and an endpoint base URL (see the module's sources).
 * @throws TypeError when `tenantId` is not a GUID.
 */
export function federatedSubject(tenantId: string, baseUrl: string): string {
  const b64 = (b: Buffer) => b.toString('base64url');
  return `/eid1/c/pub/t/${b64(guidBytesLe(tenantId))}/a/${b64(guidBytesLe(COPILOT_STUDIO_APP_ID))}/${b64(Buffer.from(normaliseBaseUrl(baseUrl), 'utf8'))}`;
}

/** One Microsoft Graph call of the set-up, as an administrator would send it (Graph Explorer, `az rest`). */
interface GraphCall {
  method: 'POST';
  /** Relative to the cloud's Graph base URL, `v1.0/...`; `{applicationObjectId}` is the Object ID the first call returns. */
  path: string;
  body: Record<string, unknown>;
}

/** The whole set-up for one integration's endpoint. */
export interface ProtectionSetup {
  tenantId: string;
  /** The endpoint link to enter in the Power Platform admin center (Copilot Studio appends `/validate` and `/analyze-tool-execution`). */
  baseUrl: string;
  /** The Entra application's Application ID URI. */
  applicationIdUri: string;
  federatedCredential: { name: string; issuer: string; subject: string; audiences: string[] };
  /** The application (client) ID configured in Vigil, or null when not configured yet. */
  appId: string | null;
  /** Steps in order; each names where it is done and what to enter. */
  steps: { title: string; detail: string[] }[];
  /** The Graph calls that create the application, its service principal and the credential. */
  graph: GraphCall[];
  /** A PowerShell script (Microsoft Graph PowerShell SDK) doing the same. */
  powershell: string;
}

/** Input of {@link protectionSetup}. */
export interface ProtectionSetupInput {
  cloud: Pick<CloudProfile, 'authorityHost'>;
  tenantId: string;
  /** `{apiUrl}/protection/{endpointId}`. */
  baseUrl: string;
  appId: string | null;
  /** Display name of the Entra application. @default 'Vigil threat detection' */
  displayName?: string;
}

/**
 * The set-up steps, values, Graph calls and PowerShell script for an endpoint.
 * @throws TypeError when `tenantId` is not a GUID.
 */
export function protectionSetup(i: ProtectionSetupInput): ProtectionSetup {
  const baseUrl = normaliseBaseUrl(i.baseUrl);
  const displayName = i.displayName ?? 'Vigil threat detection';
  const tenantId = i.tenantId.toLowerCase();
  const credential = {
    name: 'vigil-copilot-studio',
    issuer: `${i.cloud.authorityHost.replace(/\/+$/, '')}/${tenantId}/v2.0`,
    subject: federatedSubject(tenantId, baseUrl),
    audiences: [TOKEN_EXCHANGE_AUDIENCE],
  };
  const graph: GraphCall[] = [
    { method: 'POST', path: 'v1.0/applications', body: { displayName, signInAudience: 'AzureADMyOrg', identifierUris: [baseUrl] } },
    { method: 'POST', path: 'v1.0/servicePrincipals', body: { appId: '{appId}' } },
    { method: 'POST', path: 'v1.0/applications/{applicationObjectId}/federatedIdentityCredentials', body: credential },
  ];
  const q = (s: string) => `'${s.replace(/'/g, "''")}'`;
  const powershell = [
    '# Microsoft Graph PowerShell SDK; run as an administrator who can create applications in the tenant.',
    `Connect-MgGraph -TenantId ${q(tenantId)} -Scopes 'Application.ReadWrite.All'`,
    `$app = New-MgApplication -DisplayName ${q(displayName)} -SignInAudience 'AzureADMyOrg' -IdentifierUris @(${q(baseUrl)})`,
    'New-MgServicePrincipal -AppId $app.AppId | Out-Null',
    `New-MgApplicationFederatedIdentityCredential -ApplicationId $app.Id -Name ${q(credential.name)} -Issuer ${q(credential.issuer)} -Subject ${q(credential.subject)} -Audiences @(${q(TOKEN_EXCHANGE_AUDIENCE)}) | Out-Null`,
    '"Application (client) ID: $($app.AppId)"',
  ].join('\n');
  const steps = [
    {
      title: 'Create the Entra application (single tenant) in the tenant',
      detail: [
        `Microsoft Entra admin center → App registrations → New registration: name "${displayName}", "Accounts in this organizational directory only".`,
        `Expose an API → Application ID URI: ${baseUrl} (Copilot Studio asks for a token for this audience; another value fails with AADSTS500011).`,
        'No client secret or certificate: Copilot Studio signs in with the federated credential below.',
      ],
    },
    {
      title: 'Add the federated identity credential',
      detail: [
        'Certificates & secrets → Federated credentials → Add credential → scenario "Other issuer".',
        `Issuer: ${credential.issuer}`,
        `Type: Explicit subject identifier. Value: ${credential.subject}`,
        `Audience: ${TOKEN_EXCHANGE_AUDIENCE}`,
        'Or run the PowerShell script of this set-up, or send its Microsoft Graph calls.',
      ],
    },
    {
      title: 'Tell Vigil the application (client) ID',
      detail: i.appId
        ? [`Configured: ${i.appId}. Vigil accepts only tokens of tenant ${tenantId} issued to this application.`]
        : ['Give Vigil the application (client) ID: enabling protection again with it. Until then every call is refused.'],
    },
    {
      title: 'Connect each environment in the Power Platform admin center',
      detail: [
        'Security → Threat detection → Additional threat detection → select the environment → Set up.',
        'Allow sharing data with the provider; enter the application (client) ID above and the endpoint link:',
        `  ${baseUrl}`,
        'Error behaviour: "Allow" lets agents go on when Vigil does not answer within 1,000 ms; "Block" stops them.',
        'Saving calls the endpoint’s /validate; this set-up’s report shows whether Vigil received it, and the analyses per environment.',
        'Only agents with generative orchestration call the provider; changing the application ID takes about a minute to apply.',
      ],
    },
  ];
  return { tenantId, baseUrl, applicationIdUri: baseUrl, federatedCredential: credential, appId: i.appId, steps, graph, powershell };
}
