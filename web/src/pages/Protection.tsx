// Runtime protection (issue 19): Vigil as Copilot Studio's external threat-detection provider. Per integration of the
// organization: the set-up (steps with the exact values to enter, copy-friendly), what Vigil observed of it (validation,
// analyses per environment, problems with their fixes), the decisions (blocked and would-block tool calls), and a
// conversation's timeline of steps. Data from /api/v1/protection (src/api/routes/protection.ts).
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ContainAgent } from '../components/ContainAgent.tsx';
import { CopyBlock } from '../components/CopyBlock.tsx';
import { PolicySection } from '../components/ProtectionPolicy.tsx';
import { column, DataTable, NameAndId, timeColumn, type Column } from '../components/DataTable.tsx';
import { FilterBar, PagedList, SelectFilter } from '../components/ListPage.tsx';
import { ErrorMessage, KeyValues, Loaded, StatusBadge, Time } from '../components/ui.tsx';
import { useListFilters, useTitle } from '../hooks.ts';
import { useApiMutation, useApiQuery } from '../query.ts';
import type { AgentStep, AgentStepPage, ConversationTimeline, ProtectionList, ProtectionSetupReport, StepOutcome } from '../types.ts';

type Environment = ProtectionSetupReport['environments'][number];

/** A step's outcome in a word or two, and the badge colour that goes with it. */
function outcome(s: AgentStep): { label: string; tone: 'bad' | 'warn' | 'ok' } {
  if (s.blockAction) return { label: 'blocked', tone: 'bad' };
  if (s.wouldBlock) return { label: 'would block', tone: 'warn' };
  if (s.timedOut) return { label: 'timed out', tone: 'warn' };
  return { label: 'allowed', tone: 'ok' };
}

function OutcomeBadge({ step }: { step: AgentStep }) {
  const o = outcome(step);
  return <span className={`badge st-${o.tone}`}>{o.label}</span>;
}

/** The integrations' columns (a module constant: a cell made anew on each render is a new component, and focus in it is lost). */
const COLUMNS: Column<ProtectionList['items'][number]>[] = [
  column('Integration', (i) => <Link to={`/protection/${seg(i.integrationId)}`}>{i.integrationName}</Link>),
  column('Endpoint', (i) => (i.endpoint ? <StatusBadge status={i.endpoint.appId ? 'ok' : 'incomplete'} /> : <span className="muted">not enabled</span>)),
  column('Validated', (i) => <Time value={i.endpoint?.validatedAt} />),
  column('Last analysis', (i) => <Time value={i.endpoint?.lastAnalysisAt} />),
  column('Refused calls', (i) => (i.endpoint ? String(i.endpoint.authFailures) : '—'), 'num'),
];

/** `/protection`: every integration with the state of its endpoint. */
export function ProtectionPage() {
  useTitle('Protection');
  const list = useApiQuery<ProtectionList>('/protection');
  return (
    <>
      <h1>Protection</h1>
      <p className="muted">
        Vigil as the external threat-detection provider of Copilot Studio: agents ask Vigil before each tool call, and Vigil allows it, blocks it, or records
        that it would have blocked it (monitor mode).
      </p>
      <Loaded query={list}>
        {(l) => (
          <DataTable
            label="Integrations and their protection endpoints"
            rows={l.items}
            columns={COLUMNS}
            rowId={(i) => i.integrationId}
            empty="No integration yet."
          />
        )}
      </Loaded>
    </>
  );
}

const ENVIRONMENTS: Column<Environment>[] = [
  column('Environment', (e) => <NameAndId name={e.displayName ?? e.environmentId} id={e.environmentId} />),
  column(
    'Agents (generative / classic)',
    (e) => `${e.agents.generative} / ${e.agents.classic}${e.agents.unknown ? ` (+${e.agents.unknown} unknown)` : ''}`,
    'num',
  ),
  column('Agents calling', (e) => String(e.agentsCalling), 'num'),
  column('Analyses', (e) => String(e.calls), 'num'),
  timeColumn('First analysis', (e) => e.firstAnalysisAt),
  timeColumn('Last analysis', (e) => e.lastAnalysisAt),
];

