import { z } from 'zod';
import type { AuditEvent } from '../core/audit.ts';
import { SEVERITIES } from '../core/types.ts';

/**
 * A detection is a rule over normalised audit events that produces alerts with the triggering events linked.
 * Metadata is validated data like a check's, with mappings to OWASP Top 10 for LLM Applications 2025 and MITRE
 * ATLAS / ATT&CK where relevant.
 */

export const detectionMetadataSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9_]+$/),
    title: z.string().min(5),
    severity: z.enum(SEVERITIES),
    description: z.string().min(20),
    response: z.string().min(20),
    references: z.array(z.string().url()).min(1),
    frameworks: z.record(z.string(), z.array(z.string())).default({}),
  })
  .strict();

/** Validated metadata of a detection. */
export type DetectionMetadata = z.infer<typeof detectionMetadataSchema>;

/** What a detection sees: the new events and the history it may need. */
export interface DetectionContext {
  integrationId: string;
  /** Events new since the last evaluation, oldest first. */
  events: AuditEvent[];
  /** Client IPs a user was seen with before these events (lower-cased user id → set of IPs); absent user = no history. */
  priorIps(userId: string): Set<string> | undefined;
}

/** One alert a detection raises. */
export interface DetectionHit {
  /** Same key across evaluations = the same alert (raised once). */
  dedupeKey: string;
  title: string;
  eventIds: string[];
  detail: Record<string, unknown>;
}

/** A detection. */
export interface Detection {
  metadata: DetectionMetadata;
  run(ctx: DetectionContext): DetectionHit[];
}
