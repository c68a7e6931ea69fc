/**
 * The catalogue of every error code Vigil throws on purpose: its kind, and from the kind (in one place, here) the
 * CLI's exit code and the API's HTTP status. A code missing from the catalogue does not compile
 * (`VigilError`'s code parameter is {@link ErrorCode}); `test/unit/error-catalogue.test.ts` checks its consistency.
 *
 * `core/` imports nothing: these types are shared by every layer.
 */

import type { ActionNamer } from './actions.ts';

/** Broad families of failure; they give the CLI's exit code and the API's HTTP status. */
export type ErrorKind =
  /** Bad input from the person or script calling Vigil (a field, a flag, a file). */
  | 'invalid-input'
  /** A named object (integration, run) does not exist. */
  | 'not-found'
  /** An upstream rejected our credentials or the tenant/app identity (AADSTS errors). */
  | 'authentication'
  /** An upstream answered 403: a permission, role or registration is missing. */
  | 'authorization'
  /** An upstream failed after every retry (5xx, throttling, network). */
  | 'upstream'
  /** A conflict with Vigil's own state (a collection already running). */
  | 'conflict'
  /** Configuration of Vigil itself is wrong (master key, endpoints file). */
  | 'configuration'
  /** A bug. */
  | 'internal';

/** A catalogue remediation naming steps through the surface's wording (the field namer is unused here). */
type CatalogueRemediation = string | ((name: (field: string) => string, act: ActionNamer) => string);

/** One entry of {@link ERROR_CATALOGUE}. */
interface CatalogueEntry {
  /** The kind: one per code (a code that meant two things where it was met is split in two, as TENANT_NOT_FOUND). */
  readonly kind: ErrorKind;
  /**
   * The error concerns the caller of Vigil's API itself (its session, key or role), not credentials or permissions
   * it handed to Vigil: the API answers 401/403 instead of 422.
   */
  readonly caller?: true;
  /**
   * The remediation when the thrower gives none (one fixed text fits every occurrence): plain text, or text naming
   * the step to take through the surface's {@link ActionNamer} (never a CLI command line).
   */
  readonly remediation?: CatalogueRemediation;
}

/**
 * Every code with its kind, and its remediation where one fixed text fits every occurrence. Grouped by where the
 * error comes from.
 * Microsoft Entra ID codes keep Microsoft's name (`AADSTS<n>`): the ones Vigil explains are listed, any other is
 * an {@link AadstsCode} of kind `authentication`.
 */
