import { z } from 'zod';
import { INVENTORY_KINDS } from '../sources/index.ts';
import { EventSchema } from './alerts.ts';
import { Json, page, PageQuery, Timestamp } from './common.ts';
import { FindingSchema, RankedAgentSchema } from './findings.ts';
import { INVENTORY_SORTS } from '../store/repositories/queries.ts';

/** Contract of `/api/v1/inventory/{kind}` (filterable, sortable, keyset-paged), the agents ranked by risk and the agent page. */

/** One labelled fact of an inventory object, chosen per kind from the fields its source sends (see `inventorySummary`). */
const InventoryFactSchema = z.object({ label: z.string(), value: z.string() }).meta({ id: 'InventoryFact' });

/** One live inventory object. */
const InventoryItemSchema = z
  .object({
    integrationId: z.string(),
    id: z.string(),
    name: z.string().nullable(),
    environmentId: z.string().nullable(),
    environmentName: z.string().nullable().describe("Its environment's display name from the inventory (null when not collected, or the kind has none)"),
    summary: z
      .array(InventoryFactSchema)
      .describe(
        'A few of its fields that matter for this kind, as a person reads them (authentication, sharing, state, …); facts the source did not send are left out',
      ),
    attributes: Json.describe('The normalised fields of the object, by kind'),
    firstSeenAt: Timestamp,
    lastSeenAt: Timestamp,
  })
  .meta({ id: 'InventoryItem' });
/** One live inventory object. */
export type InventoryItem = z.infer<typeof InventoryItemSchema>;

/** Path of the inventory list. */
export const InventoryParams = z.object({ kind: z.enum(INVENTORY_KINDS) });

/** Filters of the inventory list. */
export const InventoryQuery = PageQuery.extend({
  integrationId: z.string().max(200).optional(),
  environmentId: z.string().max(200).optional().describe('Only objects of this Power Platform environment (agents, apps, flows, connectors, connections)'),
  q: z.string().max(200).optional().describe('Case-insensitive part of the name or the id'),
  sort: z
    .enum(INVENTORY_SORTS)
    .default('name')
    .describe("Order: name and environment (the environment's name) ignoring case, firstSeenAt and lastSeenAt by time; ties by integration and id"),
  order: z.enum(['asc', 'desc']).default('asc'),
});

/** A page of inventory objects, with how many the filter selects in all. */
export const InventoryPageSchema = page(InventoryItemSchema).extend({ total: z.number().int().describe('Objects the filter selects, over all pages') });

/** Filters of the ranked agents (`/api/v1/agents`). */
export const RankedAgentsQuery = z.object({
  integrationId: z.string().max(200).optional().describe('Only the agents of this integration'),
  limit: z.coerce.number().int().min(1).max(500).default(50).describe('At most this many agents, the riskiest (1–500)'),
});

/** Copilot Studio agents ranked by risk, highest score first. */
export const RankedAgentListSchema = z.object({ items: z.array(RankedAgentSchema) });

/** Path of the agent page. */
export const AgentParams = z.object({ id: z.string().max(200), agentId: z.string().max(200) });

/** The agent page: configuration, authentication, sharing, components, owner, findings and events. */
export const AgentDetailSchema = z
  .object({
    agent: z.object({
      id: z.string(),
      integrationId: z.string(),
      environmentId: z.string(),
      name: z.string().nullable(),
      schemaName: z.string().nullable(),
      authenticationMode: z.number().nullable().describe('Dataverse bot authenticationmode: 1 none, 2 integrated (Microsoft), 3 manual (OAuth)'),
      authenticationTrigger: z.number().nullable(),
      accessControlPolicy: z.number().nullable().describe('Who may chat with the agent (Dataverse bot accesscontrolpolicy)'),
      publishedOn: Timestamp.nullable(),
      modifiedOn: Timestamp.nullable(),
      createdOn: Timestamp.nullable(),
      stateCode: z.number().nullable(),
      statusCode: z.number().nullable(),
      raw: Json.describe('The Dataverse bot row as collected'),
    }),
    environment: z.object({ id: z.string(), name: z.string().nullable() }),
    owner: z.object({ id: z.string(), name: z.string().nullable(), entraObjectId: z.string().nullable() }).nullable(),
    settings: Json.nullable(),
    components: z.array(z.object({ id: z.string(), name: z.string().nullable(), attributes: Json })),
    findings: z.array(FindingSchema),
    events: z.array(EventSchema),
  })
  .meta({ id: 'AgentDetail' });
/** The agent page. */
export type AgentDetail = z.infer<typeof AgentDetailSchema>;
