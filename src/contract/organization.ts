import { z } from 'zod';
import { ROLES } from '../access/index.ts';
import { Timestamp } from './common.ts';

/** Contract of `/api/v1/organization` (the caller's organization, its portal users and API keys) and `/api/v1/region`. */

/** A role. */
export const RoleSchema = z.enum(ROLES);

/** The caller's organization. */
export const OrganizationDetailSchema = z.object({ id: z.string(), name: z.string(), createdAt: Timestamp });

/** A portal user of the organization (never the password hash). */
export const PortalUserSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    displayName: z.string().nullable(),
    role: RoleSchema,
    createdAt: Timestamp,
    lastLoginAt: Timestamp.nullable(),
    lockedUntil: Timestamp.nullable(),
    disabled: z.boolean(),
  })
  .meta({ id: 'PortalUser' });

/** An API key of the organization (never the key). */
const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    role: RoleSchema,
    createdBy: z.string().nullable(),
    createdAt: Timestamp,
    expiresAt: Timestamp.nullable(),
    lastUsedAt: Timestamp.nullable(),
    revokedAt: Timestamp.nullable(),
  })
  .meta({ id: 'ApiKey' });

/** Portal users of the organization. */
export const PortalUserListSchema = z.object({ items: z.array(PortalUserSchema) });

/** Body of adding a portal user. */
export const AddPortalUserBody = z.object({
  email: z.string().max(320),
  password: z.string().max(1024),
  role: RoleSchema,
  displayName: z.string().max(200).optional(),
});

/** Path of one portal user. */
export const PortalUserParams = z.object({ userId: z.string().max(100) });

/**
 * Body of changing a portal user (admins): the role, and/or whether the account is disabled; at least one. A disabled
 * account cannot sign in and its sessions end at once; the organization always keeps one enabled admin.
 */
export const UpdatePortalUserBody = z.object({
  role: RoleSchema.optional(),
  disabled: z.boolean().optional().describe('true disables the account (its sessions end at once); false enables it again'),
});

/** API keys of the organization. */
export const ApiKeyListSchema = z.object({ items: z.array(ApiKeySchema) });

/** A SIEM sink of the deployment and where it sends (never its secret). */
const SinkSchema = z.object({
  sink: z.enum(['webhook', 'syslog']),
  target: z.string().describe("The webhook's origin and path, or the syslog protocol, host and port"),
});

/** The deployment's SIEM sinks (configured for the whole deployment, shared by its organizations). */
export const SinkListSchema = z.object({ items: z.array(SinkSchema) }).meta({ id: 'SinkList' });

/** The outcome of a test event sent to each sink. */
export const SinkTestSchema = z
  .object({
    items: z.array(SinkSchema.extend({ ok: z.boolean(), error: z.string().nullable().describe("The sink's failure, as the sender reported it") })),
  })
  .meta({ id: 'SinkTest' });

/** Body of creating an API key. */
export const CreateApiKeyBody = z.object({
  name: z.string().max(200),
  role: RoleSchema,
  expiresAt: z.string().max(40).optional().describe('ISO 8601 date in the future; none: until revoked'),
});

/** A created API key: the key itself, once. */
export const CreatedApiKeySchema = z.object({ key: z.string().describe('Send as "Authorization: Bearer <key>"; shown once'), apiKey: ApiKeySchema });

/** Path of an API key. */
export const ApiKeyParams = z.object({ keyId: z.string().max(200) });

/** The deployment's region: the source addresses to safelist, the API and portal URLs. */
export const RegionSchema = z
  .object({ id: z.string(), name: z.string(), egressIps: z.array(z.string()), apiUrl: z.string().nullable(), portalUrl: z.string().nullable() })
  .meta({ id: 'Region' });
