import { lazy, Suspense, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import type { components } from '../api-types.ts';
import { CopyBlock } from '../components/CopyBlock.tsx';
import { seg } from '../api.ts';
import { column, DataTable, severityColumn, statusColumn, timeColumn, type Column } from '../components/DataTable.tsx';
import { JsonValue, KeyValues, Loaded, Loading, Time } from '../components/ui.tsx';
import { useTitle } from '../hooks.ts';
import { useApiQuery } from '../query.ts';
import type { AgentDetail } from '../types.ts';
import { FindingLink } from './Findings.tsx';
import { environmentUrl, RiskBadge } from './Estate.tsx';

// React Flow is loaded with the reach graph only, in its own chunk (the other pages do not need it).
const ReachGraph = lazy(() => import('../components/ReachGraph.tsx').then((m) => ({ default: m.ReachGraph })));

// Dataverse `bot` option sets (learn.microsoft.com/power-apps/developer/data-platform/reference/entities/bot).
const AUTH_MODE: Record<number, string> = {
  0: 'Unspecified',
  1: 'No authentication',
  2: 'Authenticate with Microsoft (integrated)',
  3: 'Authenticate manually (custom Microsoft Entra ID)',
  4: 'Authenticate manually (generic OAuth 2)',
};
const AUTH_TRIGGER: Record<number, string> = { 0: 'As needed', 1: 'Always (sign-in required)' };
const ACCESS_POLICY: Record<number, string> = {
  0: 'Any user who can reach a channel',
  1: 'Agent readers only (shared users)',
  2: 'Members of security groups',
  3: 'Any user of any Microsoft Entra tenant (multitenant)',
};

function option(v: number | string | null | undefined, labels: Record<number, string>) {
  if (v === null || v === undefined) return <span className="muted">not set</span>;
  if (typeof v === 'number') return labels[v] ? `${labels[v]} (${v})` : String(v);
  return v;
}

type Detail = AgentDetail;

const COMPONENTS: Column<Detail['components'][number]>[] = [
  column('Name', (c) => c.name ?? 'Unnamed component'),
  column('Kind', (c) => (typeof c.attributes.kind === 'string' ? c.attributes.kind : '—')),
  column('Attributes', (c) => <JsonValue value={c.attributes} summary="Attributes" />),
];

const FINDINGS: Column<Detail['findings'][number]>[] = [
  severityColumn(),
  column('Finding', (f) => <FindingLink f={f} />),
  statusColumn((f) => f.status),
  timeColumn('Last seen', (f) => f.lastSeenAt),
];

const EVENTS: Column<Detail['events'][number]>[] = [
  timeColumn('Time', (e) => e.creationTime),
  column('Operation', (e) => e.operation ?? '—'),
  column('User', (e) => e.userId ?? '—'),
  column('Client IP', (e) => e.clientIp ?? '—'),
];

/** The configuration of an agent as its rows of name and value. */
function configuration(data: Detail, integrationId: string): [string, ReactNode][] {
  const a = data.agent;
  return [
    [
      'Environment',
      data.environment ? (
        <Link key="e" to={environmentUrl(integrationId, data.environment.id)}>
          {data.environment.name ?? 'Unnamed environment'}
        </Link>
      ) : null,
    ],
    [
      'Owner',
      data.owner ? (
        (data.owner.name ?? 'Unnamed user')
      ) : (
        <span key="o" className="muted">
          unknown
        </span>
      ),
    ],
    ['State', a.stateCode === null ? null : `${a.stateCode === 0 ? 'Active' : a.stateCode === 1 ? 'Inactive' : a.stateCode} (status ${a.statusCode ?? '—'})`],
    ['Published', <Time key="p" value={a.publishedOn} />],
    ['Modified', <Time key="m" value={a.modifiedOn} />],
    ['Created', <Time key="c" value={a.createdOn} />],
  ];
}

/** The agent's reach graph (GET …/reach) with its risk figure. */
function Reach({ integrationId, agentId }: { integrationId: string; agentId: string }) {
  const query = useApiQuery<components['schemas']['AgentReach']>(`/integrations/${seg(integrationId)}/agents/${seg(agentId)}/reach`);
  return (
    <Loaded query={query}>
      {(reach) => (
        <>
          <p>
            Risk <RiskBadge score={reach.score} reasons={reach.reasons} /> <span className="small muted">{reach.reasons.join(' · ')}</span>
          </p>
          <Suspense fallback={<Loading label="Drawing the reach graph…" />}>
            <ReachGraph reach={reach} />
          </Suspense>
        </>
      )}
    </Loaded>
  );
}

export function AgentPage() {
  const { integrationId = '', agentId = '' } = useParams();
  const query = useApiQuery<Detail>(`/integrations/${seg(integrationId)}/agents/${seg(agentId)}`);
  const a = query.data?.agent;
  useTitle(a ? `Agent ${a.name ?? a.id}` : 'Agent');
  const noAuth = a && (a.authenticationMode === 1 || (typeof a.authenticationMode === 'string' && /^none$/i.test(a.authenticationMode)));

  return (
    <>
      <p className="crumbs">
        <Link to="/agents">Agents</Link> ›
      </p>
      <h1>{a ? (a.name ?? a.id) : 'Agent'}</h1>
      <Loaded query={query}>
        {(data) => (
          <div className="dash-grid">
            <section aria-labelledby="h-config" className="card">
              <h2 id="h-config">Configuration</h2>
              <KeyValues entries={configuration(data, integrationId)} />
              <details>
                <summary>IDs</summary>
                <CopyBlock label="Agent ID" value={data.agent.id} />
                <CopyBlock label="Environment ID" value={data.agent.environmentId} />
                {data.agent.schemaName ? <CopyBlock label="Schema name" value={data.agent.schemaName} /> : null}
                {data.owner?.entraObjectId ? <CopyBlock label="Owner's Entra object ID" value={data.owner.entraObjectId} /> : null}
              </details>
            </section>

            <section aria-labelledby="h-reach" className="card wide">
              <h2 id="h-reach">Reach</h2>
              <Reach integrationId={integrationId} agentId={agentId} />
            </section>

            <section aria-labelledby="h-auth" className="card">
              <h2 id="h-auth">Authentication</h2>
              <KeyValues
                entries={[
                  ['Authentication mode', option(data.agent.authenticationMode, AUTH_MODE)],
                  ['Sign-in trigger', option(data.agent.authenticationTrigger, AUTH_TRIGGER)],
                ]}
              />
              {noAuth ? (
                <p className="text-bad">
                  <strong>Anyone with the link or a channel can chat with this agent without signing in.</strong>
                </p>
              ) : null}
              <h2 id="h-sharing" className="mt">
                Sharing and access control
              </h2>
              <KeyValues entries={[['Access control policy', option(data.agent.accessControlPolicy, ACCESS_POLICY)]]} />
            </section>

            <section aria-labelledby="h-settings" className="card wide">
              <h2 id="h-settings">Settings and channels</h2>
              {data.settings ? <JsonValue value={data.settings} summary="Show settings" /> : <p className="muted">No settings collected.</p>}
              {data.agent.raw ? <JsonValue value={data.agent.raw} summary="Show the raw Dataverse record" /> : null}
            </section>

            <section aria-labelledby="h-components" className="card wide">
              <h2 id="h-components">Components ({data.components.length})</h2>
              <DataTable label="Components" rows={data.components} columns={COMPONENTS} empty="No components (topics, tools, knowledge) collected." />
            </section>

            <section aria-labelledby="h-agent-findings" className="card wide">
              <h2 id="h-agent-findings">Findings ({data.findings.length})</h2>
              <DataTable label="Findings of this agent" rows={data.findings} columns={FINDINGS} empty="No findings on this agent." />
            </section>

            <section aria-labelledby="h-events" className="card wide">
              <h2 id="h-events">Audit events ({data.events.length})</h2>
              <DataTable label="Audit events of this agent" rows={data.events} columns={EVENTS} empty="No audit events for this agent." />
            </section>
          </div>
        )}
      </Loaded>
    </>
  );
}
