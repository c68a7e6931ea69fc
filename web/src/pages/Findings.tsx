// The findings list for triage: a dense table the server filters, searches, sorts and pages (GET /findings, with the
// total the filter selects), every filter and the order kept in the URL (a saved filter is a bookmark), export links
// of the same filter, and bulk suppression (with a reason and an optional end date) and lifting of the rows selected
// (POST /findings/suppression and /findings/suppression/lift, all or nothing). Modelled on Prowler App's findings
// table and mute modal (prowler-cloud/prowler ui/components/findings/: column-findings.tsx, findings-filters.tsx,
// floating-selection-actions.tsx, mute-findings-modal.tsx).
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, apiUrl, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { column, DataTable, NameAndId, severityColumn, sortable, timeColumn, type Column } from '../components/DataTable.tsx';
import {
  environmentColumn,
  FilterBar,
  FilterLink,
  FilterNote,
  IntegrationFilter,
  IntegrationName,
  ResourceName,
  InventoryPicker,
  PagedList,
  SearchFilter,
  SelectFilter,
  TimeRangeFilter,
  useSearchDraft,
  useTimeRange,
} from '../components/ListPage.tsx';
import { endOfDay, ErrorMessage, ErrorSummary, Field, StatusBadge, Time, todayIso, type FormError } from '../components/ui.tsx';
import { useForm, useListFilters, useListSort, useTitle } from '../hooks.ts';
import { useApiMutation, useApiQuery } from '../query.ts';
import { SEVERITIES, type CheckList, type Finding, type FindingPage, type FindingSort, type FindingsBulkAnswer } from '../types.ts';

const STATUSES = ['open', 'resolved', 'suppressed', 'all'] as const;
const SUPPRESSED = [
  { value: 'true', label: 'Suppressed' },
  { value: 'false', label: 'Not suppressed' },
];
const SORTS: readonly FindingSort[] = ['severity', 'check', 'resource', 'status', 'firstSeenAt', 'lastSeenAt'];
const PAGE_SIZE = 50;

/** Status with the end of a suppression, if it has one. */
function FindingStatus({ f }: { f: Finding }) {
  return (
    <>
      <StatusBadge status={f.suppression ? 'suppressed' : f.status} />
      {f.suppression?.expiresAt ? (
        <div className="small">
          until <Time value={f.suppression.expiresAt} />
        </div>
      ) : null}
    </>
  );
}

/** A finding's title (or check id) linking to its page. */
export const FindingLink = ({ f }: { f: Pick<Finding, 'id' | 'title' | 'checkId'> }) => <Link to={`/findings/${seg(f.id)}`}>{f.title ?? f.checkId}</Link>;

const COLUMNS: Column<Finding>[] = [
  sortable(severityColumn<Finding>(), 'severity'),
  sortable(
    column<Finding>('Finding', (f) => (
      <NameAndId
        name={<FindingLink f={f} />}
        id={
          <FilterLink name="checkId" value={f.checkId} label={`Only check ${f.checkId}`}>
            {f.checkId}
          </FilterLink>
        }
      />
    )),
    'check',
  ),
  sortable(
    column<Finding>('Resource', (f) => <NameAndId name={<ResourceName r={f} />} id={f.resourceType} />),
    'resource',
  ),
  column<Finding>('Integration', (f) => <IntegrationName id={f.integrationId} />),
  environmentColumn<Finding>((f) => f),
  sortable(
    column<Finding>('Status', (f) => <FindingStatus f={f} />),
    'status',
  ),
  sortable(
    timeColumn<Finding>('First seen', (f) => f.firstSeenAt),
    'firstSeenAt',
  ),
  sortable(
    timeColumn<Finding>('Last seen', (f) => f.lastSeenAt),
    'lastSeenAt',
  ),
];

