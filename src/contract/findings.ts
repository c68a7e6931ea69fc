import { z } from 'zod';
import { SEVERITIES } from '../core/types.ts';
import { Json, page, PageQuery, SeveritySchema, Timestamp } from './common.ts';
import { RunSchema } from './runs.ts';
import { FINDING_SORTS } from '../store/repositories/queries.ts';

/** Contract of `/api/v1/findings` (filter, suppress, history) and `/api/v1/dashboard`. */

/** A finding's suppression (accepted risk). */
const SuppressionSchema = z
  .object({ reason: z.string(), author: z.string(), expiresAt: Timestamp.nullable(), createdAt: Timestamp })
  .meta({ id: 'Suppression' });

/** A finding. */
export const FindingSchema = z
  .object({
    id: z.string(),
    integrationId: z.string(),
    checkId: z.string(),
    title: z.string().nullable(),
    severity: SeveritySchema,
    resourceType: z.string(),
    resourceId: z.string(),
    resourceName: z.string().nullable(),
    status: z.string().describe('open or resolved'),
    detail: Json.nullable(),
    firstSeenAt: Timestamp,
    lastSeenAt: Timestamp,
    resolvedAt: Timestamp.nullable(),
    suppression: SuppressionSchema.nullable(),
    environmentId: z.string().nullable().describe('The Power Platform environment the finding is about (the environment itself, or the one its detail names)'),
    environmentName: z.string().nullable().describe('Its display name from the inventory (null when not collected)'),
  })
  .meta({ id: 'Finding' });
/** A finding as the API shows it. */
export type Finding = z.infer<typeof FindingSchema>;

/** One finding with its check and history. */
export const FindingDetailSchema = FindingSchema.extend({
  check: z.object({ title: z.string(), risk: z.string(), remediation: z.string(), references: z.array(z.string()) }).nullable(),
  history: z.array(z.object({ event: z.string(), at: Timestamp, detail: Json.nullable() })),
}).meta({ id: 'FindingDetail' });
/** One finding with its check and history. */
export type FindingDetail = z.infer<typeof FindingDetailSchema>;

/** `true` or `false` in a query string. */
const QueryBoolean = z.enum(['true', 'false']);

/** Filters of the findings list and of its exports (everything but order and paging). */
export const FindingsFilterQuery = z.object({
  integrationId: z.string().max(200).optional(),
  severity: z.enum(SEVERITIES).optional(),
  status: z.enum(['open', 'resolved', 'suppressed', 'all']).default('open').describe('open: open and not suppressed (unless suppressed says otherwise)'),
  suppressed: QueryBoolean.optional().describe('true: only findings with an active suppression; false: only those without (whatever status says of it)'),
  checkId: z.string().max(200).optional(),
  resourceId: z.string().max(400).optional(),
  environmentId: z.string().max(200).optional().describe('Findings on this environment or on a resource its detail places in it'),
  q: z
    .string()
    .max(200)
    .optional()
    .describe("Case-insensitive text in the check's title or id, the resource's name or id, the reason or the suppression's reason"),
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('ISO 8601 with an offset: only findings first seen (firstSeenAt) at or after this instant (inclusive); at most until'),
  until: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('ISO 8601 with an offset: only findings first seen (firstSeenAt) before this instant (exclusive)'),
  sort: z.enum(FINDING_SORTS).default('severity').describe('Order: severity by weight (critical highest), status open, suppressed, resolved; resource by name'),
  order: z.enum(['asc', 'desc']).default('desc'),
});

/** Filters, order and paging of the findings list. */
export const FindingsQuery = PageQuery.extend(FindingsFilterQuery.shape);

/** A page of findings, with how many the filter selects in all. */
export const FindingPageSchema = page(FindingSchema).extend({ total: z.number().int().describe('Findings the filter selects, over all pages') });

/** Body of a suppression of several findings at once. */
export const FindingsBulkSuppressionBody = z.object({
  ids: z.array(z.string().min(1).max(200)).min(1).max(500).describe("Finding ids, all of the caller's organization"),
  reason: z.string().max(2000),
  expiresAt: z.string().max(40).nullable().optional().describe('ISO 8601 date in the future; none: until lifted'),
});

/** Body of lifting the suppression of several findings at once. */
export const FindingsBulkLiftBody = z.object({
  ids: z.array(z.string().min(1).max(200)).min(1).max(500).describe("Finding ids, all of the caller's organization"),
});

/** The answer of a bulk suppression or lift: the findings as they now stand. */
export const FindingsBulkAnswer = z.object({
  items: z.array(FindingSchema),
  changed: z.number().int().describe('How many changed (a lift of a finding that was not suppressed changes nothing)'),
});

/** Body of a suppression. */
export const SuppressionBody = z.object({
  reason: z.string().max(2000),
  expiresAt: z.string().max(40).nullable().optional().describe('ISO 8601 date in the future; none: until lifted'),
});

