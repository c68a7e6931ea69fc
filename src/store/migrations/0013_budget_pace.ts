import type { Kysely } from 'kysely';

/**
 * Adaptive pace of the shared throttling budgets (issue 18): `upstream_budgets.rate_factor`, the share of the
 * documented rate a budget currently allows (1 = full; halved by each throttling episode, recovering additively as
 * requests go through), shared by every worker. Rows now key a documented limit by its scope (`tenant_id` is a tenant
 * id, or `*` for a limit per app across all tenants; `api` the budget name). Frozen.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('upstream_budgets')
    .addColumn('rate_factor', 'double precision', (c) => c.notNull().defaultTo(1))
    .execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('upstream_budgets').dropColumn('rate_factor').execute();
}