export const ERROR_CATALOGUE = {
  // Input of a person or script.
  /** A field or flag holds a wrong value (the generic input error). */
  INVALID_INPUT: { kind: 'invalid-input' },
  /**
   * A Copilot Studio `analyze-tool-execution` body Vigil cannot judge: not a JSON object, or without `toolDefinition`
   * (protection/request.ts). Any other odd content is accepted and judged.
   */
  PROTECTION_REQUEST_INVALID: {
    kind: 'invalid-input',
    remediation:
      'Send the analyze-tool-execution body Copilot Studio documents: a JSON object with plannerContext, toolDefinition, inputValues and conversationMetadata.',
  },
  /** A paging cursor this API did not issue. */
  INVALID_CURSOR: { kind: 'invalid-input' },
  INVALID_TENANT_ID: { kind: 'invalid-input', remediation: 'Copy the Tenant ID from Microsoft Entra admin center > Overview.' },
  INVALID_ROLE: { kind: 'invalid-input', remediation: 'Use admin to manage integrations, users and API keys; viewer to read.' },
  INVALID_ORGANIZATION: { kind: 'invalid-input', remediation: 'Give the customer organization a short name, e.g. "Contoso".' },
  INVALID_EMAIL: { kind: 'invalid-input', remediation: 'Give the address the person signs in with.' },
  INVALID_NAME: { kind: 'invalid-input', remediation: 'Name the key after what uses it, e.g. "sentinel-connector".' },
  INVALID_EXPIRY: { kind: 'invalid-input', remediation: 'Give an ISO 8601 date such as 2027-06-30, or none for a key that lasts until revoked.' },
  WEAK_PASSWORD: { kind: 'invalid-input', remediation: 'Use a passphrase of several words; length matters more than symbols.' },
  /** A change of a portal user that names nothing to change. */
  NO_CHANGE: { kind: 'invalid-input', remediation: 'Give the role (admin or viewer), or disable or enable the account.' },
  NUL_IN_INPUT: { kind: 'invalid-input' },
  /** An id prefix matches several objects. */
  AMBIGUOUS_ID: { kind: 'invalid-input' },
  UNKNOWN_REGION: { kind: 'invalid-input' },
  /** A framework or peer baseline the compliance catalogue lacks. */
  UNKNOWN_FRAMEWORK: { kind: 'invalid-input' },
  OUTPUT_NOT_WRITABLE: { kind: 'invalid-input' },
  /** `vigil serve` may not listen on that host or port. */
  LISTEN_REFUSED: { kind: 'invalid-input' },
  /** An application id for the operator-managed app. */
  APPLICATION_ID_GIVEN: { kind: 'invalid-input' },
  NOT_CUSTOMER_APP: {
    kind: 'invalid-input',
    remediation: "The service operator rotates the managed application's credentials (VIGIL_MANAGED_APP_CLIENT_SECRET).",
  },
  OBJECT_ID_MISMATCH: { kind: 'invalid-input' },
  DOMAIN_OF_ANOTHER_TENANT: {
    kind: 'invalid-input',
    remediation: 'Check the tenant id and the primary domain in Microsoft Entra admin center > Overview of the tenant you mean to connect.',
  },
  /**
   * No tenant has the id or domain a person typed (OpenID discovery answered AADSTS90002): their input is wrong. A
   * token request refused with AADSTS90002 (for a tenant id handed over with credentials) stays `AADSTS90002`.
   */
  TENANT_NOT_FOUND: {
    kind: 'invalid-input',
    remediation: 'Give the Tenant ID or the primary domain shown in Microsoft Entra admin center > Overview of the customer tenant.',
  },
  TENANT_MISMATCH: { kind: 'invalid-input', remediation: 'Give the tenant id (GUID) shown in the Microsoft Entra admin center > Overview.' },
  SCAN_BATCH_SIZE: { kind: 'invalid-input' },
  POWER_BI_WINDOW: { kind: 'invalid-input' },
  POWER_BI_CURSOR: { kind: 'invalid-input' },

  // Objects by id or name.
  INTEGRATION_NOT_FOUND: { kind: 'not-found', remediation: (_, act) => `To see the ids, ${act({ do: 'listIntegrations' })}.` },
  FINDING_NOT_FOUND: { kind: 'not-found' },
  ALERT_NOT_FOUND: { kind: 'not-found' },
  RUN_NOT_FOUND: { kind: 'not-found' },
  AGENT_NOT_FOUND: { kind: 'not-found' },
  /** No live Power Platform environment with this id in the integration's inventory. */
  ENVIRONMENT_NOT_FOUND: { kind: 'not-found' },
  /** No audit event with this record Id in the organization's integrations. */
  EVENT_NOT_FOUND: { kind: 'not-found' },
  /** No step of this conversation was recorded for the integration (runtime protection, issue 19). */
  CONVERSATION_NOT_FOUND: { kind: 'not-found' },
  /** An agent step (a recorded `analyze-tool-execution` call) that does not exist in the integration. */
  AGENT_STEP_NOT_FOUND: { kind: 'not-found' },
  API_KEY_NOT_FOUND: { kind: 'not-found', remediation: (_, act) => `To see the keys, ${act({ do: 'listApiKeys' })}.` },
  ORGANIZATION_NOT_FOUND: { kind: 'not-found' },
  /** No portal user with this id (or address) in the caller's organization. */
  USER_NOT_FOUND: { kind: 'not-found', remediation: (_, act) => `To see the users, ${act({ do: 'listUsers' })}.` },
  TENANT_NOT_BOUND: { kind: 'not-found', remediation: (_, act) => `To see the bound tenants, ${act({ do: 'listTenants' })}.` },

  // Vigil's own state.
  INTEGRATION_EXISTS: { kind: 'conflict' },
  TENANT_BOUND_ELSEWHERE: { kind: 'conflict' },
  ORGANIZATION_EXISTS: {
    kind: 'conflict',
    remediation: (_, act) => `Use the existing organization, or pick another name. To see them, ${act({ do: 'listOrganizations' })}.`,
  },
  EMAIL_UNAVAILABLE: {
    kind: 'conflict',
    remediation: (_, act) =>
      `Use another address for this person; an address that already has an account keeps it. To learn where, ${act({ do: 'findAccount' })}.`,
  },
  /** The change would leave an organization without an enabled admin. */
  LAST_ADMIN: { kind: 'conflict', remediation: 'Make another user an admin first, then change this one.' },
  NOT_SUPPRESSED: { kind: 'conflict' },
  COLLECTION_RUNNING: { kind: 'conflict' },
  COLLECTION_ABORTED: { kind: 'conflict' },
  SCAN_ABANDONED: { kind: 'conflict' },
  SERVE_ALREADY_RUNNING: { kind: 'conflict' },
  PORT_IN_USE: { kind: 'conflict' },
  DEMO_DIR_IN_USE: { kind: 'conflict' },

  // The caller of Vigil's API.
  AUTHENTICATION_REQUIRED: {
    kind: 'authentication',
    caller: true,
    remediation: (_, act) =>
      `Portal: sign in again (a session ends after a while idle, and after a fixed time in any case). Scripts: send "Authorization: Bearer vgl_…" with an API key. To get one, ${act({ do: 'createApiKey' })}.`,
  },
  SIGN_IN_FAILED: { kind: 'authentication', caller: true },
  FORBIDDEN_ROLE: { kind: 'authorization', caller: true, remediation: 'Ask an admin of your organization to do it, or to give you the admin role.' },
  CSRF_FAILED: { kind: 'authorization', caller: true },

  // Credentials and permissions in a customer's tenant.
  ADMIN_SIGN_IN_FAILED: { kind: 'authentication' },
  /** A consent sign-in's ID token proved nothing. */
  ID_TOKEN_REJECTED: { kind: 'authentication' },
  /** A caller of a runtime-protection endpoint presented no valid token of the customer's tenant and application. */
  CALLER_TOKEN_REJECTED: {
    kind: 'authentication',
    remediation:
      'In the Power Platform admin center (Security > Threat detection), check the Entra application ID and the endpoint link of the environment; the application must be single-tenant with the federated identity credential Copilot Studio documents, and its Application ID URI must equal the endpoint link. Compare with the application ID and base URL the endpoint was created with.',
  },
  /** A runtime-protection endpoint already exists for the integration. */
  PROTECTION_ENDPOINT_EXISTS: { kind: 'conflict' },
  DEVICE_CODE_DECLINED: { kind: 'authentication', remediation: 'Run the command again and approve the sign-in.' },
  DEVICE_CODE_EXPIRED: { kind: 'authentication', remediation: 'Run the command again and finish the sign-in within 15 minutes.' },
  /** An integration whose secret was refused is not collected. */
  CREDENTIALS_EXPIRED: { kind: 'authentication' },
  ADMIN_ROLE_MISSING: { kind: 'authorization' },
  /**
   * Containment (Copilot Studio agent quarantine, issue 19) cannot be done: the delegated token lacks the Power Platform
   * API permission `CopilotStudio.AdminActions.Invoke`, the signed-in user holds none of the roles the API requires, an
   * app-only token was offered, or the cloud profile names no Power Platform API. The thrower names which, with the fix.
   */
  CONTAINMENT_NOT_AVAILABLE: { kind: 'authorization' },
  /** Too many containment sign-ins started from the API are still waiting for an administrator (issue 19). */
  CONTAINMENT_BUSY: { kind: 'conflict' },
  CONSENT_MISSING: { kind: 'authorization' },
  TENANT_NOT_PROVEN: { kind: 'authorization' },
  AZURE_READER_MISSING: { kind: 'authorization' },
  POWER_BI_NOT_AUTHORIZED: { kind: 'authorization' },
  /** The client secret ID was given, not its value. */
  AADSTS7000215: { kind: 'authentication' },
  /** The client secret expired. */
  AADSTS7000222: { kind: 'authentication' },
  /** No client secret sent. */
  AADSTS7000218: { kind: 'invalid-input' },
  /** No such application in the tenant. */
  AADSTS700016: { kind: 'authentication' },
  /** No such tenant: a token request refused (a tenant typed by a person and not found is `TENANT_NOT_FOUND`). */
  AADSTS90002: { kind: 'authentication' },
  /** A wrong scope. */
  AADSTS70011: { kind: 'invalid-input' },
  /** The resource is not in the tenant. */
  AADSTS500011: { kind: 'authorization' },
  /** Wrong username or password. */
  AADSTS50126: { kind: 'authentication', remediation: "Check the administrator's user principal name and password, or use the device-code sign-in." },
  /** MFA or Conditional Access (50076, 50079, 53003, 50158). */
  AADSTS50076: { kind: 'authentication' },
  AADSTS50079: { kind: 'authentication' },
  AADSTS53003: { kind: 'authentication' },
  AADSTS50158: { kind: 'authentication' },

  // Upstream failures.
  UPSTREAM_UNREACHABLE: { kind: 'upstream' },
  NETWORK_ERROR: { kind: 'upstream', remediation: 'Check network access to the upstream host; Vigil retried with backoff.' },
  INVALID_BODY: { kind: 'upstream' },
  /** A link off the API's hosts (the link policy). */
  FOREIGN_LINK: { kind: 'upstream' },
  TOKEN_EMPTY: { kind: 'upstream' },
  TOKEN_REQUEST_FAILED: { kind: 'upstream' },
  DISCOVERY_INVALID: { kind: 'upstream' },
  ID_TOKEN_MISSING: { kind: 'upstream' },
  BATCH_RESPONSE_MISSING: { kind: 'upstream' },
  /** No longer raised (throttling inside a `$batch` is waited out since issue 18); kept for runs recorded before. */
  BATCH_THROTTLED: { kind: 'upstream', remediation: 'Collect again later; Graph limits Teams app reads per tenant.' },
  POWER_BI_SCAN_FAILED: { kind: 'upstream' },
  POWER_BI_SCAN_TIMEOUT: { kind: 'upstream', remediation: 'Power BI may be busy; the next collection resumes from this batch.' },
  POWER_BI_SCAN_ID_MISSING: { kind: 'upstream' },
  POWER_BI_PAGING_LOOP: { kind: 'upstream' },
  /** Fabric List Tenant Settings answered 404: no Power BI / Fabric service in the tenant, or not in this cloud. */
  POWER_BI_TENANT_SETTINGS_UNAVAILABLE: { kind: 'upstream' },
  ROOT_BUSINESS_UNIT_NOT_FOUND: { kind: 'upstream' },
  APPLICATION_USER_NOT_CREATED: { kind: 'upstream' },
  ROLE_NOT_FOUND: { kind: 'upstream' },
  REGISTRATION_NOT_CONFIRMED: {
    kind: 'upstream',
    remediation: (_, act) => `Wait a minute, then ${act({ do: 'verifyIntegration' })}; registration can take a moment to apply.`,
  },
  COLLECTION_FAILED: { kind: 'upstream' },

  // Configuration of Vigil itself.
  CONFIG_INVALID: { kind: 'configuration' },
  /** The data directory (or another directory Vigil keeps files in) cannot be created where it was asked for. */
  DATA_DIR_UNUSABLE: {
    kind: 'configuration',
    remediation: 'Choose a directory on a local file system that the user running Vigil can write to (VIGIL_DATA_DIR), or create it first.',
  },
  ENDPOINTS_FILE_INVALID: { kind: 'configuration' },
  UNKNOWN_CLOUD: {
    kind: 'configuration',
    remediation: "Use 'public', or set VIGIL_ENDPOINTS_FILE to a custom endpoints file. Sovereign clouds come in a later release.",
  },
  CRON_INVALID: { kind: 'configuration', remediation: "Use five fields, minute hour day month weekday, e.g. '0 * * * *' for hourly." },
  CERTIFICATE_INVALID: { kind: 'configuration', remediation: 'Concatenate the certificate and its unencrypted private key into one PEM file (mode 0600).' },
  MASTER_KEY_MISSING: { kind: 'configuration' },
  MASTER_KEY_INVALID: {
    kind: 'configuration',
    remediation: 'Generate one with `openssl rand -base64 32` and set VIGIL_MASTER_KEY to it, or unset it to use the key file in the data directory.',
  },
  MASTER_KEY_MISMATCH: {
    kind: 'configuration',
    remediation: 'Start Vigil with the master key (VIGIL_MASTER_KEY or the data directory key file) that was in use when the secret was stored.',
  },
  MASTER_KEY_FILE_UNSAFE: { kind: 'configuration' },
  SECRET_TAMPERED: { kind: 'configuration', remediation: 'Store the secret again (remove and add the integration).' },
  NO_SECRET: { kind: 'configuration', remediation: 'Remove and add the integration again.' },
  NO_SINK: { kind: 'configuration' },
  MANAGED_APP_NOT_CONFIGURED: { kind: 'configuration' },
  SCHEMA_INVALID: { kind: 'configuration', remediation: 'Use lower-case letters, digits and underscores.' },
  DATABASE_UNREACHABLE: {
    kind: 'configuration',
    remediation: 'Check DATABASE_URL (postgres://user:password@host:5432/database) and that the server accepts connections.',
  },
  MIGRATION_FAILED: { kind: 'configuration' },
  WORKER_NEEDS_POSTGRES: { kind: 'configuration' },

  // Bugs.
  /** Anything not thrown on purpose. */
  INTERNAL: { kind: 'internal' },
  NO_PRINCIPAL: { kind: 'internal' },
  CHECK_INVALID: { kind: 'internal' },
  DETECTION_INVALID: { kind: 'internal' },
} as const satisfies Record<string, CatalogueEntry>;

