import { z } from 'zod';
import { protectionPolicyInputSchema } from '../protection/policy.ts';
import { page, PageQuery, Timestamp } from './common.ts';

/**
 * Contract of `/api/v1/protection` (issue 19): runtime protection, Vigil as Copilot Studio's external threat-detection
 * provider. Per integration of the caller's organization: its endpoint and set-up (the steps with the exact values and
 * what Vigil observed: validation, analyses per environment, problems with their fixes), the agent steps it answered
 * (decisions), a conversation's timeline, and the protection policies. The views are those of src/protection/
 * (endpoints.ts, policies.ts, setup.ts), which the CLI prints too.
 *
 * Source: https://learn.microsoft.com/microsoft-copilot-studio/external-security-provider (set-up per environment);
 * https://learn.microsoft.com/microsoft-copilot-studio/external-security-webhooks-interface-developers (the calls).
 */

/** An integration's threat-detection endpoint. */
export const ProtectionEndpointSchema = z
  .object({
    id: z.string().describe('Public id; the base URL ends with it'),
    integrationId: z.string(),
    appId: z.string().nullable().describe('Entra application (client) ID whose tokens are accepted; null until configured (every call is refused)'),
    audiences: z.array(z.string()).describe('Token audiences accepted'),
    baseUrl: z.string().nullable().describe('{apiUrl}/protection/{id}: the endpoint link of the admin center; null while VIGIL_API_URL is not set'),
    createdAt: Timestamp,
    validatedAt: Timestamp.nullable().describe('Last successful /validate call (the admin center saving the provider)'),
    firstAnalysisAt: Timestamp.nullable(),
    lastAnalysisAt: Timestamp.nullable(),
    authFailures: z.number().int().describe('Calls refused for their token'),
    lastAuthFailureAt: Timestamp.nullable(),
    lastAuthFailureReason: z.string().nullable().describe('Reason word of the last refusal (app, audience, tenant, expired, …); never the token'),
  })
  .meta({ id: 'ProtectionEndpoint' });

/** An integration of the organization with its endpoint (null: protection not enabled). */
const ProtectionIntegrationSchema = z
  .object({ integrationId: z.string(), integrationName: z.string(), tenantId: z.string(), endpoint: ProtectionEndpointSchema.nullable() })
  .meta({ id: 'ProtectionIntegration' });

/** The organization's integrations with their endpoints. */
export const ProtectionListSchema = z.object({ items: z.array(ProtectionIntegrationSchema) });

/** The set-up steps with the exact values (protection/setup.ts). */
const ProtectionSetupSchema = z
  .object({
    tenantId: z.string(),
    baseUrl: z.string().describe('The endpoint link to enter in the Power Platform admin center'),
    applicationIdUri: z.string().describe("The Entra application's Application ID URI"),
    federatedCredential: z.object({ name: z.string(), issuer: z.string(), subject: z.string(), audiences: z.array(z.string()) }),
    appId: z.string().nullable(),
    steps: z.array(z.object({ title: z.string(), detail: z.array(z.string()) })),
    graph: z
      .array(z.object({ method: z.literal('POST'), path: z.string(), body: z.record(z.string(), z.unknown()) }))
      .describe('Microsoft Graph calls creating the application, its service principal and the credential'),
    powershell: z.string().describe('A Microsoft Graph PowerShell script doing the same'),
  })
  .meta({ id: 'ProtectionSetup' });

/** What Vigil observed of one environment's set-up. */
const EnvironmentProtectionSchema = z
  .object({
    environmentId: z.string(),
    displayName: z.string().nullable(),
    calls: z.number().int().describe('Analyses received from agents of this environment'),
    agentsCalling: z.number().int().describe('Distinct agents those analyses came from'),
    agents: z
      .object({ generative: z.number().int(), classic: z.number().int(), unknown: z.number().int() })
      .describe(
        "The environment's agents in the last collection by orchestration: only generative ones call the provider; classic ones are not covered; unknown when their settings could not be read",
      ),
    firstAnalysisAt: Timestamp.nullable(),
    lastAnalysisAt: Timestamp.nullable(),
  })
  .meta({ id: 'EnvironmentProtection' });

