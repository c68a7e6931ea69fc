// The estate as a picture (issue 21): every agent in one table the server sorts, searches and pages
// (GET /estate/agents, with the total), and one environment's agents, apps and flows riskiest first
// (GET /integrations/{id}/environments/{environmentId}/estate). Names everywhere; ids only behind "IDs".
import { useMemo, useState, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { seg } from '../api.ts';
import type { components } from '../api-types.ts';
import { column, DataTable, sortable, type Column, type TableSort } from '../components/DataTable.tsx';
import { FilterBar, IntegrationFilter, PagedList, SearchFilter, SelectFilter, useSearchDraft } from '../components/ListPage.tsx';
import { CopyBlock } from '../components/CopyBlock.tsx';
import { KeyValues, Loaded } from '../components/ui.tsx';
import { useListFilters, useListSort, useTitle } from '../hooks.ts';
import { useApiQuery } from '../query.ts';

type EstateAgent = components['schemas']['EstateAgent'];
type AgentPage = components['schemas']['EstateAgentPage'];
type EnvironmentEstate = components['schemas']['EnvironmentEstate'];
type RankedObject = EnvironmentEstate['apps'][number];

const PAGE_SIZE = 50;
const SORTS = ['risk', 'name', 'environment', 'owner', 'findings', 'tools', 'knowledge'] as const;
const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** The agent page of a row. */
export const agentUrl = (integrationId: string, agentId: string) => `/integrations/${seg(integrationId)}/agents/${seg(agentId)}`;
/** The environment view. */
export const environmentUrl = (integrationId: string, environmentId: string) => `/environments/${seg(integrationId)}/${seg(environmentId)}`;

/** A risk score as a badge: 70+ bad, 40+ warning, else neutral; the reasons on hover and for screen readers. */
export function RiskBadge({ score, reasons }: { score: number; reasons: string[] }) {
  const tone = score >= 70 ? 'st-bad' : score >= 40 ? 'st-warn' : 'st-neutral';
  return (
    <span className={`badge ${tone}`} title={reasons.join('\n')}>
      {score}
      <span className="visually-hidden"> out of 100: {reasons.join('; ')}</span>
    </span>
  );
}

const unknown = (v: ReactNode) => (v === null || v === undefined ? <span className="muted">unknown</span> : v);
const flagged = (v: string, bad: (v: string) => boolean) => (bad(v) ? <strong className="text-bad">{v}</strong> : v);

/** Columns of an agents table; `sortable` wraps the columns the server (or the page) can order. */
function agentColumns(showEnvironment: boolean): Column<EstateAgent>[] {
  return [
    sortable(
      column('Risk', (a) => <RiskBadge score={a.score} reasons={a.reasons} />, 'num'),
      'risk',
    ),
    sortable(
      column('Agent', (a) => <Link to={agentUrl(a.integrationId, a.agentId)}>{a.name ?? 'Unnamed agent'}</Link>),
      'name',
    ),
    ...(showEnvironment
      ? [
          sortable(
            column<EstateAgent>('Environment', (a) => (
              <Link to={environmentUrl(a.integrationId, a.environmentId)}>{a.environmentName ?? 'Unnamed environment'}</Link>
            )),
            'environment',
          ),
        ]
      : []),
    sortable(
      column('Owner', (a) => unknown(a.owner)),
      'owner',
    ),
    column('Sign-in', (a) => flagged(a.authentication, (v) => v === 'None')),
    column('Who may chat', (a) => flagged(a.sharing, (v) => /^(Anyone|Everyone|Any Microsoft)/.test(v))),
    column('Orchestration', (a) => unknown(a.orchestration)),
    sortable(
      column('Tools', (a) => unknown(a.tools), 'num'),
      'tools',
    ),
    sortable(
      column('Knowledge', (a) => unknown(a.knowledge), 'num'),
      'knowledge',
    ),
    sortable(
      column('Open findings', (a) => a.openFindings, 'num'),
      'findings',
    ),
  ];
}
const AGENT_COLUMNS = agentColumns(true);
const ENV_AGENT_COLUMNS = agentColumns(false);

/** `/agents`: every agent of the organization, sorted, searched and paged by the server, with the total. */
export function AgentsPage() {
  useTitle('Agents');
  const filters = useListFilters();
  const q = filters.get('q');
  const search = useSearchDraft(q);
  const sort = useListSort(filters, SORTS, 'risk');
  const environmentId = filters.get('environmentId');
  const page = useApiQuery<AgentPage>('/estate/agents', {
    q,
    integrationId: filters.get('integrationId'),
    environmentId,
    ...sort.query,
    cursor: filters.cursor,
    limit: PAGE_SIZE,
  });
  const total = page.data?.total;

  return (
    <>
      <h1>Agents</h1>
      <p className="muted">Every Copilot Studio agent of your integrations, riskiest first. Risk: open findings by severity, plus how far the agent reaches.</p>
      <FilterBar label="Agent filters" onSubmit={() => filters.update({ q: search.draft.trim() })}>
        <SearchFilter id="ag-q" {...search} placeholder="Agent, environment or owner" />
        <IntegrationFilter id="ag-integration" {...filters.bind('integrationId')} />
        <SelectFilter
          id="ag-sort"
          label="Order"
          options={SORTS.map((s) => ({ value: s, label: s === 'findings' ? 'Open findings' : s[0]!.toUpperCase() + s.slice(1) }))}
          value={sort.key}
          onChange={(v) => filters.update({ sort: v === 'risk' ? '' : v })}
        />
      </FilterBar>
      <h2 className="visually-hidden" id="h-agents">
        Agents
      </h2>
      <PagedList
        query={page}
        summary={(n) =>
          total === undefined ? '' : `${count(total, 'agent')}${q ? ` matching "${q}"` : ''}${total > n ? `; ${n.toLocaleString('en-US')} on this page` : ''}.`
        }
        pager={{ label: 'Agent pages', ...filters.pager(page.data?.nextCursor) }}
      >
        {(items) => (
          <DataTable
            label="Agents"
            rows={items}
            columns={AGENT_COLUMNS}
            rowId={(a) => `${a.integrationId}/${a.agentId}`}
            sort={sort.table}
            describedBy="h-agents"
            empty={q ? 'No agent matches this search.' : 'No agents yet. Run a collection on an integration to find them.'}
          />
        )}
      </PagedList>
    </>
  );
}

/** Rows sorted on the page (an environment's lists are whole): by `key` of `values`, then by name. */
function useLocalSort<T extends { name: string | null }>(rows: T[], values: Record<string, (r: T) => string | number | null>, initial: string) {
  const [state, setState] = useState<{ key: string; order: 'asc' | 'desc' }>({ key: initial, order: 'desc' });
  const sorted = useMemo(() => {
    const value = values[state.key] ?? values[initial]!;
    const dir = state.order === 'asc' ? 1 : -1;
    return [...rows].sort((x, y) => {
      const a = value(x);
      const b = value(y);
      if (a === b) return (x.name ?? '').localeCompare(y.name ?? '');
      if (a === null) return 1;
      if (b === null) return -1;
      return (typeof a === 'string' && typeof b === 'string' ? a.localeCompare(b) : a < b ? -1 : 1) * dir;
    });
  }, [rows, values, state, initial]);
  const sort: TableSort = { ...state, firstOrder: 'desc', onSort: (key, order) => setState({ key, order }) };
  return { sorted, sort };
}

const AGENT_VALUES: Record<string, (a: EstateAgent) => string | number | null> = {
  risk: (a) => a.score,
  name: (a) => a.name?.toLowerCase() ?? null,
  owner: (a) => a.owner?.toLowerCase() ?? null,
  tools: (a) => a.tools,
  knowledge: (a) => a.knowledge,
  findings: (a) => a.openFindings,
};
const OBJECT_VALUES: Record<string, (o: RankedObject) => string | number | null> = {
  risk: (o) => o.score,
  name: (o) => o.name?.toLowerCase() ?? null,
  owner: (o) => o.owner?.toLowerCase() ?? null,
  findings: (o) => o.openFindings,
};
const OBJECT_COLUMNS: Column<RankedObject>[] = [
  sortable(
    column('Risk', (o) => <RiskBadge score={o.score} reasons={o.reasons} />, 'num'),
    'risk',
  ),
  sortable(
    column('Name', (o) => o.name ?? 'Unnamed'),
    'name',
  ),
  sortable(
    column('Owner', (o) => unknown(o.owner)),
    'owner',
  ),
  column('Exposure', (o) => o.exposure),
  sortable(
    column('Open findings', (o) => o.openFindings, 'num'),
    'findings',
  ),
];

function EnvironmentTables({ data }: { data: EnvironmentEstate }) {
  const agents = useLocalSort(data.agents, AGENT_VALUES, 'risk');
  const apps = useLocalSort(data.apps, OBJECT_VALUES, 'risk');
  const flows = useLocalSort(data.flows, OBJECT_VALUES, 'risk');
  const env = data.environment;
  return (
    <>
      <section aria-labelledby="h-env" className="card">
        <h2 id="h-env">Environment</h2>
        <KeyValues
          entries={[
            ['Integration', data.integrationName],
            ['Type', env.sku ? `${env.sku}${env.isDefault ? ' (default environment)' : ''}` : env.isDefault ? 'Default environment' : null],
            ['Region', env.region],
            ['Estate', `${count(data.agents.length, 'agent')}, ${count(data.apps.length, 'app')}, ${count(data.flows.length, 'flow')}`],
          ]}
        />
        <details>
          <summary>IDs</summary>
          <CopyBlock label="Environment ID" value={env.id} />
        </details>
      </section>
      <section aria-labelledby="h-env-agents" className="card wide">
        <h2 id="h-env-agents">Agents ({data.agents.length.toLocaleString('en-US')})</h2>
        <DataTable
          label="Agents of this environment"
          rows={agents.sorted}
          columns={ENV_AGENT_COLUMNS}
          rowId={(a) => a.agentId}
          sort={agents.sort}
          empty="No agents in this environment."
        />
      </section>
      <section aria-labelledby="h-env-apps" className="card wide">
        <h2 id="h-env-apps">Apps ({data.apps.length.toLocaleString('en-US')})</h2>
        <DataTable label="Apps of this environment" rows={apps.sorted} columns={OBJECT_COLUMNS} sort={apps.sort} empty="No apps in this environment." />
      </section>
      <section aria-labelledby="h-env-flows" className="card wide">
        <h2 id="h-env-flows">Flows ({data.flows.length.toLocaleString('en-US')})</h2>
        <DataTable label="Flows of this environment" rows={flows.sorted} columns={OBJECT_COLUMNS} sort={flows.sort} empty="No flows in this environment." />
      </section>
    </>
  );
}

/** `/environments/:integrationId/:environmentId`: one environment's agents, apps and flows, riskiest first. */
export function EnvironmentPage() {
  const { integrationId = '', environmentId = '' } = useParams();
  const query = useApiQuery<EnvironmentEstate>(`/integrations/${seg(integrationId)}/environments/${seg(environmentId)}/estate`);
  const name = query.data ? (query.data.environment.name ?? 'Unnamed environment') : 'Environment';
  useTitle(`Environment ${name}`);
  return (
    <>
      <p className="crumbs">
        <Link to="/inventory?kind=environments">Environments</Link> ›
      </p>
      <h1>{name}</h1>
      <Loaded query={query}>
        {(data) => (
          <div className="dash-grid">
            <EnvironmentTables data={data} />
          </div>
        )}
      </Loaded>
    </>
  );
}
