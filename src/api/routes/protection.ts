import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { commonErrors, ErrorSchema } from '../../contract/common.ts';
import {
  AgentStepFacetsSchema,
  AgentStepPageSchema,
  ContainmentActionListSchema,
  ContainmentBody,
  ContainmentStartedSchema,
  AgentStepsQuery,
  ConversationParams,
  ConversationTimelineSchema,
  PoliciesQuery,
  ProtectionEnableBody,
  ProtectionEndpointSchema,
  ProtectionListSchema,
  ProtectionParams,
  ProtectionPoliciesSchema,
  ProtectionPolicyBody,
  ProtectionPolicySchema,
  ProtectionSetupReportSchema,
  ProtectionSummaryQuery,
  ProtectionSummarySchema,
  TranscriptConversationListSchema,
  TranscriptConversationsQuery,
} from '../../contract/protection.ts';
import {
  conversationTimelineOf,
  enableProtectionFor,
  protectionOverview,
  protectionPoliciesOf,
  protectionSetupOf,
  protectionStepFacets,
  protectionStepsPage,
  protectionSummary,
  setProtectionPolicyFor,
  transcriptConversationsOf,
} from '../../reporting/protection.ts';
import { ContainmentSessions, containmentActionsOf, startContainment } from '../../reporting/containment.ts';
import { principalOf } from '../auth.ts';
import type { ApiContext } from '../context.ts';

/**
 * `/api/v1/protection` (issue 19): runtime protection's set-up, decisions, conversation timelines and policies per
 * integration of the caller's organization; the same use cases as `vigil protection …` (src/reporting/protection.ts).
 * Copilot Studio's own calls go to `/protection/{endpointId}/…` outside `/api/v1` (src/api/protection.ts).
 */
export function protectionApiRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  // Containment sign-ins started here and still polling (in memory, bounded); stopped when the server closes.
  const containment = new ContainmentSessions();
  app.addHook('onClose', async () => containment.close());

  r.get(
    '/protection',
    {
      schema: {
        tags: ['protection'],
        summary: 'Every integration of the organization with its threat-detection endpoint (null: protection not enabled)',
        response: { 200: ProtectionListSchema, ...commonErrors },
      },
    },
    async (request) => protectionOverview(ctx.db, principalOf(request), ctx.region.apiUrl),
  );

  r.get(
    '/protection/summary',
    {
      schema: {
        tags: ['protection'],
        summary:
          "Decisions of the organization's integrations: per integration the last 24 hours and 7 days by outcome and the top detectors, and the steps per hour or day by outcome",
        querystring: ProtectionSummaryQuery,
        response: { 200: ProtectionSummarySchema, ...commonErrors },
      },
    },
    async (request) => protectionSummary(ctx.db, principalOf(request), request.query.bucket),
  );

  r.get(
    '/protection/:integrationId',
    {
      schema: {
        tags: ['protection'],
        summary: "An integration's set-up: the steps with the exact values, validation, analyses per environment, problems with their fixes",
        params: ProtectionParams,
        response: { 200: ProtectionSetupReportSchema, ...commonErrors },
      },
    },
    async (request) => protectionSetupOf(ctx.db, principalOf(request), request.params.integrationId, { apiUrl: ctx.region.apiUrl, cloud: ctx.cloud }),
  );

  r.put(
    '/protection/:integrationId',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['protection'],
        summary: 'Enable protection (the base URL first), or set its application and audiences; idempotent',
        params: ProtectionParams,
        body: ProtectionEnableBody,
        response: { 200: ProtectionEndpointSchema, ...commonErrors },
      },
    },
    async (request) => enableProtectionFor(ctx.db, principalOf(request), request.params.integrationId, request.body, ctx.region.apiUrl),
  );

  r.get(
    '/protection/:integrationId/steps',
    {
      schema: {
        tags: ['protection'],
        summary: 'Tool calls Copilot Studio asked about and what Vigil answered, newest first (or oldest first), with the total the filters select',
        params: ProtectionParams,
        querystring: AgentStepsQuery,
        response: { 200: AgentStepPageSchema, ...commonErrors },
      },
    },
    async (request) => protectionStepsPage(ctx.db, principalOf(request), request.params.integrationId, request.query),
  );

  r.get(
    '/protection/:integrationId/steps/facets',
    {
      schema: {
        tags: ['protection'],
        summary: "The values the integration's steps take for the step filters: detectors, agents and environments with their names and step counts",
        params: ProtectionParams,
        response: { 200: AgentStepFacetsSchema, ...commonErrors },
      },
    },
    async (request) => protectionStepFacets(ctx.db, principalOf(request), request.params.integrationId),
  );

  r.get(
    '/protection/:integrationId/conversations/:conversationId',
    {
      schema: {
        tags: ['protection'],
        summary: "A conversation's timeline: runtime-protection steps and collected transcript turns, oldest first",
        params: ConversationParams,
        response: { 200: ConversationTimelineSchema, ...commonErrors },
      },
    },
    async (request) => conversationTimelineOf(ctx.db, principalOf(request), request.params.integrationId, request.params.conversationId),
  );

  r.get(
    '/protection/:integrationId/transcripts',
    {
      schema: {
        tags: ['protection'],
        summary: 'Conversations of the collected Copilot Studio transcripts, latest first, with their inspection and marker totals',
        params: ProtectionParams,
        querystring: TranscriptConversationsQuery,
        response: { 200: TranscriptConversationListSchema, ...commonErrors },
      },
    },
    async (request) => transcriptConversationsOf(ctx.db, principalOf(request), request.params.integrationId, request.query.limit),
  );

  r.get(
    '/protection/:integrationId/policies',
    {
      schema: {
        tags: ['protection'],
        summary: 'The policies that apply to the integration and the effective policy (for an environment and an agent when given)',
        params: ProtectionParams,
        querystring: PoliciesQuery,
        response: { 200: ProtectionPoliciesSchema, ...commonErrors },
      },
    },
    async (request) => protectionPoliciesOf(ctx.db, principalOf(request), request.params.integrationId, request.query),
  );

  r.put(
    '/protection/:integrationId/policy',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['protection'],
        summary: 'Set fields of the policy of the integration (or of one environment or agent of it); fields not named are kept',
        params: ProtectionParams,
        body: ProtectionPolicyBody,
        response: { 200: ProtectionPolicySchema, ...commonErrors },
      },
    },
    async (request) => {
      const { environmentId, agentId, ...changes } = request.body;
      return setProtectionPolicyFor(ctx.db, principalOf(request), request.params.integrationId, { environmentId, agentId }, changes);
    },
  );

  r.post(
    '/protection/:integrationId/containment',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['protection'],
        summary:
          "Quarantine (contain) or release a Copilot Studio agent: answers the device code an administrator signs in with; the server then calls Microsoft's quarantine API and records the action",
        params: ProtectionParams,
        body: ContainmentBody,
        response: { 202: ContainmentStartedSchema, ...commonErrors, 409: ErrorSchema, 422: ErrorSchema, 503: ErrorSchema },
      },
    },
    async (request, reply) => {
      const started = await startContainment(ctx, containment, principalOf(request), request.params.integrationId, request.body);
      return reply.code(202).send(started);
    },
  );

  r.get(
    '/protection/:integrationId/containment',
    {
      schema: {
        tags: ['protection'],
        summary: 'Containment actions of the integration, newest first: those awaiting the sign-in, then the recorded ones with their outcome',
        params: ProtectionParams,
        response: { 200: ContainmentActionListSchema, ...commonErrors },
      },
    },
    async (request) => containmentActionsOf(ctx, containment, principalOf(request), request.params.integrationId),
  );
}
