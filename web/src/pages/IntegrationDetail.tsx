import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useLocation, useParams } from 'react-router';
import { api, ApiError, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { toFormError, validateSecret, WHERE } from '../components/NewIntegrationForm.tsx';
import { RunPanel } from '../components/RunPanel.tsx';
import {
  ErrorMessage,
  ErrorSummary,
  Field,
  formatTime,
  JsonValue,
  KeyValues,
  Loading,
  StatusBadge,
  TableScroll,
  Time,
  todayIso,
  type FormError,
} from '../components/ui.tsx';
import { useApi, useTitle } from '../hooks.ts';
import type { EnvironmentAccess, GrantResult, IntegrationDetail, Registration, Step } from '../types.ts';

const POLL_MS = 15_000;
const AUTO_VERIFY_MS = 30_000;

const STATE_TEXT: Record<Step['state'], string> = { done: 'Done', incomplete: 'Incomplete', missing: 'Missing', info: 'Information' };

function list(v: string | string[] | null | undefined): string {
  if (!v) return '';
  return Array.isArray(v) ? v.join(', ') : v;
}

function Checklist({ steps }: { steps: Step[] }) {
  const sorted = [...steps].sort((a, b) => a.order - b.order);
  return (
    <ol aria-label="Setup checklist" className="checklist">
      {sorted.map((s) => (
        <li key={s.order} data-state={s.state} className={`step step-${s.state}`}>
          <div className="step-head">
            <span className="step-mark" aria-hidden="true">
              {s.state === 'done' ? '✓' : s.state === 'info' ? 'i' : s.state === 'missing' ? '✗' : '!'}
            </span>
            <span className="step-title">{s.title}</span>
            <span className={`badge step-badge-${s.state}`}>{STATE_TEXT[s.state] ?? s.state}</span>
          </div>
          {s.observed ? <p className="observed">{s.observed}</p> : null}
          {s.fix && s.state !== 'done' ? (
            <p className="fix">
              <strong>Fix: </strong>
              {s.fix}
            </p>
          ) : null}
        </li>
      ))}
    </ol>
  );
}

function RegistrationSection({ id }: { id: string }) {
  const reg = useApi<Registration>(`/integrations/${seg(id)}/registration`);
  const r = reg.data;
  return (
    <section aria-labelledby="h-registration" className="card">
      <h2 id="h-registration">Management-app registration</h2>
      <p className="muted">
        Power Platform admin APIs answer only applications registered as management applications. Either way below registers it; then choose Verify again.
      </p>
      <ErrorMessage error={reg.error} />
      {reg.loading && !r ? <Loading /> : null}
      {r ? (
        <>
          <p>
            Status:{' '}
            {r.registered === true ? (
              <StatusBadge status="done" />
            ) : r.registered === false ? (
              <StatusBadge status="missing" />
            ) : (
              <span className="badge st-neutral">unknown</span>
            )}{' '}
            {r.detail}
          </p>
          <p>
            Application (client) ID: <code>{r.applicationId}</code>
          </p>
          <h3>Way 1: PowerShell (as a Power Platform administrator)</h3>
          <pre className="code-block" tabIndex={0} aria-label="PowerShell commands">
            <code>{r.powershell.join('\n')}</code>
          </pre>
          <h3>Way 2: the REST API</h3>
          <pre className="code-block" tabIndex={0} aria-label="API call">
            <code>{`${r.api.method} ${r.api.url}`}</code>
          </pre>
          <p className="small muted">{r.api.note ?? 'Call it with a token of a Power Platform administrator for the BAP API.'}</p>
        </>
      ) : null}
    </section>
  );
}

function yesNo(v: boolean | string | null | undefined): string {
  if (v === true) return 'yes';
  if (v === false) return 'no';
  if (v === null || v === undefined) return 'unknown';
  return v;
}

function EnvironmentsSection({ id, isAdmin, onGranted }: { id: string; isAdmin: boolean; onGranted: () => void }) {
  const envs = useApi<{ items: EnvironmentAccess[] }>(`/integrations/${seg(id)}/environments`);
  const [results, setResults] = useState<GrantResult[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  async function grant() {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      const r = await api.post<{ items: GrantResult[] }>(`/integrations/${seg(id)}/environments/grant`);
      setResults(r.items);
      envs.reload();
      onGranted();
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, 'CLIENT', (e as Error).message));
    } finally {
      setBusy(false);
    }
  }

  const items = envs.data?.items ?? [];
  const missing = items.filter((e) => e.agentsReadable !== true).length;
  return (
    <section aria-labelledby="h-envs" className="card">
      <h2 id="h-envs">System Administrator per environment</h2>
      <p className="muted">Vigil needs the System Administrator security role in each Dataverse environment to read agents and their components.</p>
      <ErrorMessage error={envs.error} />
      {envs.loading && !envs.data ? <Loading /> : null}
      {envs.data && !items.length ? <p className="muted">No environments found yet.</p> : null}
      {items.length ? (
        <TableScroll label="Environments">
          <table>
            <thead>
              <tr>
                <th scope="col">Environment</th>
                <th scope="col">Dataverse</th>
                <th scope="col">Agents readable</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {items.map((e) => (
                <tr key={e.id}>
                  <td>
                    {e.name ?? e.id} <div className="small muted">{e.id}</div>
                  </td>
                  <td>{yesNo(e.dataverse)}</td>
                  <td>
                    {e.agentsReadable === true ? <StatusBadge status="granted" /> : e.agentsReadable === false ? <StatusBadge status="missing" /> : 'unknown'}
                  </td>
                  <td>{e.reason ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      ) : null}
      {isAdmin ? (
        <p>
          <button type="button" onClick={() => void grant()} aria-disabled={busy} aria-describedby="grant-hint">
            Grant System Administrator
          </button>{' '}
          <span id="grant-hint" className="small muted">
            {missing
              ? `Grants the role in the ${missing} environment${missing === 1 ? '' : 's'} where it is missing.`
              : 'Grants the role wherever it is missing, new environments included.'}
          </span>
        </p>
      ) : null}
      {busy ? <p role="status">Granting…</p> : null}
      <ErrorMessage error={error} />
      {results ? (
        <div role="status">
          <h3>Grant results</h3>
          <TableScroll label="Grant results">
            <table>
              <thead>
                <tr>
                  <th scope="col">Environment</th>
                  <th scope="col">Result</th>
                  <th scope="col">Via</th>
                  <th scope="col">Reason and fix</th>
                </tr>
              </thead>
              <tbody>
                {results.map((r) => (
                  <tr key={r.environmentId}>
                    <td>{r.name ?? r.environmentId}</td>
                    <td>
                      <StatusBadge status={r.result} />
                    </td>
                    <td>{r.via ?? ''}</td>
                    <td>
                      {r.reason ?? ''}
                      {r.fix ? <div className="fix">Fix: {r.fix}</div> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        </div>
      ) : null}
    </section>
  );
}

function RotateSecretForm({ id, onRotated }: { id: string; onRotated: (d: IntegrationDetail) => void }) {
  const [clientSecret, setClientSecret] = useState('');
  const [secretExpires, setSecretExpires] = useState('');
  const [errors, setErrors] = useState<FormError[]>([]);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const errFor = (f: string) => errors.find((e) => e.field === f);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setDone(false);
    const errs: FormError[] = [];
    validateSecret(clientSecret, secretExpires, errs);
    setErrors(errs);
    if (errs.length || busy) return;
    setBusy(true);
    try {
      const d = await api.put<IntegrationDetail>(`/integrations/${seg(id)}/secret`, { clientSecret, ...(secretExpires ? { secretExpires } : {}) });
      setClientSecret('');
      setSecretExpires('');
      setDone(true);
      onRotated(d);
    } catch (err) {
      setErrors([toFormError(err, ['clientSecret', 'secretExpires'])]);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(e) => void submit(e)} noValidate>
      <ErrorSummary errors={errors} title="The secret was not rotated" />
      {done ? (
        <p className="success" role="status">
          The new secret was verified and now replaces the old one. Delete the old secret in the Entra admin center.
        </p>
      ) : null}
      <Field
        id="clientSecret"
        label="Client secret"
        type="password"
        value={clientSecret}
        onChange={(e) => setClientSecret(e.target.value)}
        error={errFor('clientSecret')}
        hint={`The new secret: ${WHERE.clientSecret} Vigil verifies it before it replaces the old one.`}
        autoComplete="new-password"
        spellCheck={false}
        required
      />
      <Field
        id="secretExpires"
        label="Secret expires"
        type="date"
        min={todayIso()}
        value={secretExpires}
        onChange={(e) => setSecretExpires(e.target.value)}
        error={errFor('secretExpires')}
        hint={WHERE.secretExpires}
      />
      <button type="submit" aria-disabled={busy}>
        Rotate secret
      </button>
    </form>
  );
}

export function IntegrationDetailPage() {
  const { id = '' } = useParams();
  const { isAdmin } = useAuth();
  const location = useLocation();
  const detail = useApi<IntegrationDetail>(`/integrations/${seg(id)}`);
  const [verifying, setVerifying] = useState(false);
  const [verifyError, setVerifyError] = useState<ApiError | null>(null);
  const [autoVerify, setAutoVerify] = useState(false);
  const d = detail.data;
  useTitle(d ? d.integration.name : 'Integration');
  const allDone = d ? d.steps.every((s) => s.state === 'done' || s.state === 'info') : false;
  const { reload, setData } = detail;
  const verifyingRef = useRef(false);

  async function verify() {
    if (verifyingRef.current) return;
    verifyingRef.current = true;
    setVerifying(true);
    setVerifyError(null);
    try {
      setData(await api.post<IntegrationDetail>(`/integrations/${seg(id)}/verify`));
    } catch (e) {
      setVerifyError(e instanceof ApiError ? e : new ApiError(0, 'CLIENT', (e as Error).message));
    } finally {
      verifyingRef.current = false;
      setVerifying(false);
    }
  }
  const verifyRef = useRef(verify);
  verifyRef.current = verify;

  // The live checklist: refresh while a step is still open (someone may verify elsewhere, or a collection runs).
  useEffect(() => {
    if (!d || allDone) return;
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') reload();
    }, POLL_MS);
    return () => clearInterval(t);
  }, [d, allDone, reload]);

  // Optional: re-verify automatically while steps are missing (each verification asks the tenant for tokens).
  useEffect(() => {
    if (!autoVerify || allDone) return;
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') void verifyRef.current();
    }, AUTO_VERIFY_MS);
    return () => clearInterval(t);
  }, [autoVerify, allDone]);

  // Links such as #rotate-secret land on their section once it is rendered.
  const hashDone = useRef(false);
  useEffect(() => {
    if (!d || hashDone.current || !location.hash) return;
    hashDone.current = true;
    const el = document.getElementById(location.hash.slice(1));
    if (el) {
      el.scrollIntoView();
      el.focus();
    }
  }, [d, location.hash]);

  if (!d) {
    return (
      <>
        <h1>Integration</h1>
        <ErrorMessage error={detail.error} />
        {detail.loading ? <Loading /> : null}
        <p>
          <Link to="/integrations">All integrations</Link>
        </p>
      </>
    );
  }

  const i = d.integration;
  const v = d.verification;
  const doneCount = d.steps.filter((s) => s.state === 'done').length;
  return (
    <>
      <p className="crumbs">
        <Link to="/integrations">Integrations</Link> ›
      </p>
      <h1>{i.name}</h1>
      {i.secretWarning ? (
        <div className="banner warn" role="region" aria-label="Secret expiry warning">
          <p>
            {i.secretWarning} <a href="#rotate-secret">Rotate the secret</a>
          </p>
        </div>
      ) : null}
      <section aria-labelledby="h-overview" className="card">
        <h2 id="h-overview">Overview</h2>
        <KeyValues
          entries={[
            ['Mode', i.mode === 'customer-app' ? 'Customer-created app (Mode A)' : 'Managed app consent (Mode B)'],
            ['Tenant ID', <code key="t">{i.tenantId}</code>],
            ['Client ID', i.clientId ? <code key="c">{i.clientId}</code> : null],
            ['Service principal Object ID', i.servicePrincipalObjectId ? <code key="s">{i.servicePrincipalObjectId}</code> : null],
            [
              'Credential',
              <span key="cr">
                <StatusBadge status={i.credentialState} /> {i.credentialError ?? ''}
              </span>,
            ],
            [
              'Secret expires',
              i.secretExpiresAt ? `${formatTime(i.secretExpiresAt)}${i.secretDaysLeft !== null ? ` (${i.secretDaysLeft} days left)` : ''}` : null,
            ],
            ['Created', <Time key="cr2" value={i.createdAt} />],
            ['Last verified', <Time key="v" value={i.verifiedAt} />],
          ]}
        />
      </section>

      <section aria-labelledby="h-checklist" className="card">
        <h2 id="h-checklist">Setup steps</h2>
        <p role="status" aria-live="polite" className="checklist-status">
          {verifying ? 'Verifying…' : `${doneCount} of ${d.steps.length} steps done${allDone ? ': setup complete.' : '.'}`}
          {v ? <> Last checked {formatTime(v.checkedAt)}.</> : ' Not verified yet.'}
        </p>
        {isAdmin ? (
          <div className="actions">
            <button type="button" onClick={() => void verify()} aria-disabled={verifying} className={verifying ? 'is-busy' : undefined}>
              Verify again
            </button>
            <label className="inline-check">
              <input type="checkbox" checked={autoVerify} onChange={(e) => setAutoVerify(e.target.checked)} /> Verify every 30 seconds until every step is done
            </label>
          </div>
        ) : null}
        <ErrorMessage error={verifyError} />
        {d.steps.length ? <Checklist steps={d.steps} /> : <p className="muted">No steps to show.</p>}
        {v?.warnings.length ? (
          <div className="banner warn">
            <h3>Warnings</h3>
            <ul>
              {v.warnings.map((w, n) => (
                <li key={n}>{w}</li>
              ))}
            </ul>
          </div>
        ) : null}
      </section>

      <RunPanel integrationId={i.id} isAdmin={isAdmin} onFinished={reload} />

      <section aria-labelledby="h-perms" className="card">
        <h2 id="h-perms">Permissions per capability</h2>
        {!v ? <p className="muted">Verify the integration to see its granted permissions.</p> : null}
        {v ? (
          <>
            {v.permissionList !== null && v.permissionList !== undefined ? (
              <p>
                Permission list recognised: <JsonValue value={v.permissionList} />
              </p>
            ) : null}
            <TableScroll label="Permissions per capability">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Capability</th>
                    <th scope="col">API</th>
                    <th scope="col">Status</th>
                    <th scope="col">Granted by / to add</th>
                  </tr>
                </thead>
                <tbody>
                  {v.capabilities.map((c) => (
                    <tr key={c.id}>
                      <td>{c.title}</td>
                      <td>{c.api}</td>
                      <td>
                        <StatusBadge status={c.status} />
                      </td>
                      <td>
                        {c.status === 'granted' ? list(c.grantedBy) : list(c.add) && <>Add: {list(c.add)}</>}
                        {c.detail ? <div>{c.detail}</div> : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            {v.missingPermissions.length ? (
              <>
                <h3>Missing application permissions</h3>
                <ul>
                  {v.missingPermissions.map((m) => (
                    <li key={`${m.api}/${m.permission}`}>
                      <strong>{m.permission}</strong> on {m.api} (for {m.capability})
                    </li>
                  ))}
                </ul>
                <p className="small muted">Add them under API permissions of the app registration and grant admin consent, then choose Verify again.</p>
              </>
            ) : null}
          </>
        ) : null}
      </section>

      <RegistrationSection id={i.id} />
      <EnvironmentsSection id={i.id} isAdmin={isAdmin} onGranted={reload} />

      <section aria-labelledby="h-safelist" className="card">
        <h2 id="h-safelist">IP safelist</h2>
        <p>
          Vigil calls your tenant from these addresses ({d.safelist.name}, region <code>{d.safelist.region}</code>). Add them to any Conditional Access named
          location or firewall that restricts the service principal.
        </p>
        {d.safelist.egressIps.length ? (
          <ul className="ip-list">
            {d.safelist.egressIps.map((ip) => (
              <li key={ip}>
                <code>{ip}</code>
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">This deployment declares no fixed egress addresses.</p>
        )}
      </section>

      {i.mode === 'customer-app' && isAdmin ? (
        <section aria-labelledby="h-rotate" className="card" id="rotate-secret" tabIndex={-1}>
          <h2 id="h-rotate">Rotate the secret</h2>
          <RotateSecretForm id={i.id} onRotated={setData} />
        </section>
      ) : null}
    </>
  );
}
