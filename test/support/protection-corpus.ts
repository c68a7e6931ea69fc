/**
 * The labelled runtime-protection corpus of issue 19 (`test/fixtures/protection/`, built by
 * `scripts/build-protection-corpus.ts`, sources in its README): `analyze-tool-execution` bodies as Copilot Studio sends
 * them, each labelled attack or benign with the detectors expected to fire, and the inventory snapshot and allow-lists
 * those labels assume. Read by the corpus's validity test and by `npm run bench:protect` (precision and recall per
 * detector).
 *
 * Request body shape: https://learn.microsoft.com/microsoft-copilot-studio/external-security-webhooks-interface-developers
 * (`plannerContext`, `toolDefinition`, `inputValues`, `conversationMetadata`).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { AgentSnapshot, AllowLists, DetectorId, ProtectionSnapshot } from '../../src/protection/types.ts';

/** The corpus folder. */
export const PROTECTION_CORPUS_DIR = fileURLToPath(new URL('../fixtures/protection/', import.meta.url));

const EVERY_DETECTOR: Record<DetectorId, true> = {
  prompt_injection: true,
  jailbreak: true,
  sensitive_data_egress: true,
  external_recipient: true,
  unapproved_tool: true,
  changed_agent: true,
};
/** Every detector id (src/protection/types.ts `DetectorId`), in the order the issue lists them. */
export const DETECTOR_IDS = Object.keys(EVERY_DETECTOR) as DetectorId[];

const parameter = z.object({ name: z.string().min(1), description: z.string(), type: z.object({ $kind: z.string().min(1) }) });

/** The `analyze-tool-execution` body as the corpus stores it (every documented field present). */
const requestSchema = z.object({
  plannerContext: z.object({
    userMessage: z.string(),
    thought: z.string(),
    chatHistory: z.array(z.object({ id: z.string().min(1), role: z.string().min(1), content: z.string(), timestamp: z.string() })),
    previousToolsOutputs: z.array(
      z.object({
        toolId: z.string().min(1),
        toolName: z.string().min(1),
        outputs: z.array(z.object({ name: z.string().min(1), value: z.string() })),
        timestamp: z.string(),
      }),
    ),
  }),
  toolDefinition: z.object({
    id: z.string().min(1),
    type: z.string().min(1),
    name: z.string().min(1),
    description: z.string(),
    inputParameters: z.array(parameter),
    outputParameters: z.array(parameter),
  }),
  inputValues: z.record(z.string(), z.unknown()),
  conversationMetadata: z.object({
    agent: z.object({
      id: z.string().min(1),
      tenantId: z.string().min(1),
      environmentId: z.string().min(1),
      name: z.string(),
      version: z.string(),
      isPublished: z.boolean(),
    }),
    user: z.object({ id: z.string().min(1), tenantId: z.string().min(1) }),
    trigger: z.object({ id: z.string(), schemaName: z.string() }),
    conversationId: z.string().min(1),
    messageId: z.string().min(1),
    channelId: z.string(),
    planId: z.string(),
    planStepId: z.string(),
    parentAgentComponentId: z.string(),
    incomingClientIp: z.string(),
  }),
});

const caseSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/i),
  label: z.enum(['attack', 'benign']),
  detectors: z.array(z.enum(DETECTOR_IDS as [DetectorId, ...DetectorId[]])),
  source: z.string().min(1),
  request: requestSchema,
});

/** An `analyze-tool-execution` request body as stored in the corpus (`CorpusCase["request"]` outside this module). */
type AnalyzeToolExecutionBody = z.infer<typeof requestSchema>;

/** One labelled case: a request and what the detectors should conclude about it. */
export interface CorpusCase {
  /** Unique within the corpus; starts with the source's prefix (`bipia-`, `agentdojo-`, `gptfuzz-`, `synthetic-`). */
  id: string;
  /** `attack`: at least one detector should fire; `benign`: none should (a detection is a false block). */
  label: 'attack' | 'benign';
  /** The detectors expected to fire (empty for benign cases). */
  detectors: DetectorId[];
  /** Key of the source in test/fixtures/protection/README.md. */
  source: string;
  request: AnalyzeToolExecutionBody;
}

/**
 * Reads the corpus (JSON Lines, one case a line).
 *
 * @param file defaults to `test/fixtures/protection/tool-executions.jsonl`.
 * @throws Error naming the line when a line is not JSON or not a case.
 */
