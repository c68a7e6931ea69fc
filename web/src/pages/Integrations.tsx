import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { NewIntegrationForm } from '../components/NewIntegrationForm.tsx';
import { ErrorMessage, Loading, StatusBadge, TableScroll, Time } from '../components/ui.tsx';
import { useApi, useTitle } from '../hooks.ts';
import type { Integration, Page } from '../types.ts';

const MODE_LABEL: Record<string, string> = { 'customer-app': 'Customer-created app', 'managed-app': 'Managed app' };

export function IntegrationsPage() {
  useTitle('Integrations');
  const { isAdmin } = useAuth();
  const list = useApi<Page<Integration>>('/integrations');
  const [creating, setCreating] = useState(false);
  const formHeading = useRef<HTMLHeadingElement>(null);
  const items = list.data?.items ?? [];
  const warnings = items.filter((i) => i.secretWarning);

  useEffect(() => {
    if (creating) formHeading.current?.focus();
  }, [creating]);

  return (
    <>
      <div className="page-head">
        <h1>Integrations</h1>
        {isAdmin ? (
          <button type="button" onClick={() => setCreating((c) => !c)} aria-expanded={creating} aria-controls="new-integration">
            CREATE NEW
          </button>
        ) : null}
      </div>

      {warnings.length ? (
        <div className="banner warn" role="region" aria-label="Secret expiry warnings">
          <h2>Client secrets expiring</h2>
          <ul>
            {warnings.map((i) => (
              <li key={i.id}>
                <strong>{i.name}</strong>: {i.secretWarning} <Link to={`/integrations/${seg(i.id)}#rotate-secret`}>Rotate the secret of {i.name}</Link>
              </li>
            ))}
          </ul>
        </div>
      ) : null}

      {creating ? (
        <section id="new-integration" aria-labelledby="h-new" className="card">
          <h2 id="h-new" tabIndex={-1} ref={formHeading}>
            New integration
          </h2>
          <NewIntegrationForm onCancel={() => setCreating(false)} />
        </section>
      ) : null}

      <ErrorMessage error={list.error} />
      {list.loading && !list.data ? <Loading /> : null}
      {list.data && !items.length ? (
        <p>No integrations yet. {isAdmin ? 'Choose CREATE NEW to connect a Microsoft Entra tenant.' : 'An administrator of your organization can add one.'}</p>
      ) : null}
      {items.length ? (
        <TableScroll label="Integrations">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Mode</th>
                <th scope="col">Tenant ID</th>
                <th scope="col">Credential</th>
                <th scope="col">Verified</th>
                <th scope="col">Secret expires</th>
                <th scope="col">Last collection</th>
              </tr>
            </thead>
            <tbody>
              {items.map((i) => (
                <tr key={i.id}>
                  <td>
                    <Link to={`/integrations/${seg(i.id)}`}>{i.name}</Link>
                  </td>
                  <td>{MODE_LABEL[i.mode] ?? i.mode}</td>
                  <td>
                    <code>{i.tenantId}</code>
                  </td>
                  <td>
                    <StatusBadge status={i.credentialState} />
                    {i.credentialError ? <div className="small">{i.credentialError}</div> : null}
                  </td>
                  <td>
                    <Time value={i.verifiedAt} />
                  </td>
                  <td>
                    {i.secretExpiresAt ? (
                      <>
                        <Time value={i.secretExpiresAt} />
                        {i.secretDaysLeft !== null ? <div className={`small${i.secretWarning ? ' text-warn' : ''}`}>{i.secretDaysLeft} days left</div> : null}
                      </>
                    ) : (
                      <span className="muted">{i.mode === 'managed-app' ? 'not applicable' : 'unknown'}</span>
                    )}
                  </td>
                  <td>
                    {i.lastRun ? (
                      <>
                        <StatusBadge status={i.lastRun.status} /> <Time value={i.lastRun.finishedAt ?? i.lastRun.startedAt} />
                      </>
                    ) : (
                      <span className="muted">never</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : null}
      {list.data?.nextCursor ? <p className="muted">Showing the first {items.length} integrations.</p> : null}
    </>
  );
}
