// Runtime protection (issue 19): Vigil as Copilot Studio's external threat-detection provider. Per integration of the
// organization: the set-up (steps with the exact values to enter, copy-friendly), what Vigil observed of it (validation,
// analyses per environment, problems with their fixes), the decisions (blocked and would-block tool calls), and a
// conversation's timeline of steps. The overview sums the decisions per integration (24 hours, 7 days, the top
// detectors) and draws them over time; the decisions list filters by outcome, detector, agent, environment (chosen by
// name), time range and text, every filter and the order in the URL. Data from /api/v1/protection
// (src/api/routes/protection.ts).
import { lazy, Suspense, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ContainAgent } from '../components/ContainAgent.tsx';
import { CopyBlock } from '../components/CopyBlock.tsx';
import { PolicySection } from '../components/ProtectionPolicy.tsx';
import { column, DataTable, sortable, timeColumn, type Column } from '../components/DataTable.tsx';
import { FilterBar, FilterLink, PagedList, SearchFilter, SelectFilter, useSearchDraft } from '../components/ListPage.tsx';
import { ErrorMessage, Ident, KeyValues, Loaded, Loading, StatusBadge, Time } from '../components/ui.tsx';
import { useListFilters, useListSort, useTitle } from '../hooks.ts';
import { useApiMutation, useApiQuery } from '../query.ts';
import type {
  AgentStep,
  AgentStepFacets,
  AgentStepPage,
  ConversationTimeline,
  ProtectionList,
  ProtectionSetupReport,
  ProtectionSummary,
  StepOutcome,
} from '../types.ts';

// The chart (and Recharts with it) loads in its own bundle, as the dashboard's do.
const DecisionsTrendChart = lazy(async () => ({ default: (await import('../components/Charts.tsx')).DecisionsTrendChart }));

type Environment = ProtectionSetupReport['environments'][number];
type IntegrationRow = ProtectionList['items'][number] & { summary: ProtectionSummary['integrations'][number] | undefined };
type Counts = ProtectionSummary['integrations'][number]['last24h'];

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

/** A name, with the id it stands for as its title (hover) rather than printed; `fallback` when there is no name. */
function Named({ name, id, fallback }: { name: string | null | undefined; id: string | null | undefined; fallback: string }) {
  if (!id) return <span className="muted">—</span>;
  return <span title={id}>{name ?? <span className="muted">{fallback}</span>}</span>;
}

/**
 * An integration's steps of a window as `blocked / would block / allowed / timeouts` (each number named for assistive
 * technology), the first two linking to those decisions.
 */
function WindowCounts({ integrationId, counts, since }: { integrationId: string; counts: Counts | undefined; since: string }) {
  if (!counts) return <span className="muted">—</span>;
  const named = (n: number, label: string) => (
    <>
      {n}
      <span className="visually-hidden"> {label}</span>
    </>
  );
  const link = (n: number, outcome: StepOutcome, label: string) =>
    n ? <Link to={`/protection/${seg(integrationId)}?outcome=${outcome}&since=${encodeURIComponent(since)}`}>{named(n, label)}</Link> : named(n, label);
  return (
    <>
      {link(counts.blocked, 'blocked', 'blocked')} / {link(counts.wouldBlock, 'wouldBlock', 'would block')} / {named(counts.allowed, 'allowed')} /{' '}
      {named(counts.timedOut, 'timeouts')}
    </>
  );
}

const PERIODS = [
  { value: 'day', label: 'Per day, last 14 days' },
  { value: 'hour', label: 'Per hour, last 48 hours' },
];

/** An integration's row: its endpoint, its summary and the start of each window (for the counts' links). */
type SummaryRow = IntegrationRow & { since24h: string; since7d: string };

/** The integrations' columns (a module constant: a cell made anew on each render is a new component, and focus in it is lost). */
const COLUMNS: Column<SummaryRow>[] = [
  column('Integration', (i) => <Link to={`/protection/${seg(i.integrationId)}`}>{i.integrationName}</Link>),
  column('Set-up', (i) => (i.endpoint ? <StatusBadge status={i.endpoint.appId ? 'ok' : 'incomplete'} /> : <span className="muted">not enabled</span>)),
  column('Last 24 h', (i) => <WindowCounts integrationId={i.integrationId} counts={i.summary?.last24h} since={i.since24h} />, 'num'),
  column('Last 7 days', (i) => <WindowCounts integrationId={i.integrationId} counts={i.summary?.last7d} since={i.since7d} />, 'num'),
  column('Top detectors (7 days)', (i) =>
    i.summary?.topDetectors.length ? (
      <ul className="plain small">
        {i.summary.topDetectors.map((d) => (
          <li key={d.detector}>
            <Link to={`/protection/${seg(i.integrationId)}?outcome=decision&detector=${encodeURIComponent(d.detector)}`}>
              <Ident id={d.detector} />
            </Link>{' '}
            {d.decisions}
          </li>
        ))}
      </ul>
    ) : (
      <span className="muted">—</span>
    ),
  ),
  column('Validated', (i) => <Time value={i.endpoint?.validatedAt} />),
  column('Last analysis', (i) => <Time value={i.endpoint?.lastAnalysisAt} />),
  column('Refused calls', (i) => (i.endpoint ? String(i.endpoint.authFailures) : '—'), 'num'),
];

