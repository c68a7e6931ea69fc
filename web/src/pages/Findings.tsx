import { Link } from 'react-router';
import { apiUrl, seg } from '../api.ts';
import { column, DataTable, NameAndId, severityColumn, timeColumn, type Column } from '../components/DataTable.tsx';
import { FilterBar, FilterNote, IntegrationFilter, IntegrationName, PagedList, SelectFilter } from '../components/ListPage.tsx';
import { StatusBadge, Time } from '../components/ui.tsx';
import { useListFilters, useTitle } from '../hooks.ts';
import { useApiQuery } from '../query.ts';
import { SEVERITIES, type Finding, type FindingPage } from '../types.ts';

const STATUSES = ['open', 'resolved', 'suppressed', 'all'] as const;

/** Status with the end of a suppression, if it has one. */
function FindingStatus({ f }: { f: Finding }) {
  return (
    <>
      <StatusBadge status={f.status} />
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
  severityColumn(),
  column('Finding', (f) => <NameAndId name={<FindingLink f={f} />} id={f.checkId} />),
  column('Resource', (f) => <NameAndId name={f.resourceName ?? f.resourceId} id={f.resourceType} />),
  column('Integration', (f) => <IntegrationName id={f.integrationId} />),
  column('Status', (f) => <FindingStatus f={f} />),
  timeColumn('Last seen', (f) => f.lastSeenAt),
];

/** Export formats offered, in the API's names (`GET /api/v1/exports/findings?format=`), with their labels. */
const EXPORTS = [
  { format: 'csv', label: 'CSV', what: 'a spreadsheet' },
  { format: 'sarif', label: 'SARIF', what: 'SARIF 2.1.0, for code-scanning tools' },
  { format: 'ocsf', label: 'OCSF', what: 'OCSF Detection Findings, for a SIEM' },
  { format: 'json', label: 'JSON', what: 'JSON' },
] as const;

/**
 * Download links of every finding the current filter selects (all pages, not only the one shown), one per format:
 * same-origin GETs the session cookie authorises; the server names the file (Content-Disposition).
 */
function ExportLinks({ filter }: { filter: Record<string, string> }) {
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

export function FindingsPage() {
  useTitle('Findings');
  const filters = useListFilters();
  const [checkId, resourceId] = [filters.get('checkId'), filters.get('resourceId')];
  const filter = {
    severity: filters.get('severity'),
    status: filters.get('status', 'open'),
    integrationId: filters.get('integrationId'),
    checkId,
    resourceId,
  };
  const page = useApiQuery<FindingPage>('/findings', { ...filter, cursor: filters.cursor, limit: 50 });

  return (
    <>
      <h1>Findings</h1>
      <FilterBar label="Finding filters">
        <SelectFilter id="f-severity" label="Severity" all="All severities" options={SEVERITIES} {...filters.bind('severity')} />
        <SelectFilter id="f-status" label="Status" options={STATUSES} {...filters.bind('status', 'open')} />
        <IntegrationFilter id="f-integration" {...filters.bind('integrationId')} />
      </FilterBar>
      <FilterNote
        filters={[
          ['Check', checkId],
          ['Resource', resourceId],
        ]}
        clear="Clear these filters"
        onClear={() => filters.update({ checkId: '', resourceId: '' })}
      />
      <ExportLinks filter={filter} />
      <PagedList
        query={page}
        summary={(n) => `${n} finding${n === 1 ? '' : 's'} on this page.`}
        pager={{ label: 'Finding pages', ...filters.pager(page.data?.nextCursor) }}
      >
        {(items) => <DataTable label="Findings" rows={items} columns={COLUMNS} empty="No findings match these filters." />}
      </PagedList>
    </>
  );
}
