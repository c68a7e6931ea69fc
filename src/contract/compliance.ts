import { z } from 'zod';
import { FRAMEWORK_IDS } from '../reporting/catalogue.ts';

/** Contract of `/api/v1/compliance`: the frameworks and peer baselines, what covers each item, and the tenant's status. */

/** The state of one item for the integrations in scope, worst first. */
const COMPLIANCE_STATES = ['fail', 'not_evaluated', 'pass', 'monitored', 'no_results', 'not_covered'] as const;

/** A check or detection that covers an item. */
const CoverSchema = z.object({
  kind: z.enum(['check', 'detection']),
  id: z.string(),
  title: z.string(),
  note: z.string().nullable().describe('What the mapping says besides the item, e.g. "(exceeds: every environment)"'),
});

/** One item of a framework with what covers it and its status. */
const ComplianceItemSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    covers: z.array(CoverSchema).describe('The checks and detections mapped to the item'),
    notCoveredReason: z.string().nullable().describe('Why nothing covers the item, when nothing does and the reason is known'),
    pass: z.number().int().describe("Resources passing the item's checks (latest results)"),
    fail: z.number().int().describe("Resources failing the item's checks (latest results)"),
    notEvaluated: z.number().int().describe("Resources the item's checks could not evaluate (latest results)"),
    openAlerts: z.number().int().describe("Alerts of the item's detections not closed"),
    state: z
      .enum(COMPLIANCE_STATES)
      .describe(
        'fail: a check fails or an alert is open; not_evaluated: some results could not be evaluated; pass: every result passes; monitored: covered by detections only, none open; no_results: its checks have no results yet; not_covered: nothing covers it',
      ),
  })
  .meta({ id: 'ComplianceItem' });

/** One framework or peer baseline. */
const ComplianceFrameworkSchema = z
  .object({
    id: z.enum(FRAMEWORK_IDS),
    name: z.string(),
    shortName: z.string().describe('A name short enough for a table cell, such as "ScubaGear"'),
    kind: z.enum(['framework', 'peer']),
    version: z.string().nullable(),
    source: z.string(),
    covered: z.number().int().describe('Items covered by at least one check or detection'),
    items: z.array(ComplianceItemSchema),
  })
  .meta({ id: 'ComplianceFramework' });

/** The compliance view. */
export const ComplianceViewSchema = z
  .object({
    integrationIds: z.array(z.string()).describe('The integrations whose results are counted'),
    frameworks: z.array(ComplianceFrameworkSchema),
  })
  .meta({ id: 'ComplianceView' });
/** The compliance view as the API shows it. */
export type ComplianceView = z.infer<typeof ComplianceViewSchema>;

/** Filters of the compliance view. */
export const ComplianceQuery = z.object({
  integrationId: z.string().max(200).optional().describe('Only this integration (default: every integration of the organization)'),
  framework: z.enum(FRAMEWORK_IDS).optional().describe('Only this framework or peer baseline'),
});
