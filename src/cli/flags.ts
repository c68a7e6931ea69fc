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
};

/** A field's flag (`tenantId` → `--tenant-id`); other fields (environment variables, flags already) as they are. */
export const flagOf: FieldNamer = (field) => FIELD_FLAGS[field] ?? field;
