import { Link } from 'react-router';
import { seg } from '../api.ts';
import { ErrorMessage, Loading, Pager, SeverityBadge, StatusBadge, TableScroll, Time } from '../components/ui.tsx';
import { useApi, useTitle, useListFilters } from '../hooks.ts';
import { SEVERITIES, type Finding, type Integration, type Page } from '../types.ts';
import { IntegrationSelect } from './Inventory.tsx';

const STATUSES = ['open', 'resolved', 'suppressed', 'all'] as const;

export function FindingsPage() {
  useTitle('Findings');
  const filters = useListFilters();
  const severity = filters.get('severity');
  const status = filters.get('status', 'open');
  const integrationId = filters.get('integrationId');
  const checkId = filters.get('checkId');
  const resourceId = filters.get('resourceId');
  const cursor = filters.cursor;

  const integrations = useApi<Page<Integration>>('/integrations');
  const page = useApi<Page<Finding>>('/findings', { severity, status, integrationId, checkId, resourceId, cursor, limit: 50 });
  const names = new Map((integrations.data?.items ?? []).map((i) => [i.id, i.name]));

  const items = page.data?.items ?? [];
  return (
    <>
      <h1>Findings</h1>
      <form className="filters" role="search" aria-label="Finding filters" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="f-severity">Severity</label>
          <select id="f-severity" value={severity} onChange={(e) => filters.update({ severity: e.target.value })}>
            <option value="">All severities</option>
            {SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="f-status">Status</label>
          <select id="f-status" value={status} onChange={(e) => filters.update({ status: e.target.value })}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <IntegrationSelect
          id="f-integration"
          value={integrationId}
          onChange={(v) => filters.update({ integrationId: v })}
          integrations={integrations.data?.items ?? []}
        />
      </form>
      {checkId || resourceId ? (
        <p>
          {checkId ? (
            <>
              Check <code>{checkId}</code>{' '}
            </>
          ) : null}
          {resourceId ? (
            <>
              Resource <code>{resourceId}</code>{' '}
            </>
          ) : null}
          <button type="button" className="link-button" onClick={() => filters.update({ checkId: '', resourceId: '' })}>
            Clear these filters
          </button>
        </p>
      ) : null}

      <ErrorMessage error={page.error} />
      <p role="status" className="muted">
        {page.loading ? 'Loading…' : `${items.length} finding${items.length === 1 ? '' : 's'} on this page.`}
      </p>
      {page.loading && !page.data ? <Loading /> : null}
      {items.length ? (
        <TableScroll label="Findings">
          <table>
            <thead>
              <tr>
                <th scope="col">Severity</th>
                <th scope="col">Finding</th>
                <th scope="col">Resource</th>
                <th scope="col">Integration</th>
                <th scope="col">Status</th>
                <th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {items.map((f) => (
                <tr key={f.id}>
                  <td>
                    <SeverityBadge severity={f.severity} />
                  </td>
                  <td>
                    <Link to={`/findings/${seg(f.id)}`}>{f.title ?? f.checkId}</Link>
                    <div className="small muted">{f.checkId}</div>
                  </td>
                  <td>
                    {f.resourceName ?? f.resourceId}
                    <div className="small muted">{f.resourceType}</div>
                  </td>
                  <td>{names.get(f.integrationId) ?? f.integrationId}</td>
                  <td>
                    <StatusBadge status={f.status} />
                    {f.suppression?.expiresAt ? (
                      <div className="small">
                        until <Time value={f.suppression.expiresAt} />
                      </div>
                    ) : null}
                  </td>
                  <td>
                    <Time value={f.lastSeenAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : page.data ? (
        <p>No findings match these filters.</p>
      ) : null}
      <Pager label="Finding pages" {...filters.pager(page.data?.nextCursor)} />
    </>
  );
}