/** Export formats offered, in the API's names (`GET /api/v1/exports/findings?format=`), with their labels. */
const EXPORTS = [
  { format: 'csv', label: 'CSV', what: 'a spreadsheet' },
  { format: 'sarif', label: 'SARIF', what: 'SARIF 2.1.0, for code-scanning tools' },
  { format: 'ocsf', label: 'OCSF', what: 'OCSF Detection Findings, for a SIEM' },
  { format: 'json', label: 'JSON', what: 'JSON' },
] as const;

/**
 * Download links of every finding the current filter selects (all pages, not only the one shown, in the table's
 * order), one per format: same-origin GETs the session cookie authorises; the server names the file.
 */
function ExportLinks({ filter }: { filter: Record<string, string | undefined> }) {
  return (
    <div className="actions export-links" role="group" aria-labelledby="export-label">
      <span id="export-label">Export these findings:</span>
      {EXPORTS.map((e) => (
        <a key={e.format} className="button secondary" href={apiUrl('/exports/findings', { ...filter, format: e.format })} download title={e.what}>
          {e.label}
        </a>
      ))}
    </div>
  );
}

/**
 * Suppression and lifting of the selected findings: a reason (required) and an optional end date, as on a finding's
 * own page; both changes are all or nothing, and each is recorded in every finding's history.
 */
function BulkActions({ ids, onDone, onClear }: { ids: string[]; onDone: (message: string) => void; onClear: () => void }) {
  const form = useForm({ reason: '', expiresAt: '' });
  const { reason, expiresAt: until } = form.values;
  const n = (k: number) => `${k} finding${k === 1 ? '' : 's'}`;
  const suppress = useApiMutation(
    (body: { ids: string[]; reason: string; expiresAt?: string }) => api.post<FindingsBulkAnswer>('/findings/suppression', body),
    {
      invalidates: ['/findings', '/dashboard', '/exports'],
      onSuccess: (a) => {
        form.reset();
        onDone(`${n(a.items.length)} suppressed.`);
      },
    },
  );
  const lift = useApiMutation((body: { ids: string[] }) => api.post<FindingsBulkAnswer>('/findings/suppression/lift', body), {
    invalidates: ['/findings', '/dashboard', '/exports'],
    onSuccess: (a) =>
      onDone(`Suppression lifted from ${n(a.changed)}${a.changed < a.items.length ? ` (${a.items.length - a.changed} were not suppressed)` : ''}.`),
  });
  const busy = suppress.isPending || lift.isPending;

  function submit(e: FormEvent) {
    e.preventDefault();
    const errs: FormError[] = [];
    if (!reason.trim())
      errs.push({
        field: 'reason',
        message: 'Enter the reason for suppressing these findings.',
        remediation: 'Say why the risk is accepted or handled elsewhere, for auditors and colleagues.',
      });
    if (until && until <= todayIso())
      errs.push({ field: 'expiresAt', message: 'The end date must be in the future.', remediation: 'Choose a later date, or leave it empty.' });
    form.setErrors(errs);
    if (errs.length || busy || !ids.length) return;
    suppress.mutate({ ids, reason: reason.trim(), ...(until ? { expiresAt: endOfDay(until) } : {}) });
  }

  return (
    <form className="card bulk-form" aria-label="Selected findings" onSubmit={submit} noValidate>
      <p>{ids.length ? `${n(ids.length)} selected.` : 'Select findings to suppress them or lift their suppression at once.'}</p>
      <ErrorSummary errors={form.errors} title="The findings were not suppressed" />
      <div className="bulk-fields">
        <Field {...form.field('reason')} label="Reason" hint="Recorded in each finding's history with your name." />
        <Field {...form.field('expiresAt')} label="Suppress until" type="date" min={todayIso()} hint="Optional: the findings reopen after this day (UTC)." />
      </div>
      <div className="actions">
        <button type="submit" disabled={!ids.length || busy}>
          Suppress selected
        </button>
        <button type="button" className="secondary" disabled={!ids.length || busy} onClick={() => lift.mutate({ ids })}>
          Lift suppression of selected
        </button>
        {ids.length ? (
          <button type="button" className="link-button" onClick={onClear}>
            Clear selection
          </button>
        ) : null}
      </div>
      <ErrorMessage error={suppress.error ?? lift.error} />
    </form>
  );
}