/** `/protection`: every integration with the state of its endpoint and its decisions, and the decisions over time. */
export function ProtectionPage() {
  useTitle('Protection');
  const filters = useListFilters();
  const bucket = filters.get('bucket', 'day') === 'hour' ? 'hour' : 'day';
  const list = useApiQuery<ProtectionList>('/protection');
  const summary = useApiQuery<ProtectionSummary>('/protection/summary', { bucket: bucket === 'day' ? undefined : bucket });
  const s = summary.data;
  const since = (hours: number) => new Date(new Date(s?.generatedAt ?? Date.now()).getTime() - hours * 3_600_000).toISOString();
  const total = (k: 'last24h' | 'last7d', o: keyof Counts) => (s?.integrations ?? []).reduce((n, i) => n + i[k][o], 0);
  return (
    <>
      <h1>Protection</h1>
      <p className="muted">
        Vigil as the external threat-detection provider of Copilot Studio: agents ask Vigil before each tool call, and Vigil allows it, blocks it, or records
        that it would have blocked it (monitor mode).
      </p>
      <section aria-labelledby="h-over-time" className="card">
        <h2 id="h-over-time">Decisions over time</h2>
        <FilterBar label="Chart period">
          <SelectFilter id="p-bucket" label="Period" options={PERIODS} {...filters.bind('bucket', 'day')} />
        </FilterBar>
        <Loaded query={summary}>
          {(d) => (
            <Suspense fallback={<Loading label="Drawing the chart…" />}>
              <DecisionsTrendChart points={d.series} bucket={d.bucket} />
            </Suspense>
          )}
        </Loaded>
      </section>
      <Loaded query={list}>
        {(l) => (
          <>
            {s ? (
              <p role="status" className="muted">
                Tool calls per window: blocked / would block / allowed / timeouts. {l.items.length} integration{l.items.length === 1 ? '' : 's'}; last 24 hours:{' '}
                {total('last24h', 'total')} tool calls, {total('last24h', 'blocked')} blocked, {total('last24h', 'wouldBlock')} would block; last 7 days:{' '}
                {total('last7d', 'total')} tool calls, {total('last7d', 'blocked')} blocked, {total('last7d', 'wouldBlock')} would block.
              </p>
            ) : null}
            <DataTable
              label="Integrations and their protection endpoints"
              rows={l.items.map((i) => ({
                ...i,
                summary: s?.integrations.find((x) => x.integrationId === i.integrationId),
                since24h: since(24),
                since7d: since(24 * 7),
              }))}
              columns={COLUMNS}
              rowId={(i) => i.integrationId}
              empty="No integration yet."
            />
          </>
        )}
      </Loaded>
    </>
  );
}

