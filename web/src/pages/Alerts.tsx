// The alerts list for triage: a dense table the server filters, searches, sorts and pages (GET /alerts), every filter
// and the order kept in the URL (a saved filter is a bookmark), and bulk acknowledge/close of the rows selected
// (POST /alerts/status, all or nothing). Modelled on Prowler App's findings table (column definitions for a headless
// table, filters in the URL, floating actions on a selection: prowler-cloud/prowler ui/components/findings/).
import { useState } from 'react';
import { Link } from 'react-router';
import { api, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { column, DataTable, severityColumn, sortable, statusColumn, timeColumn, type Column } from '../components/DataTable.tsx';
import {
  environmentColumn,
  FilterBar,
  FilterLink,
  IntegrationFilter,
  IntegrationName,
  InventoryPicker,
  PagedList,
  SearchFilter,
  SelectFilter,
  TimeRangeFilter,
  useSearchDraft,
  useTimeRange,
} from '../components/ListPage.tsx';
import { ErrorMessage, Ident } from '../components/ui.tsx';
import { useListFilters, useListSort, useTitle } from '../hooks.ts';
import { useApiMutation, useApiQuery } from '../query.ts';
import { SEVERITIES, type Alert, type AlertPage, type AlertsBulkAnswer, type AlertSort, type AlertStatus, type ComplianceView } from '../types.ts';

const STATUSES = ['new', 'acknowledged', 'closed'] as const;
const SORTS: readonly AlertSort[] = ['createdAt', 'severity', 'status', 'ruleId', 'title'];
const PAGE_SIZE = 50;

/** An alert's title, linking to its page, with the agent it is about. */
const AlertLink = ({ a }: { a: Pick<Alert, 'id' | 'title'> }) => <Link to={`/alerts/${seg(a.id)}`}>{a.title}</Link>;

const COLUMNS: Column<Alert>[] = [
  sortable(severityColumn<Alert>(), 'severity'),
  sortable(
    column<Alert>('Alert', (a) => (
      <>
        <AlertLink a={a} />
        {a.agentName || a.agentId ? <div className="small muted">agent {a.agentName ?? a.agentId}</div> : null}
      </>
    )),
    'title',
  ),
  sortable(
    column<Alert>('Rule', (a) => (
      <FilterLink name="ruleId" value={a.ruleId} label={`Only rule ${a.ruleId}`}>
        <Ident id={a.ruleId} />
      </FilterLink>
    )),
    'ruleId',
  ),
  column<Alert>('Integration', (a) => <IntegrationName id={a.integrationId} />),
  environmentColumn<Alert>((a) => a),
  sortable(
    statusColumn<Alert>((a) => a.status),
    'status',
  ),
  sortable(
    timeColumn<Alert>('Raised', (a) => a.createdAt),
    'createdAt',
  ),
];

/**
 * The Rule filter's options: the detections of the catalogue, as the compliance view lists what covers each
 * framework item (GET /compliance; the API has no list of detections of its own), by title; plus the rule in the URL
 * when the catalogue does not name it (runtime protection and data-loss rules, set by a link).
 */
function useRuleOptions(current: string): { value: string; label: string }[] {
  const compliance = useApiQuery<ComplianceView>('/compliance');
  const detections = new Map<string, string>();
  for (const f of compliance.data?.frameworks ?? [])
    for (const item of f.items) for (const c of item.covers) if (c.kind === 'detection') detections.set(c.id, c.title);
  if (current && !detections.has(current)) detections.set(current, current);
  return [...detections].map(([value, label]) => ({ value, label })).sort((a, b) => a.label.localeCompare(b.label));
}

export function AlertsPage() {
  useTitle('Alerts');
  const { isAdmin } = useAuth();
  const filters = useListFilters();
  const q = filters.get('q');
  const search = useSearchDraft(q);
  const [ruleId, environmentId] = [filters.get('ruleId'), filters.get('environmentId')];
  const sort = useListSort(filters, SORTS, 'createdAt');
  const range = useTimeRange(filters);
  const rules = useRuleOptions(ruleId);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [announce, setAnnounce] = useState('');
  const page = useApiQuery<AlertPage>('/alerts', {
    q,
    severity: filters.get('severity'),
    status: filters.get('status'),
    integrationId: filters.get('integrationId'),
    ruleId,
    environmentId,
    ...range,
    ...sort.query,
    cursor: filters.cursor,
    limit: PAGE_SIZE,
  });

  const bulk = useApiMutation(({ ids, to }: { ids: string[]; to: AlertStatus }) => api.post<AlertsBulkAnswer>('/alerts/status', { ids, status: to }), {
    invalidates: ['/alerts'],
    onSuccess: (answer, { ids, to }) => {
      setSelected(new Set());
      setAnnounce(
        `${ids.length} alert${ids.length === 1 ? '' : 's'} ${to}${answer.changed < ids.length ? ` (${ids.length - answer.changed} already were)` : ''}.`,
      );
    },
  });

  const ids = [...selected];
  /** Nothing to act on, or a change under way. */
  const idle = !ids.length || bulk.isPending;

  return (
    <>
      <h1>Alerts</h1>
      <FilterBar label="Alert filters" onSubmit={() => filters.update({ q: search.draft.trim() })}>
        <SearchFilter id="a-q" {...search} placeholder="Title, rule or detail" />
        <SelectFilter id="a-severity" label="Severity" all="All severities" options={SEVERITIES} {...filters.bind('severity')} />
        <SelectFilter id="a-status" label="Status" all="All statuses" options={STATUSES} {...filters.bind('status')} />
        <SelectFilter id="a-rule" label="Rule" all="All rules" options={rules} {...filters.bind('ruleId')} />
        <IntegrationFilter id="a-integration" {...filters.bind('integrationId')} />
        <InventoryPicker id="a-environment" label="Environment" kind="environments" all="All environments" {...filters.bind('environmentId')} />
        <TimeRangeFilter id="a-time" label="Raised" filters={filters} />
      </FilterBar>
      <p role="status" className="visually-hidden">
        {announce}
      </p>
      {isAdmin ? (
        <div className="actions bulk-actions" role="group" aria-label="Selected alerts">
          <span>{ids.length ? `${ids.length} selected` : 'Select alerts to act on several at once.'}</span>
          {/* aria-disabled, not disabled: the button just used keeps the keyboard focus when the selection empties. */}
          <button type="button" aria-disabled={idle || undefined} onClick={() => !idle && bulk.mutate({ ids, to: 'acknowledged' })}>
            Acknowledge selected
          </button>
          <button type="button" className="secondary" aria-disabled={idle || undefined} onClick={() => !idle && bulk.mutate({ ids, to: 'closed' })}>
            Close selected
          </button>
          {ids.length ? (
            <button type="button" className="link-button" onClick={() => setSelected(new Set())}>
              Clear selection
            </button>
          ) : null}
        </div>
      ) : null}
      <ErrorMessage error={bulk.error} />
      <PagedList
        query={page}
        summary={(n) => {
          const t = page.data?.total ?? n;
          return `${t.toLocaleString('en-US')} alert${t === 1 ? '' : 's'} match${t === 1 ? 'es' : ''}${q ? ` "${q}"` : ''}; ${n} on this page.`;
        }}
        pager={{ label: 'Alert pages', ...filters.pager(page.data?.nextCursor) }}
      >
        {(items) => (
          <DataTable
            label="Alerts"
            rows={items}
            columns={COLUMNS}
            sort={sort.table}
            selection={isAdmin ? { selected, onChange: setSelected, name: (a) => a.title } : undefined}
            empty="No alerts match these filters."
          />
        )}
      </PagedList>
    </>
  );
}