export function FindingsPage() {
  useTitle('Findings');
  const { isAdmin } = useAuth();
  const filters = useListFilters();
  const q = filters.get('q');
  const search = useSearchDraft(q);
  const [checkId, resourceId] = [filters.get('checkId'), filters.get('resourceId')];
  const sort = useListSort(filters, SORTS, 'severity');
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [announce, setAnnounce] = useState('');
  const checks = useApiQuery<CheckList>('/checks');
  const range = useTimeRange(filters);
  const filter = {
    q: q || undefined,
    severity: filters.get('severity') || undefined,
    status: filters.get('status', 'open'),
    suppressed: filters.get('suppressed') || undefined,
    integrationId: filters.get('integrationId') || undefined,
    checkId: checkId || undefined,
    environmentId: filters.get('environmentId') || undefined,
    resourceId: resourceId || undefined,
    ...range,
    ...sort.query,
  };
  const page = useApiQuery<FindingPage>('/findings', { ...filter, cursor: filters.cursor, limit: PAGE_SIZE });
  const total = page.data?.total;

  return (
    <>
      <h1>Findings</h1>
      <FilterBar label="Finding filters" onSubmit={() => filters.update({ q: search.draft.trim() })}>
        <SearchFilter id="f-q" {...search} placeholder="Check, resource or reason" />
        <SelectFilter id="f-severity" label="Severity" all="All severities" options={SEVERITIES} {...filters.bind('severity')} />
        <SelectFilter id="f-status" label="Status" options={STATUSES} {...filters.bind('status', 'open')} />
        <SelectFilter id="f-suppressed" label="Suppression" all="Either" options={SUPPRESSED} {...filters.bind('suppressed')} />
        <SelectFilter
          id="f-check"
          label="Check"
          all="All checks"
          options={(checks.data?.items ?? []).map((c) => ({ value: c.id, label: c.title }))}
          {...filters.bind('checkId')}
        />
        <IntegrationFilter id="f-integration" {...filters.bind('integrationId')} />
        <InventoryPicker id="f-environment" label="Environment" kind="environments" all="All environments" {...filters.bind('environmentId')} />
        <TimeRangeFilter id="f-time" label="First seen" filters={filters} />
      </FilterBar>
      <FilterNote filters={[['Resource', resourceId]]} clear="Clear this filter" onClear={() => filters.update({ resourceId: '' })} />
      <ExportLinks filter={filter} />
      <p role="status" className={announce ? 'success' : 'visually-hidden'}>
        {announce}
      </p>
      {isAdmin ? (
        <BulkActions
          ids={[...selected]}
          onClear={() => setSelected(new Set())}
          onDone={(m) => {
            setSelected(new Set());
            setAnnounce(m);
          }}
        />
      ) : null}
      <PagedList
        query={page}
        summary={(n) => `${total ?? n} finding${(total ?? n) === 1 ? '' : 's'} match${(total ?? n) === 1 ? 'es' : ''}${q ? ` "${q}"` : ''}; ${n} on this page.`}
        pager={{ label: 'Finding pages', ...filters.pager(page.data?.nextCursor) }}
      >
        {(items) => (
          <DataTable
            label="Findings"
            rows={items}
            columns={COLUMNS}
            sort={sort.table}
            selection={
              isAdmin
                ? {
                    selected,
                    onChange: setSelected,
                    name: (f) => `${f.title ?? f.checkId} on ${f.resourceName ?? (f.resourceType === 'tenant' ? 'the tenant' : f.resourceId)}`,
                  }
                : undefined
            }
            empty="No findings match these filters."
          />
        )}
      </PagedList>
    </>
  );
}
