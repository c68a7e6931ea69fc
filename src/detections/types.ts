import { z } from 'zod';
import type { AuditEvent } from '../core/audit.ts';
import type { FlowAttrs } from '../sources/powerPlatform/streams/flows.ts';
import type { AgentComponentAttrs } from '../sources/dataverse/streams/agentComponents.ts';
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
    /**
     * The peer rules this one matches or exceeds, e.g. `Sentinel "Power Apps - Bulk sharing of Power Apps to newly
     * created guest users" (exceeds: …)`; empty when no peer has the same rule.
     */
    peers: z.array(z.string().min(3)).default([]),
    /** Record types the rule reads (schema RecordType numbers): only those events are loaded for it. */
    recordTypes: z.array(z.number().int().nonnegative()).min(1),
  })
  .strict();

/** Validated metadata of a detection. */
export type DetectionMetadata = z.infer<typeof detectionMetadataSchema>;

/** A stored event without its raw record (what history look-ups return). */
type StoredEvent = Omit<AuditEvent, 'raw'>;

/** A user's client IPs seen before a time (see {@link DetectionContext.ipsSeenBefore}); a `Set<string>` is one. */
export interface SeenIps extends Iterable<string> {
  readonly size: number;
  has(ip: string): boolean;
}

/** What a detection sees: a page of new events of its record types, and the history it may need. */
export interface DetectionContext {
  integrationId: string;
  /** New events of the rule's `recordTypes`, oldest first, with raw records (one page of at most a few thousand). */
  events: AuditEvent[];
  /**
   * Client IPs the user's audited activity (any record type, stored or new) came from strictly before `time`
   * (ISO 8601 UTC), normalised; empty when the user has no such history. A read-only view answered from the run's
   * per-user first-seen index (`has` in O(1), `size` in O(log n)); iterating it lists the addresses in the history's
   * order, so take the few needed rather than spreading it.
   */
  ipsSeenBefore(userId: string, time: string): SeenIps;
  /** Stored events of these operations created in [from, to] (ISO 8601 UTC), oldest first, at most 10,000. */
  find(filter: { operations: string[]; from: string; to: string }): Promise<StoredEvent[]>;
  /**
   * Stored events of these operations created in [from, to], oldest first, at most 5,000, with their raw records: for
   * rules that read a field of a few earlier records (e.g. which user a directory change created). Rules over many
   * events use {@link find}.
   */
  findRecords(filter: { operations: string[]; from: string; to: string }): Promise<AuditEvent[]>;
  /**
   * The collected cloud flows (`flows` stream, live objects) with these flow ids (the flow's `name`, a GUID), by id;
   * flows not collected (yet) are absent.
   */
  flows(ids: string[]): Promise<Map<string, FlowAttrs>>;
  /**
   * The collected Copilot Studio agent components (`agentComponents` stream, live objects) with these ids
   * (botcomponentid, a GUID), by id; components not collected (yet) are absent.
   */
  agentComponents(ids: string[]): Promise<Map<string, AgentComponentAttrs>>;
  /**
   * The open posture findings (not suppressed now) on these resources (`resourceId`: an agent's botid, a flow's id…),
   * oldest first; resources without one are absent from the answer. Read-only: detections never change findings.
   */
  openFindings(resourceIds: string[]): Promise<OpenFinding[]>;
  /**
   * The collected Power Platform environments (`environments` stream, live rows) with these ids (the environment's
   * `name`: a GUID or `Default-<tenant id>`), by id: display name and SKU (`Production`, `Sandbox`, `Developer`,
   * `Trial`, `Default`); environments not collected (yet) are absent.
   */
  environments(ids: string[]): Promise<Map<string, { displayName: string | null; sku: string | null }>>;
}

/** An open posture finding as detections see it (see {@link DetectionContext.openFindings}). */
export interface OpenFinding {
  findingId: string;
  checkId: string;
  severity: (typeof SEVERITIES)[number];
  /** `agent`, `flow`, `environment`, … */
  resourceType: string;
  resourceId: string;
  resourceName: string | null;
  /** When the check first failed on the resource (ISO 8601 UTC). */
  firstSeenAt: string;
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
  run(ctx: DetectionContext): DetectionHit[] | Promise<DetectionHit[]>;
}