export function loadProtectionCorpus(file = `${PROTECTION_CORPUS_DIR}tool-executions.jsonl`): CorpusCase[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const cases: CorpusCase[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (e) {
      throw new Error(`${file}:${i + 1}: not JSON (${(e as Error).message})`);
    }
    const parsed = caseSchema.safeParse(json);
    if (!parsed.success) throw new Error(`${file}:${i + 1}: not a corpus case: ${z.prettifyError(parsed.error)}`);
    cases.push(parsed.data);
  });
  return cases;
}

const snapshotFileSchema = z.object({
  snapshot: z.object({
    collectedAt: z.string().nullable(),
    agents: z.array(
      z.object({
        id: z.string().min(1),
        environmentId: z.string(),
        name: z.string().nullable(),
        schemaName: z.string().nullable(),
        tools: z.array(
          z.object({
            schemaName: z.string().min(1),
            kind: z.string().min(1),
            actionKind: z.string().nullable(),
            connectorId: z.string().nullable(),
            customConnector: z.boolean().nullable(),
            operationId: z.string().nullable(),
            serverHost: z.string().nullable(),
            httpHosts: z.array(z.string()),
          }),
        ),
        knowledgeHosts: z.array(z.string()),
      }),
    ),
    tenantDomains: z.array(z.string()),
    businessConnectors: z.record(z.string(), z.array(z.string())),
  }),
  allow: z.object({
    mcpServers: z.array(z.string()),
    connectors: z.array(z.string()),
    hosts: z.array(z.string()),
    internalDomains: z.array(z.string()),
  }),
});

/**
 * Reads the snapshot the corpus's labels assume (the synthetic tenant contoso.com: its agents' last collected tools,
 * its domains, its DLP Business connectors) and the organization's allow-lists, as the shapes detectors receive.
 *
 * @param file defaults to `test/fixtures/protection/snapshot.json` (arrays and objects in place of maps and sets).
 * @throws Error when the file is not JSON or not of that shape.
 */
export function loadProtectionSnapshot(file = `${PROTECTION_CORPUS_DIR}snapshot.json`): { snapshot: ProtectionSnapshot; allow: AllowLists } {
  const parsed = snapshotFileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file}: not a protection snapshot: ${z.prettifyError(parsed.error)}`);
  const { snapshot, allow } = parsed.data;
  return {
    snapshot: {
      collectedAt: snapshot.collectedAt,
      agents: new Map<string, AgentSnapshot>(snapshot.agents.map((a) => [a.id, a])),
      tenantDomains: new Set(snapshot.tenantDomains),
      businessConnectors: new Map(Object.entries(snapshot.businessConnectors).map(([env, ids]) => [env, new Set(ids)])),
    },
    allow,
  };
}

/** Which half of the corpus a case belongs to: `tuning` (patterns may be crafted on it) or `held-out` (never read). */
export type CorpusHalf = 'tuning' | 'held-out';

/**
 * The deterministic split of the corpus into a tuning half and a held-out half, so detector quality is reported on
 * cases nobody tuned against:
 * - BIPIA: by BIPIA's own split — benign e-mails by the e-mail's split (`bipia-email-train-*` tuning), injected
 *   e-mails by the attack text's split (`bipia-injected-<email split>-<n>-train-<category>-<k>` tuning; BIPIA's train
 *   and test attacks are different categories, so the held-out half measures unseen attack kinds);
 * - AgentDojo: by the injection task's number (`InjectionTask<k>`, even k tuning) or the inbox e-mail's number;
 * - GPTFuzz: by the template's index (even tuning);
 * - synthetic cases: by their number (even tuning).
 *
 * @throws Error for an id that follows none of these forms (a new source must choose its split).
 */
export function corpusHalf(id: string): CorpusHalf {
  const even = (n: string): CorpusHalf => (Number(n) % 2 === 0 ? 'tuning' : 'held-out');
  let m = /^bipia-email-(train|test)-\d+$/.exec(id);
  if (m) return m[1] === 'train' ? 'tuning' : 'held-out';
  if (/^bipia-injected-b-/.test(id)) return 'held-out';
  m = /^bipia-injected-(?:train|test)-\d+-(train|test)-/.exec(id);
  if (m) return m[1] === 'train' ? 'tuning' : 'held-out';
  m = /^agentdojo-injection-InjectionTask(\d+)-\d+$/.exec(id) ?? /^agentdojo-mail-(\d+)$/.exec(id);
  if (m) return even(m[1]!);
  m = /^gptfuzz-jailbreak-(\d+)$/.exec(id) ?? /^synthetic-[a-z-]+-(\d+)b?$/.exec(id);
  if (m) return even(m[1]!);
  throw new Error(`corpus case ${id}: no tuning/held-out split rule for this id`);
}