/** A code listed in {@link ERROR_CATALOGUE}. */
export type CataloguedCode = keyof typeof ERROR_CATALOGUE;

/** A Microsoft Entra ID code Vigil passes on as Microsoft names it (`AADSTS<n>`), kind `authentication` unless listed. */
export type AadstsCode = `AADSTS${string}`;

declare const upstream: unique symbol;

/**
 * An upstream's own error code passed on (`Authorization_RequestDenied`, `0x80072560`, or `HTTP_<status>`), made
 * with {@link upstreamCode}: the family of `UpstreamHttpError`, whose kind follows the HTTP status.
 */
export type UpstreamCode = string & { readonly [upstream]: true };

/** Kinds an {@link UpstreamCode} may be thrown with. */
export type UpstreamKind = 'not-found' | 'authentication' | 'authorization' | 'upstream';

/** Marks an upstream's error code as one Vigil passes on unchanged. */
export function upstreamCode(code: string): UpstreamCode {
  return code as UpstreamCode;
}

/** Every code a {@link VigilError} can carry. */
export type ErrorCode = CataloguedCode | AadstsCode | UpstreamCode;

/** Exit codes of the CLI, documented in `vigil --help`. */
export const EXIT = {
  ok: 0,
  internal: 1,
  invalidInput: 2,
  /** Microsoft Entra ID or an upstream refused the credentials or a permission; nothing was saved. */
  denied: 3,
  notFound: 4,
  conflict: 5,
  /** An upstream failed after retries, or a collection failed. */
  upstream: 6,
} as const;