/** What an agent can touch, from its Copilot Studio components, or why that is not known. */
const AgentTouchSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('not_evaluated'), reason: z.string() }),
  z.object({
    status: z.literal('evaluated'),
    tools: z.number().int().describe('Connector, flow and MCP tools'),
    makerCredentialTools: z.number().int().describe("Tools whose connection runs with the maker's credentials"),
    mcpTools: z.number().int(),
    httpHosts: z.array(z.string()).describe('Hosts called by HTTP requests in tools and topics'),
    knowledge: z.record(z.string(), z.number()).describe('Knowledge sources by type (publicWebsite, sharePoint, …)'),
  }),
]);

/** A Copilot Studio agent ranked by risk: open findings weighted by severity, times how far it reaches. */
export const RankedAgentSchema = z
  .object({
    integrationId: z.string(),
    agentId: z.string(),
    environmentId: z.string(),
    name: z.string().nullable(),
    score: z.number().describe('0–100'),
    openFindings: z.number(),
    reach: z.string().describe('anyone, any tenant, organization, restricted, makers only, off or unknown'),
    reasons: z.array(z.string()),
    touch: AgentTouchSchema,
  })
  .meta({ id: 'RankedAgent' });
/** A Copilot Studio agent ranked by risk. */
export type RankedAgent = z.infer<typeof RankedAgentSchema>;

/** Open findings of one UTC day, per severity. */
const SeverityDaySchema = z.object({
  date: z.string(),
  ...(Object.fromEntries(SEVERITIES.map((s) => [s, z.number()])) as Record<(typeof SEVERITIES)[number], z.ZodNumber>),
});

/** Check × resource results by status, of a group of checks or a day. */
const ResultCountsSchema = z.object({
  passed: z.number().int(),
  failed: z.number().int(),
  notEvaluated: z.number().int().describe('Results a check could not judge (never counted as passed)'),
});

/** The share of judged results that passed, in percent (0–100, one decimal), or null when nothing was judged. */
const ScoreSchema = z.number().nullable().describe('100 × passed ÷ (passed + failed), one decimal; null when nothing was judged');

/** The dashboard of an organization. */
export const DashboardSchema = z
  .object({
    posture: z
      .object({
        ...ResultCountsSchema.shape,
        score: ScoreSchema,
        trend: z
          .array(z.object({ date: z.string(), score: ScoreSchema, counts: ResultCountsSchema.nullable() }))
          .describe('Per UTC day (30 days, oldest first): each integration’s last evaluation on or before the day, summed; null counts before any'),
      })
      .describe('The latest results of every check on every resource, as a score'),
    areas: z
      .array(z.object({ area: z.string(), checks: z.number().int(), score: ScoreSchema, ...ResultCountsSchema.shape }))
      .describe('Latest results per check area (identity, sharing, data, …), by area name'),
    frameworks: z
      .array(z.object({ framework: z.string(), checks: z.number().int(), score: ScoreSchema, ...ResultCountsSchema.shape }))
      .describe('Latest results of the checks mapped to each framework (a check mapped to several counts in each)'),
    severityOverTime: z.array(SeverityDaySchema),
    riskiestAgents: z.array(RankedAgentSchema),
    /** What was not evaluated and why: per integration, check and reason (the gap: stream, slice, code), the count and the first resources by name. */
    coverage: z.array(
      z.object({
        integrationId: z.string(),
        integrationName: z.string(),
        checkId: z.string(),
        title: z.string(),
        notEvaluated: z.number().int().describe('Resources (or scopes) of this check not evaluated for this reason'),
        reason: z.string().nullable(),
        resources: z
          .array(z.object({ resourceType: z.string(), resourceId: z.string(), resourceName: z.string().nullable() }))
          .describe('The first resources of the group by name (at most 10)'),
      }),
    ),
    lastCollections: z.array(z.object({ integrationId: z.string(), name: z.string(), run: RunSchema.nullable() })),
  })
  .meta({ id: 'Dashboard' });
/** The dashboard of an organization. */
export type Dashboard = z.infer<typeof DashboardSchema>;

/** A check of the catalogue: what it looks at, why it matters, how to fix it, and where else the same control lives. */
const CheckSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    area: z.string(),
    severity: z.enum(SEVERITIES),
    resourceType: z.string().describe('What one result is about (agent, environment, tenant, …)'),
    risk: z.string(),
    remediation: z.string(),
    references: z.array(z.string()),
    frameworks: z.record(z.string(), z.array(z.string())).describe('Controls of each framework the check maps to'),
    peers: z.array(z.string()).describe('Peer checks matched or exceeded (Maester, ScubaGear, …)'),
  })
  .meta({ id: 'Check' });

/** Every check of this installation, by id. */
export const CheckListSchema = z.object({ items: z.array(CheckSchema) });