function SetupSection({ integrationId }: { integrationId: string }) {
  const { isAdmin } = useAuth();
  const report = useApiQuery<ProtectionSetupReport>(`/protection/${seg(integrationId)}`);
  const enable = useApiMutation(() => api.put<unknown>(`/protection/${seg(integrationId)}`, {}), { invalidates: ['/protection'] });
  return (
    <section aria-labelledby="h-setup" className="card">
      <h2 id="h-setup">Set-up</h2>
      <Loaded query={report}>
        {(r) => (
          <>
            {r.problems.length ? (
              <div className="banner" role="note" aria-labelledby="h-problems">
                <h3 id="h-problems">To do</h3>
                <ul>
                  {r.problems.map((p) => (
                    <li key={p}>{p}</li>
                  ))}
                </ul>
              </div>
            ) : (
              <p className="notice">Everything Vigil can observe is in place.</p>
            )}
            {!r.endpoint && isAdmin ? (
              <p>
                <button type="button" onClick={() => enable.mutate(undefined)} disabled={enable.isPending}>
                  Enable protection
                </button>
              </p>
            ) : null}
            <ErrorMessage error={enable.error} />
            {r.endpoint ? (
              <KeyValues
                entries={[
                  [
                    'Base URL',
                    r.endpoint.baseUrl ? <code key="b">{r.endpoint.baseUrl}</code> : <span className="muted">unknown until VIGIL_API_URL is set</span>,
                  ],
                  ['Application (client) ID', r.endpoint.appId ? <code key="a">{r.endpoint.appId}</code> : <span className="text-bad">not configured</span>],
                  ['Validated by Copilot Studio', <Time key="v" value={r.endpoint.validatedAt} />],
                  ['Refused calls', `${r.endpoint.authFailures}${r.endpoint.lastAuthFailureReason ? ` (last: ${r.endpoint.lastAuthFailureReason})` : ''}`],
                ]}
              />
            ) : null}
            {r.setup ? (
              <>
                <h3>Values to enter</h3>
                <CopyBlock label="Endpoint link (base URL)" value={r.setup.baseUrl} />
                <CopyBlock label="Application ID URI" value={r.setup.applicationIdUri} />
                <CopyBlock label="Federated credential issuer" value={r.setup.federatedCredential.issuer} />
                <CopyBlock label="Federated credential subject" value={r.setup.federatedCredential.subject} />
                <h3>Steps</h3>
                <ol className="protection-steps">
                  {r.setup.steps.map((s) => (
                    <li key={s.title}>
                      <strong>{s.title}</strong>
                      <ul>
                        {s.detail.map((d) => (
                          <li key={d}>{d}</li>
                        ))}
                      </ul>
                    </li>
                  ))}
                </ol>
                <details>
                  <summary>PowerShell script (Microsoft Graph PowerShell SDK)</summary>
                  <CopyBlock label="PowerShell script" value={r.setup.powershell} />
                </details>
              </>
            ) : null}
            <h3 id="h-environments">Environments</h3>
            <DataTable
              label="Analyses received per environment"
              rows={r.environments}
              columns={ENVIRONMENTS}
              rowId={(e) => e.environmentId}
              empty="No environment collected or seen yet."
            />
          </>
        )}
      </Loaded>
    </section>
  );
}

const OUTCOMES: { value: StepOutcome; label: string }[] = [
  { value: 'decision', label: 'Blocked or would block' },
  { value: 'blocked', label: 'Blocked' },
  { value: 'wouldBlock', label: 'Would block' },
  { value: 'allowed', label: 'Allowed' },
  { value: 'timeout', label: 'Timed out' },
];

function stepColumns(integrationId: string): Column<AgentStep>[] {
  return [
    timeColumn('Time', (s) => s.receivedAt),
    column('Outcome', (s) => <OutcomeBadge step={s} />),
    column('Agent', (s) => s.agentName ?? s.agentId ?? '—'),
    column('Tool', (s) => s.toolName ?? s.toolId ?? '—'),
    column('Detector', (s) => s.decidedBy ?? '—'),
    column('Reason', (s) => s.reason),
    column('Conversation', (s) =>
      s.conversationId ? (
        <Link to={`/protection/${seg(integrationId)}/conversations/${seg(s.conversationId)}`}>
          Timeline
          <span className="visually-hidden">
            {' '}
            of the conversation of {s.agentName ?? 'this agent'} at {s.receivedAt}
          </span>
        </Link>
      ) : (
        '—'
      ),
    ),
  ];
}

function DecisionsSection({ integrationId }: { integrationId: string }) {
  const filters = useListFilters();
  const chosen = filters.get('outcome', 'decision');
  const page = useApiQuery<AgentStepPage>(`/protection/${seg(integrationId)}/steps`, { outcome: chosen, cursor: filters.cursor, limit: 50 });
  const [columns] = useState(() => stepColumns(integrationId));
  return (
    <section aria-labelledby="h-decisions" className="card">
      <h2 id="h-decisions">Decisions</h2>
      <FilterBar label="Decision filters">
        <SelectFilter id="p-outcome" label="Outcome" options={OUTCOMES} {...filters.bind('outcome', 'decision')} />
      </FilterBar>
      <PagedList query={page} pager={{ label: 'Decision pages', ...filters.pager(page.data?.nextCursor) }}>
        {(items) => <DataTable label="Tool calls and Vigil's answers, newest first" rows={items} columns={columns} empty="No tool call with this outcome." />}
      </PagedList>
    </section>
  );
}