const KIND_EXIT: Record<ErrorKind, number> = {
  'invalid-input': EXIT.invalidInput,
  configuration: EXIT.invalidInput,
  authentication: EXIT.denied,
  authorization: EXIT.denied,
  'not-found': EXIT.notFound,
  conflict: EXIT.conflict,
  upstream: EXIT.upstream,
  internal: EXIT.internal,
};

const KIND_STATUS: Record<ErrorKind, number> = {
  'invalid-input': 400,
  'not-found': 404,
  conflict: 409,
  // An upstream's refusal of a customer's credentials or permissions is the request's fault, not the caller's.
  authentication: 422,
  authorization: 422,
  upstream: 502,
  configuration: 503,
  internal: 500,
};

/** The catalogue entry of a code (`undefined` for an AADSTS code Vigil does not list). */
function entryOf(code: string): CatalogueEntry | undefined {
  return Object.hasOwn(ERROR_CATALOGUE, code) ? ERROR_CATALOGUE[code as CataloguedCode] : undefined;
}

/**
 * The kind of a catalogued or AADSTS code: the catalogue's, and `authentication` for an AADSTS code Vigil does not
 * list (Microsoft Entra ID refused a request). An {@link UpstreamCode}'s kind follows the HTTP status instead.
 */
export function kindOf(code: CataloguedCode | AadstsCode): ErrorKind {
  return entryOf(code)?.kind ?? 'authentication';
}

/** The CLI's exit code of an error of `kind` (see {@link EXIT}). */
export function exitCodeOf(kind: ErrorKind): number {
  return KIND_EXIT[kind];
}

/**
 * The API's HTTP status of an error: by kind, except that the caller's own missing sign-in is 401 and its missing
 * role or CSRF token 403 (entries marked `caller`), while an upstream refusing a customer's credentials is 422.
 */
export function httpStatusOf(kind: ErrorKind, code: string): number {
  if (entryOf(code)?.caller) return kind === 'authentication' ? 401 : 403;
  return KIND_STATUS[kind];
}

/** The catalogue's remediation of a code, when one fixed text fits it. */
export function defaultRemediation(code: string): CatalogueRemediation | undefined {
  return entryOf(code)?.remediation;
}