const ENVIRONMENTS: Column<Environment>[] = [
  column('Environment', (e) => (
    <>
      <FilterLink name="environmentId" value={e.environmentId} label={`Only the decisions of environment ${e.displayName ?? 'without a name'}`}>
        <Named name={e.displayName} id={e.environmentId} fallback="environment without a name" />
      </FilterLink>
      <details className="small">
        <summary>Show id</summary>
        <code>{e.environmentId}</code>
      </details>
    </>
  )),
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

const OUTCOMES: { value: StepOutcome | 'all'; label: string }[] = [
  { value: 'decision', label: 'Blocked or would block' },
  { value: 'all', label: 'Any outcome' },
  { value: 'blocked', label: 'Blocked' },
  { value: 'wouldBlock', label: 'Would block' },
  { value: 'allowed', label: 'Allowed' },
  { value: 'timeout', label: 'Timed out' },
];

function stepColumns(integrationId: string): Column<AgentStep>[] {
  return [
    sortable(
      timeColumn('Time', (s) => s.receivedAt),
      'receivedAt',
    ),
    column('Outcome', (s) => <OutcomeBadge step={s} />),
    column('Agent', (s) => <Named name={s.agentName} id={s.agentId} fallback="agent without a name" />),
    column('Environment', (s) => <Named name={s.environmentName} id={s.environmentId} fallback="environment not collected" />),
    column('Tool', (s) => s.toolName ?? s.toolId ?? '—'),
    column('Detector', (s) =>
      s.decidedBy ? (
        <FilterLink name="detector" value={s.decidedBy} label={`Only the decisions of detector ${s.decidedBy}`}>
          {s.decidedBy}
        </FilterLink>
      ) : (
        '—'
      ),
    ),
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

/** `YYYY-MM-DDTHH:MM` (a datetime-local value, read as UTC) from an ISO instant, or ''. */
const toLocalInput = (iso: string) => (iso ? iso.slice(0, 16) : '');
/** An ISO 8601 UTC instant from a datetime-local value read as UTC, or ''. */
const fromLocalInput = (v: string) => (v ? `${v}:00Z` : '');

/** The time fields of the decision filters, drafted and applied with the search (Enter or Search); they follow the URL (Back). */
function useRangeDraft(since: string, until: string) {
  const url = { since: toLocalInput(since), until: toLocalInput(until) };
  const [draft, setDraft] = useState(url);
  const [last, setLast] = useState(url);
  if (url.since !== last.since || url.until !== last.until) {
    setLast(url);
    setDraft(url);
  }
  return { draft, setDraft };
}

function DecisionsSection({ integrationId }: { integrationId: string }) {
  const filters = useListFilters();
  const sort = useListSort(filters, ['receivedAt'] as const, 'receivedAt');
  const [detector, agentId, environmentId, since, until, q] = ['detector', 'agentId', 'environmentId', 'since', 'until', 'q'].map((k) => filters.get(k)) as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const chosen = filters.get('outcome', 'decision');
  const facets = useApiQuery<AgentStepFacets>(`/protection/${seg(integrationId)}/steps/facets`);
  const page = useApiQuery<AgentStepPage>(`/protection/${seg(integrationId)}/steps`, {
    outcome: chosen === 'all' ? undefined : chosen,
    detector,
    agentId,
    environmentId,
    since,
    until,
    q,
    order: sort.query.order,
    cursor: filters.cursor,
    limit: 50,
  });
  const search = useSearchDraft(q);
  const range = useRangeDraft(since, until);
  const f = facets.data;
  const [columns] = useState(() => stepColumns(integrationId));
  const total = page.data?.total;
  const time = (id: 'since' | 'until', label: string) => (
    <div className="field">
      <label htmlFor={`p-${id}`}>{label}</label>
      <input id={`p-${id}`} type="datetime-local" value={range.draft[id]} onChange={(e) => range.setDraft((d) => ({ ...d, [id]: e.target.value }))} />
    </div>
  );
  return (
    <section aria-labelledby="h-decisions" className="card">
      <h2 id="h-decisions">Decisions</h2>
      <FilterBar
        label="Decision filters"
        onSubmit={() => filters.update({ q: search.draft.trim(), since: fromLocalInput(range.draft.since), until: fromLocalInput(range.draft.until) })}
      >
        <SelectFilter id="p-outcome" label="Outcome" options={OUTCOMES} {...filters.bind('outcome', 'decision')} />
        <SelectFilter
          id="p-detector"
          label="Detector"
          all="All detectors"
          options={(f?.detectors ?? []).map((d) => ({ value: d.detector, label: `${d.detector} (${d.steps})` }))}
          {...filters.bind('detector')}
        />
        <SelectFilter
          id="p-agent"
          label="Agent"
          all="All agents"
          options={(f?.agents ?? []).map((a) => ({ value: a.agentId, label: `${a.agentName ?? 'agent without a name'} (${a.steps})` }))}
          {...filters.bind('agentId')}
        />
        <SelectFilter
          id="p-environment"
          label="Environment"
          all="All environments"
          options={(f?.environments ?? []).map((e) => ({ value: e.environmentId, label: `${e.environmentName ?? 'environment not collected'} (${e.steps})` }))}
          {...filters.bind('environmentId')}
        />
        {time('since', 'From (UTC)')}
        {time('until', 'Until (UTC)')}
        <SearchFilter id="p-q" label="Tool or reason" draft={search.draft} setDraft={search.setDraft} placeholder="Send an email" />
      </FilterBar>
      <PagedList
        query={page}
        summary={(n) =>
          `${total ?? n} decision${(total ?? n) === 1 ? '' : 's'} match${(total ?? n) === 1 ? 'es' : ''}${q ? ` "${q}"` : ''}; ${n} on this page.`
        }
        pager={{ label: 'Decision pages', ...filters.pager(page.data?.nextCursor) }}
      >
        {(items) => (
          <DataTable label="Tool calls and Vigil's answers" rows={items} columns={columns} sort={sort.table} empty="No tool call matches these filters." />
        )}
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