/** The set-up report of an integration (the set-up doctor). */
export const ProtectionSetupReportSchema = z
  .object({
    endpoint: ProtectionEndpointSchema.nullable(),
    setup: ProtectionSetupSchema.nullable().describe('Null while protection is not enabled or VIGIL_API_URL is not set'),
    environments: z.array(EnvironmentProtectionSchema),
    problems: z.array(z.string()).describe('What is missing or wrong, each with its fix; empty when everything observable is in place'),
  })
  .meta({ id: 'ProtectionSetupReport' });

/** Body of enabling protection for an integration (idempotent). */
export const ProtectionEnableBody = z.object({
  appId: z.string().max(100).optional().describe('The Entra application (client) ID; absent on the first call made to learn the base URL'),
  audiences: z.array(z.string().min(1).max(500)).max(20).optional().describe('Accepted token audiences; absent: unchanged'),
});

/** One detector's verdict on a step, with redacted evidence. */
const VerdictSchema = z.object({
  detector: z.string(),
  detected: z.boolean(),
  confidence: z.number(),
  summary: z.string(),
  evidence: z.array(z.object({ field: z.string(), match: z.string().describe('Redacted'), excerpt: z.string().describe('Redacted') })),
});

/** One tool call Copilot Studio asked about and what Vigil answered. */
const AgentStepSchema = z
  .object({
    source: z.literal('runtime').describe('Recorded by the threat-detection endpoint when Copilot Studio asked about the call'),
    id: z.string(),
    receivedAt: Timestamp,
    correlationId: z.string().nullable(),
    environmentId: z.string().nullable(),
    environmentName: z.string().nullable().describe('Display name of the environment from the last collection'),
    agentId: z.string().nullable(),
    agentName: z.string().nullable(),
    userId: z.string().nullable(),
    conversationId: z.string().nullable(),
    toolId: z.string().nullable(),
    toolName: z.string().nullable(),
    toolType: z.string().nullable(),
    blockAction: z.boolean().describe('Vigil told Copilot Studio to block the call'),
    wouldBlock: z.boolean().describe('Block mode would have blocked it (monitor mode records this)'),
    mode: z.string(),
    reasonCode: z.number().int(),
    reason: z.string(),
    decidedBy: z.string().nullable(),
    verdicts: z.array(VerdictSchema),
    policyIds: z.array(z.string()),
    latencyMs: z.number().describe('Time to answer, milliseconds'),
    engineMs: z.number().describe('Time the detectors took, milliseconds'),
    timedOut: z.boolean(),
  })
  .meta({ id: 'AgentStep' });

/** The outcomes a step list is filtered by. */
export const STEP_OUTCOMES = ['blocked', 'wouldBlock', 'decision', 'allowed', 'timeout'] as const;

/** Filters of an integration's steps. */
export const AgentStepsQuery = PageQuery.extend({
  conversationId: z.string().max(400).optional().describe("Only the steps of this conversation (Copilot Studio's conversation id)"),
  agentId: z.string().max(200).optional().describe('Only the steps of this agent (Copilot Studio bot id; the facets list them with their names)'),
  environmentId: z
    .string()
    .max(200)
    .optional()
    .describe('Only the steps of this environment (Power Platform environment id; the facets list them with their names)'),
  outcome: z.enum(STEP_OUTCOMES).optional().describe('blocked, wouldBlock, decision (either), allowed, timeout'),
  detector: z.string().min(1).max(64).optional().describe('Only the steps this detector decided (decidedBy, e.g. prompt_injection)'),
  since: z.iso.datetime({ offset: true }).optional().describe('ISO 8601: only steps received at or after'),
  until: z.iso.datetime({ offset: true }).optional().describe('ISO 8601: only steps received before'),
  q: z.string().min(1).max(200).optional().describe("Text in the tool's name or the reason (case-insensitive)"),
  order: z.enum(['desc', 'asc']).default('desc').describe('By time received: desc (newest first, the default) or asc (oldest first)'),
});

/** A page of agent steps in the order asked (newest first by default), with the total the filters select. */
export const AgentStepPageSchema = page(AgentStepSchema)
  .extend({ total: z.number().int().describe('Steps the filters select, over every page') })
  .meta({ id: 'AgentStepPage' });

/** Steps of a period or a window by outcome; the four outcomes are disjoint and add up to `total`. */
const OutcomeCountsSchema = z
  .object({
    total: z.number().int(),
    blocked: z.number().int().describe('Vigil told Copilot Studio to block the call'),
    wouldBlock: z.number().int().describe('Not blocked, but block mode would have blocked it (monitor mode)'),
    timedOut: z.number().int().describe('Neither: the detectors ran out of time and the policy’s onTimeout answered'),
    allowed: z.number().int().describe('Allowed without objection in time'),
  })
  .meta({ id: 'OutcomeCounts' });

