import { invalidInput } from '../core/errors.ts';
import { isGuid, normalizeGuid } from '../core/ids.ts';

/**
 * Validation of onboarding input. Every error names the field (in domain terms: `tenantId`; the CLI shows its flag)
 * and the fix (the portal page where the right value is).
 */

/** Months a client secret lives when no expiry is given: the seed instructs 24 months. */
const DEFAULT_SECRET_MONTHS = 24;

/** Validated Mode A input. */
export interface CustomerAppInput {
  name: string;
  tenantId: string;
  clientId: string;
  clientSecret: string;
  /** Secret expiry, ISO 8601 UTC. */
  secretExpiresAt: string;
}

/**
 * Checks a GUID field and returns it in canonical form (lower case, dashes; braces and a dash-less form accepted).
 * @throws VigilError `invalid-input` naming the field and where to copy the value.
 */
export function requireGuid(field: string, value: string | undefined, where: string): string {
  const v = normalizeGuid(value ?? '');
  if (!v) throw invalidInput(field, (name) => `${name(field)} is required.`, `Copy it from ${where}.`);
  if (!isGuid(v))
    throw invalidInput(
      field,
      (name) => `${name(field)} '${v}' is not a GUID (expected 8-4-4-4-12 hexadecimal digits, e.g. 72f988bf-86f1-41af-91ab-2d7cd011db47).`,
      `Copy it from ${where}.`,
    );
  return v.toLowerCase();
}

/** `today + months` as an ISO date at 00:00 UTC. */
function monthsFromNow(months: number, now = new Date()): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + months, now.getUTCDate()));
  return d.toISOString();
}

/**
 * Parses a secret expiry (`YYYY-MM-DD` or a full ISO 8601 timestamp); defaults to 24 months from `now`.
 * @throws VigilError `invalid-input` on `secretExpires` when malformed or not in the future.
 */
export function parseSecretExpiry(value: string | undefined, now = new Date()): string {
  if (value === undefined || value.trim() === '') return monthsFromNow(DEFAULT_SECRET_MONTHS, now);
  const v = value.trim();
  const ok = /^\d{4}-\d{2}-\d{2}$/.test(v) || /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(v);
  const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v);
  if (!ok || Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== (/^\d{4}-\d{2}-\d{2}$/.test(v) ? v : new Date(t).toISOString().slice(0, 10))) {
    throw invalidInput(
      'secretExpires',
      (name) => `${name('secretExpires')} '${v}' is not a date.`,
      'Give the Expires date shown under App registrations > your app > Certificates & secrets, as YYYY-MM-DD (e.g. 2028-11-21).',
    );
  }
  if (t <= now.getTime()) {
    throw invalidInput(
      'secretExpires',
      (name) => `${name('secretExpires')} ${v} is not in the future: the secret has expired.`,
      'Create a new client secret under App registrations > your app > Certificates & secrets (24 months), and give its value and expiry date.',
    );
  }
  return new Date(t).toISOString();
}

/**
 * Checks a client secret value: present, and not a GUID (the Secret ID pasted instead of the value).
 * @throws VigilError `invalid-input` on `clientSecret`.
 */
export function requireSecretValue(raw: string | undefined): string {
  const secret = (raw ?? '').trim();
  if (!secret) {
    throw invalidInput(
      'clientSecret',
      'The client secret is empty.',
      'Give the Value of the client secret (App registrations > your app > Certificates & secrets); it must not be empty.',
    );
  }
  if (isGuid(secret)) {
    throw invalidInput(
      'clientSecret',
      'The client secret looks like a GUID: that is the Secret ID, not the secret value.',
      'Under App registrations > your app > Certificates & secrets, copy the Value column (shown only when the secret is created); if it is hidden now, create a new client secret.',
    );
  }
  return secret;
}

/**
 * Validates Mode A input.
 * @throws VigilError `invalid-input` for the first bad field.
 */
export function validateCustomerAppInput(
  raw: {
    name?: string | undefined;
    tenantId?: string | undefined;
    clientId?: string | undefined;
    clientSecret?: string | undefined;
    secretExpires?: string | undefined;
  },
  now = new Date(),
): CustomerAppInput {
  const tenantId = requireGuid(
    'tenantId',
    raw.tenantId,
    'Microsoft Entra admin center > Overview > Tenant ID (or your app registration > Overview > Directory (tenant) ID)',
  );
  const clientId = requireGuid('clientId', raw.clientId, 'Microsoft Entra admin center > App registrations > your app > Overview > Application (client) ID');
  const secret = requireSecretValue(raw.clientSecret);
  const name = (raw.name ?? '').trim() || `tenant-${tenantId.slice(0, 8)}`;
  if (name.length > 200) throw invalidInput('name', (n) => `${n('name')} is longer than 200 characters.`, 'Use a shorter display name.');
  return { name, tenantId, clientId, clientSecret: secret, secretExpiresAt: parseSecretExpiry(raw.secretExpires, now) };
}