/** `/protection/:integrationId`: the set-up, the policy and the decisions of one integration. */
export function ProtectionIntegrationPage() {
  const { integrationId = '' } = useParams();
  const list = useApiQuery<ProtectionList>('/protection');
  const name = list.data?.items.find((i) => i.integrationId === integrationId)?.integrationName;
  useTitle(`Protection ${name ?? ''}`.trim());
  return (
    <>
      <p className="crumbs">
        <Link to="/protection">Protection</Link> ›
      </p>
      <h1>Protection of {name ?? 'the integration'}</h1>
      <SetupSection integrationId={integrationId} />
      <PolicySection integrationId={integrationId} />
      <DecisionsSection integrationId={integrationId} />
    </>
  );
}

/** One step of a conversation: the tool, the decision, the detectors with their redacted evidence, the latency. */
function TimelineStep({ step }: { step: AgentStep }) {
  const detected = step.verdicts.filter((v) => v.detected);
  return (
    <li className="protection-step">
      <div className="alert-head">
        <OutcomeBadge step={step} /> <strong>{step.toolName ?? step.toolId ?? 'unknown tool'}</strong>{' '}
        <span className="small muted">
          <Time value={step.receivedAt} /> · {step.latencyMs} ms (detectors {step.engineMs} ms) · {step.mode} mode
        </span>
      </div>
      <p>{step.reason}</p>
      {detected.length ? (
        <ul aria-label="Detectors that objected">
          {detected.map((v) => (
            <li key={v.detector}>
              <code>{v.detector}</code> (confidence {v.confidence}): {v.summary}
              {v.evidence.length ? (
                <ul>
                  {v.evidence.map((e, i) => (
                    <li key={`${e.field}-${i}`}>
                      <code>{e.field}</code>: <q>{e.excerpt}</q>
                    </li>
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/**
 * `/protection/:integrationId/conversations/:conversationId`: a conversation's runtime-protection steps and collected
 * transcript turns in the order they happened.
 */
export function ConversationPage() {
  const { integrationId = '', conversationId = '' } = useParams();
  const timeline = useApiQuery<ConversationTimeline>(`/protection/${seg(integrationId)}/conversations/${seg(conversationId)}`);
  const list = useApiQuery<ProtectionList>('/protection');
  const integrationName = list.data?.items.find((i) => i.integrationId === integrationId)?.integrationName ?? 'Integration';
  const t = timeline.data;
  useTitle(t ? `Conversation with ${t.agentName ?? t.agentId ?? 'an agent'}` : 'Conversation');
  return (
    <>
      <p className="crumbs">
        <Link to="/protection">Protection</Link> › <Link to={`/protection/${seg(integrationId)}`}>{integrationName}</Link> ›
      </p>
      <h1>Conversation{t ? ` with ${t.agentName ?? t.agentId ?? 'an agent'}` : ''}</h1>
      <Loaded query={timeline}>
        {(c) => (
          <>
            <KeyValues
              entries={[
                ['Agent', c.agentName ?? c.agentId],
                ['Environment', c.environmentName ?? c.environmentId],
                ['User', c.userId],
                ['Conversation ID', <code key="c">{c.conversationId}</code>],
              ]}
            />
            {c.agentId ? (
              <ContainAgent
                integrationId={integrationId}
                agentId={c.agentId}
                environmentId={c.environmentId}
                stepId={c.steps.at(-1)?.id}
                agentLabel={c.agentName ?? c.agentId}
              />
            ) : null}
            <h2 id="h-steps">Steps, oldest first</h2>
            <ol className="timeline" aria-labelledby="h-steps">
              {c.steps.map((s) => (
                <TimelineStep key={s.id} step={s} />
              ))}
            </ol>
            {c.turns.length > 0 ? (
              <>
                <h2 id="h-turns">Transcript turns, oldest first</h2>
                <p className="muted">Collected from the environment’s conversation transcripts; secrets and personal data are masked.</p>
                <ol className="timeline" aria-labelledby="h-turns">
                  {c.turns.map((turn) => (
                    <li key={turn.id}>
                      <strong>{turn.role === 'tool' ? `Tool ${turn.toolName ?? ''}` : turn.role === 'user' ? 'User' : 'Agent'}</strong>{' '}
                      <time>{turn.at ?? ''}</time>
                      {turn.findingTypes.length > 0 ? <span className="badge"> {turn.findingTypes.join(', ')}</span> : null}
                      {turn.markers.length > 0 ? <span className="badge"> {turn.markers.join(', ')}</span> : null}
                      <p>{turn.text}</p>
                    </li>
                  ))}
                </ol>
              </>
            ) : null}
          </>
        )}
      </Loaded>
    </>
  );
}
