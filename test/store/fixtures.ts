import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.ts';

/** Inserts a minimal integration row for repository tests. */
export async function insertTestIntegration(db: Kysely<Database>, id: string): Promise<void> {
  await db
    .insertInto('integrations')
    .values({
      id,
      name: id,
      mode: 'customer-app',
      tenant_id: `t-${id}`,
      client_id: `c-${id}`,
      sp_object_id: null,
      secret_envelope: null,
      secret_expires_at: null,
      verification: null,
      verified_at: null,
      created_at: 'x',
      updated_at: 'x',
      credential_state: 'ok',
      credential_error: null,
      secret_rotated_at: null,
    })
    .execute();
}