/** Which summary the chart shows: per hour over the last 48 hours, or per day over the last 14 days. */
export const ProtectionSummaryQuery = z.object({
  bucket: z.enum(['hour', 'day']).default('day').describe('hour: the last 48 hours per hour; day: the last 14 days per day (UTC)'),
});

/** The decisions of the organization's integrations: per integration the last 24 hours and 7 days, and over time. */
export const ProtectionSummarySchema = z
  .object({
    generatedAt: Timestamp,
    bucket: z.enum(['hour', 'day']),
    integrations: z.array(
      z.object({
        integrationId: z.string(),
        integrationName: z.string(),
        last24h: OutcomeCountsSchema.describe('Steps received in the 24 hours before generatedAt'),
        last7d: OutcomeCountsSchema.describe('Steps received in the 7 days before generatedAt'),
        topDetectors: z
          .array(z.object({ detector: z.string(), decisions: z.number().int() }))
          .describe('The detectors that blocked or would have blocked most steps in the last 7 days, at most 3, most first'),
      }),
    ),
    series: z
      .array(OutcomeCountsSchema.extend({ period: z.string().describe('UTC: YYYY-MM-DD (day) or YYYY-MM-DDTHH (hour)') }))
      .describe("Every period of the window, oldest first, summed over the organization's integrations (periods without steps count 0)"),
  })
  .meta({ id: 'ProtectionSummary' });

/** The values an integration's steps take for the step list's filters, with names and step counts. */
export const AgentStepFacetsSchema = z
  .object({
    detectors: z.array(z.object({ detector: z.string(), steps: z.number().int() })).describe('Detectors that decided steps'),
    agents: z.array(z.object({ agentId: z.string(), agentName: z.string().nullable(), steps: z.number().int() })),
    environments: z.array(
      z.object({
        environmentId: z.string(),
        environmentName: z.string().nullable().describe('Display name from the last collection'),
        steps: z.number().int(),
      }),
    ),
  })
  .meta({ id: 'AgentStepFacets' });

/** Path parameters of an integration's protection routes. */
export const ProtectionParams = z.object({ integrationId: z.string().min(1).max(200) });

/** Path parameters of a conversation's timeline. */
export const ConversationParams = ProtectionParams.extend({ conversationId: z.string().min(1).max(400) });

/**
 * One turn of a Copilot Studio conversation transcript collected from Dataverse (`conversationtranscripts`): a user
 * message, a bot reply or a tool call, its text redacted.
 */
const TranscriptTurnSchema = z
  .object({
    source: z.literal('transcript').describe('Collected from the environment’s conversation transcripts'),
    id: z.string().describe('{conversationtranscriptid}:{activity index}'),
    at: Timestamp.nullable(),
    environmentId: z.string(),
    environmentName: z.string().nullable(),
    transcriptId: z.string(),
    conversationId: z.string().nullable(),
    agentId: z.string().nullable(),
    agentName: z.string().nullable().describe('The agent’s schema name (transcript metadata BotName)'),
    userId: z.string().nullable(),
    channelId: z.string().nullable(),
    role: z.enum(['user', 'bot', 'tool']),
    toolName: z.string().nullable().describe('Tool turns: the plan step’s taskDialogId'),
    text: z.string().describe('Redacted: secrets and personal data masked as [REDACTED:type]'),
    textLength: z.number().int().describe('Length before masking, characters'),
    secrets: z.number().int(),
    personal: z.number().int(),
    findingTypes: z.array(z.string()),
    injection: z.number().nullable().describe('Prompt-injection marker confidence 0–1; null until evaluated'),
    jailbreak: z.number().nullable().describe('Jailbreak marker confidence 0–1; null until evaluated'),
    markers: z.array(z.string()).describe('Names of the injection and jailbreak patterns seen'),
  })
  .meta({ id: 'TranscriptTurn' });

