import { z } from 'zod';
import { RoleSchema } from './organization.ts';

/** Contract of `/api/v1/auth`: sign-in, sign-out, and who the caller is. */

/** A portal user as the session shows it. */
const UserSchema = z.object({ id: z.string(), email: z.string(), displayName: z.string().nullable(), role: RoleSchema }).meta({ id: 'User' });

/** An organization's id and name. */
const OrganizationSchema = z.object({ id: z.string(), name: z.string() }).meta({ id: 'Organization' });

/** Body of a sign-in. */
export const LoginBody = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) });

/** A signed-in session: the user, the organization and the CSRF token to echo on changes. */
export const LoginResultSchema = z
  .object({ user: UserSchema, organization: OrganizationSchema, csrfToken: z.string(), expiresAt: z.string() })
  .meta({ id: 'LoginResult' });

/** The caller: a signed-in user or an API key, and its organization. */
export const SessionSchema = z
  .object({
    via: z.enum(['session', 'api-key']),
    user: UserSchema.nullable(),
    apiKey: z.object({ id: z.string(), name: z.string(), role: RoleSchema }).nullable(),
    organization: OrganizationSchema,
  })
  .meta({ id: 'Session' });
