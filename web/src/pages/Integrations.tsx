import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { column, DataTable, timeColumn, type Column } from '../components/DataTable.tsx';
import { NewIntegrationForm } from '../components/NewIntegrationForm.tsx';
import { Loaded, StatusBadge, Time } from '../components/ui.tsx';
import { useTitle } from '../hooks.ts';
import { useIntegrations } from '../query.ts';
import type { Integration } from '../types.ts';

const MODE_LABEL: Record<string, string> = { 'customer-app': 'Customer-created app', 'managed-app': 'Managed app' };

/** When the client secret expires, and how many days are left. */
function SecretExpiry({ i }: { i: Integration }) {
  if (!i.secretExpiresAt) return <span className="muted">{i.mode === 'managed-app' ? 'not applicable' : 'unknown'}</span>;
  return (
    <>
      <Time value={i.secretExpiresAt} />
      {i.secretDaysLeft !== null ? <div className={`small${i.secretWarning ? ' text-warn' : ''}`}>{i.secretDaysLeft} days left</div> : null}
    </>
  );
}

const COLUMNS: Column<Integration>[] = [
  column('Name', (i) => <Link to={`/integrations/${seg(i.id)}`}>{i.name}</Link>),
  column('Mode', (i) => MODE_LABEL[i.mode] ?? i.mode),
  column('Tenant ID', (i) => <code>{i.tenantId}</code>),
  column('Credential', (i) => (
    <>
      <StatusBadge status={i.credentialState} />
      {i.credentialError ? <div className="small">{i.credentialError}</div> : null}
    </>
  )),
  timeColumn('Verified', (i) => i.verifiedAt),
  column('Secret expires', (i) => <SecretExpiry i={i} />),
  column('Last collection', (i) =>
    i.lastRun ? (
      <>
        <StatusBadge status={i.lastRun.status} /> <Time value={i.lastRun.finishedAt ?? i.lastRun.startedAt} />
      </>
    ) : (
      <span className="muted">never</span>
    ),
  ),
];

export function IntegrationsPage() {
  useTitle('Integrations');
  const { isAdmin } = useAuth();
  const { query, items } = useIntegrations();
  const [creating, setCreating] = useState(false);
  const formHeading = useRef<HTMLHeadingElement>(null);
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

      <Loaded query={query}>
        {(page) => (
          <DataTable
            label="Integrations"
            rows={page.items}
            columns={COLUMNS}
            empty={`No integrations yet. ${isAdmin ? 'Choose CREATE NEW to connect a Microsoft Entra tenant.' : 'An administrator of your organization can add one.'}`}
          />
        )}
      </Loaded>
    </>
  );
}