/** A conversation's steps in the order they happened. */
export const ConversationTimelineSchema = z
  .object({
    integrationId: z.string(),
    conversationId: z.string(),
    agentId: z.string().nullable(),
    agentName: z.string().nullable(),
    environmentId: z.string().nullable(),
    environmentName: z.string().nullable(),
    userId: z.string().nullable(),
    steps: z.array(AgentStepSchema).describe('Runtime-protection steps, oldest first'),
    turns: z.array(TranscriptTurnSchema).describe('Transcript turns collected from Dataverse, oldest first'),
  })
  .meta({ id: 'ConversationTimeline' });

/** One conversation of an integration's collected transcripts, summarised. */
const TranscriptConversationSchema = z
  .object({
    conversationId: z.string().nullable(),
    environmentId: z.string(),
    environmentName: z.string().nullable(),
    agentId: z.string().nullable(),
    agentName: z.string().nullable(),
    userId: z.string().nullable(),
    firstAt: Timestamp.nullable(),
    lastAt: Timestamp.nullable(),
    turns: z.number().int(),
    secrets: z.number().int(),
    personal: z.number().int(),
    injection: z.number().nullable().describe('Highest prompt-injection marker confidence of its turns'),
    jailbreak: z.number().nullable().describe('Highest jailbreak marker confidence of its turns'),
  })
  .meta({ id: 'TranscriptConversation' });

/** Filters of an integration's transcript conversations. */
export const TranscriptConversationsQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });

/** The conversations of an integration's collected transcripts, latest first. */
export const TranscriptConversationListSchema = z.object({ items: z.array(TranscriptConversationSchema) }).meta({ id: 'TranscriptConversationList' });

/** A transcript conversation list, as the API shows it. */
export type TranscriptConversationList = z.infer<typeof TranscriptConversationListSchema>;

/** A transcript turn, as the API shows it. */
export type TranscriptTurn = z.infer<typeof TranscriptTurnSchema>;

const DetectorSettingSchema = z.object({ action: z.enum(['block', 'alert', 'record', 'off']), threshold: z.number() });
const AllowListsSchema = z.object({
  mcpServers: z.array(z.string()),
  connectors: z.array(z.string()),
  hosts: z.array(z.string()),
  internalDomains: z.array(z.string()),
});

/** The fields a policy sets (unset = inherited). */
const PolicyFieldsSchema = z.object({
  mode: z.enum(['monitor', 'block']).optional(),
  detectors: z.record(z.string(), z.object({ action: z.enum(['block', 'alert', 'record', 'off']).optional(), threshold: z.number().optional() })).optional(),
  allow: AllowListsSchema.partial().optional(),
  deadlineMs: z.number().int().optional(),
  onTimeout: z.enum(['allow', 'block']).optional(),
});

/** A stored policy: where it applies and the fields it sets. */
export const ProtectionPolicySchema = z
  .object({
    id: z.string(),
    integrationId: z.string().nullable().describe('Null: every integration of the organization'),
    environmentId: z.string().nullable(),
    agentId: z.string().nullable(),
    fields: PolicyFieldsSchema,
    updatedBy: z.string().nullable(),
    updatedAt: Timestamp,
  })
  .meta({ id: 'ProtectionPolicy' });

/** The policy in force for a scope, with the ids of the policies it came from, most specific first. */
const EffectivePolicySchema = z
  .object({
    mode: z.enum(['monitor', 'block']),
    detectors: z.record(z.string(), DetectorSettingSchema),
    allow: AllowListsSchema,
    deadlineMs: z.number().int(),
    onTimeout: z.enum(['allow', 'block']),
    policyIds: z.array(z.string()),
  })
  .meta({ id: 'EffectivePolicy' });

/** The policies that apply to an integration and the effective one. */
export const ProtectionPoliciesSchema = z
  .object({ policies: z.array(ProtectionPolicySchema), effective: EffectivePolicySchema })
  .meta({ id: 'ProtectionPolicies' });

/** Scope of the effective policy shown. */
export const PoliciesQuery = z.object({ environmentId: z.string().max(200).optional(), agentId: z.string().max(200).optional() });

/** Body of setting a policy: its scope within the integration and the fields it sets (fields not named are kept). */
export const ProtectionPolicyBody = protectionPolicyInputSchema.extend({
  environmentId: z.string().min(1).max(200).optional().describe('Narrow the policy to this environment'),
  agentId: z.string().min(1).max(200).optional().describe('Narrow the policy to this agent (bot id)'),
});

/** Body of starting a containment action: what to do, and the agent (named, or through the alert or agent step). */
export const ContainmentBody = z.object({
  action: z.enum(['contain', 'release']).describe('contain: quarantine the agent (users cannot use it in any channel); release: lift it'),
  alertId: z.string().min(1).max(200).optional().describe('The alert the action answers; its detail names the agent and environment'),
  stepId: z.string().min(1).max(200).optional().describe('An agent step (threat-detection call) of the agent'),
  agentId: z.string().min(1).max(200).optional().describe('Copilot Studio bot id of the agent (default: from the alert or step)'),
  environmentId: z.string().min(1).max(200).optional().describe("The agent's environment id (default: from the alert, step or inventory)"),
});

/** A containment action started: the administrator signs in with the code at the link, then the server acts. */
export const ContainmentStartedSchema = z
  .object({
    id: z.string().describe('Id of the action; it is recorded under this id once the sign-in ends'),
    status: z.literal('awaiting-sign-in'),
    userCode: z.string().describe('The code to enter at verificationUri (an administrator of the tenant signs in there)'),
    verificationUri: z.string().describe("Microsoft's device sign-in page"),
    expiresAt: Timestamp.describe('When the code expires (the action then fails with DEVICE_CODE_EXPIRED)'),
    agent: z.string().describe('Bot id of the agent acted on'),
    environment: z.string().describe("The agent's environment id"),
  })
  .meta({ id: 'ContainmentStarted' });

/** A containment action: awaiting the administrator's sign-in, or recorded with its outcome. */
const ContainmentActionSchema = z
  .object({
    id: z.string(),
    action: z.enum(['contain', 'release']),
    status: z
      .enum(['awaiting-sign-in', 'succeeded', 'refused', 'failed'])
      .describe('refused: a permission, role or sign-in was missing (see error.remediation); failed: another error'),
    integrationId: z.string(),
    environmentId: z.string(),
    agentId: z.string(),
    alertId: z.string().nullable(),
    stepId: z.string().nullable(),
    requestedBy: z.string().describe('Who asked (the user or API key)'),
    signedInAs: z.string().nullable().describe('The administrator whose sign-in made the call'),
    requestedAt: Timestamp,
    quarantined: z.boolean().nullable().describe("The agent's state after a successful action"),
    userCode: z.string().nullable().describe('While awaiting the sign-in: the code to enter'),
    verificationUri: z.string().nullable().describe('While awaiting the sign-in: where to enter it'),
    expiresAt: Timestamp.nullable().describe('While awaiting the sign-in: when the code expires'),
    error: z
      .object({ code: z.string(), message: z.string(), remediation: z.string().nullable() })
      .nullable()
      .describe('Why a refused or failed action did not happen, and the fix'),
  })
  .meta({ id: 'ContainmentAction' });

/** An integration's containment actions, newest first (those awaiting a sign-in first). */
export const ContainmentActionListSchema = z.object({ items: z.array(ContainmentActionSchema) });

/** A containment action started, as the API shows it. */
export type ContainmentStarted = z.infer<typeof ContainmentStartedSchema>;
/** A containment action, as the API shows it. */
export type ContainmentActionView = z.infer<typeof ContainmentActionSchema>;
/** An integration with its endpoint, as the API shows it. */
export type ProtectionIntegration = z.infer<typeof ProtectionIntegrationSchema>;
/** The set-up report, as the API shows it. */
export type ProtectionSetupReport = z.infer<typeof ProtectionSetupReportSchema>;
/** An endpoint, as the API shows it. */
export type ProtectionEndpoint = z.infer<typeof ProtectionEndpointSchema>;
/** The decisions summary, as the API shows it. */
export type ProtectionSummary = z.infer<typeof ProtectionSummarySchema>;
/** Steps by outcome, as the API shows them. */
export type OutcomeCounts = z.infer<typeof OutcomeCountsSchema>;
/** The step list's filter values, as the API shows them. */
export type AgentStepFacets = z.infer<typeof AgentStepFacetsSchema>;
/** An agent step, as the API shows it. */
export type AgentStep = z.infer<typeof AgentStepSchema>;
/** A conversation's timeline, as the API shows it. */
export type ConversationTimeline = z.infer<typeof ConversationTimelineSchema>;
/** Policies and the effective one, as the API shows them. */
export type ProtectionPolicies = z.infer<typeof ProtectionPoliciesSchema>;
/** A stored policy, as the API shows it. */
export type ProtectionPolicyView = z.infer<typeof ProtectionPolicySchema>;
