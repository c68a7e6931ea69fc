import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useLocation, useParams } from 'react-router';
import { api, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { column, DataTable, NameAndId, statusColumn, type Column } from '../components/DataTable.tsx';
import { SecretFields, toFormError, validateSecret, WHERE } from '../components/NewIntegrationForm.tsx';
import { RunPanel, useRuns } from '../components/RunPanel.tsx';
import {
  BoolBadge,
  ErrorMessage,
  ErrorSummary,
  formatTime,
  JsonValue,
  KeyValues,
  Loaded,
  Loading,
  StatusBadge,
  Time,
  type FormError,
} from '../components/ui.tsx';
import { useForm, useTitle } from '../hooks.ts';
import { apiKey, useApiMutation, useApiQuery } from '../query.ts';
import type { EnvironmentAccess, EnvironmentList, GrantList, GrantResult, IntegrationDetail, Registration, Step } from '../types.ts';

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
  const reg = useApiQuery<Registration>(`/integrations/${seg(id)}/registration`);
  return (
    <section aria-labelledby="h-registration" className="card">
      <h2 id="h-registration">Management-app registration</h2>
      <p className="muted">
        Power Platform admin APIs answer only applications registered as management applications. Either way below registers it; then choose Verify again.
      </p>
      <Loaded query={reg}>
        {(r) => (
          <>
            <p>
              Status: <BoolBadge value={r.registered} yes="done" no="missing" /> {r.detail}
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
        )}
      </Loaded>
    </section>
  );
}

function yesNo(v: boolean | string | null | undefined): string {
  if (v === true) return 'yes';
  if (v === false) return 'no';
  if (v === null || v === undefined) return 'unknown';
  return v;
}

const ENVIRONMENTS: Column<EnvironmentAccess>[] = [
  column('Environment', (e) => <NameAndId name={e.name ?? e.id} id={e.id} />),
  column('Dataverse', (e) => yesNo(e.dataverse)),
  column('Agents readable', (e) => <BoolBadge value={e.agentsReadable} yes="granted" no="missing" />),
  column('Reason', (e) => e.reason ?? ''),
];

const GRANTS: Column<GrantResult>[] = [
  column('Environment', (r) => r.name ?? r.environmentId),
  statusColumn((r) => r.result, 'Result'),
  column('Via', (r) => r.via ?? ''),
  column('Reason and fix', (r) => (
    <>
      {r.reason ?? ''}
      {r.fix ? <div className="fix">Fix: {r.fix}</div> : null}
    </>
  )),
];

/** How often the environments are fetched again while a collection runs (it may find new ones), in ms. */
const ENVIRONMENTS_WHILE_RUNNING_MS = 5_000;

function EnvironmentsSection({ id, isAdmin }: { id: string; isAdmin: boolean }) {
  // Server state only: fetched again while a collection runs, and after it (RunPanel marks everything stale then).
  const { running } = useRuns(id);
  const envs = useApiQuery<EnvironmentList>(`/integrations/${seg(id)}/environments`, undefined, {
    refetchInterval: running ? ENVIRONMENTS_WHILE_RUNNING_MS : false,
  });
  // Granting changes the environments' access and the verification: everything under the integration is fetched
  // again (environments, checklist, runs), and the views that count access (dashboard coverage, inventory).
  const grant = useApiMutation(() => api.post<GrantList>(`/integrations/${seg(id)}/environments/grant`), {
    invalidates: [`/integrations/${seg(id)}`, '/dashboard', '/inventory'],
  });
  const missing = (envs.data?.items ?? []).filter((e) => e.agentsReadable !== true).length;
  return (
    <section aria-labelledby="h-envs" className="card">
      <h2 id="h-envs">System Administrator per environment</h2>
      <p className="muted">Vigil needs the System Administrator security role in each Dataverse environment to read agents and their components.</p>
      <Loaded query={envs}>{(page) => <DataTable label="Environments" rows={page.items} columns={ENVIRONMENTS} empty="No environments found yet." />}</Loaded>
      {isAdmin ? (
        <p>
          <button type="button" onClick={() => !grant.isPending && grant.mutate(undefined)} aria-disabled={grant.isPending} aria-describedby="grant-hint">
            Grant System Administrator
          </button>{' '}
          <span id="grant-hint" className="small muted">
            {missing
              ? `Grants the role in the ${missing} environment${missing === 1 ? '' : 's'} where it is missing.`
              : 'Grants the role wherever it is missing, new environments included.'}
          </span>
        </p>
      ) : null}
      {grant.isPending ? <p role="status">Granting…</p> : null}
      <ErrorMessage error={grant.error} />
      {grant.data ? (
        <div role="status">
          <h3>Grant results</h3>
          <DataTable label="Grant results" rows={grant.data.items} columns={GRANTS} rowId={(r) => r.environmentId} />
        </div>
      ) : null}
    </section>
  );
}

function RotateSecretForm({ id }: { id: string }) {
  const form = useForm({ clientSecret: '', secretExpires: '' });
  const rotate = useIntegrationChange(
    id,
    (body: { clientSecret: string; secretExpires?: string }) => api.put<IntegrationDetail>(`/integrations/${seg(id)}/secret`, body),
    {
      also: ['/integrations', '/dashboard'],
      onSuccess: form.reset,
    },
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    rotate.reset();
    const { clientSecret, secretExpires } = form.values;
    const errs: FormError[] = [];
    validateSecret(clientSecret, secretExpires, errs);
    form.setErrors(errs);
    if (errs.length || rotate.isPending) return;
    rotate.mutate(
      { clientSecret, ...(secretExpires ? { secretExpires } : {}) },
      { onError: (err) => form.setErrors([toFormError(err, ['clientSecret', 'secretExpires'])]) },
    );
  }

  return (
    <form onSubmit={submit} noValidate>
      <ErrorSummary errors={form.errors} title="The secret was not rotated" />
      {rotate.isSuccess ? (
        <p className="success" role="status">
          The new secret was verified and now replaces the old one. Delete the old secret in the Entra admin center.
        </p>
      ) : null}
      <SecretFields
        form={form}
        hints={{ secret: `The new secret: ${WHERE.clientSecret} Vigil verifies it before it replaces the old one.`, expires: WHERE.secretExpires }}
      />
      <button type="submit" aria-disabled={rotate.isPending}>
        Rotate secret
      </button>
    </form>
  );
}

/**
 * A change that answers the integration's detail (verify, rotate): the answer replaces the cached detail at once,
 * then everything under the integration (and the paths of `also`) is fetched again.
 */
function useIntegrationChange<V>(id: string, call: (vars: V) => Promise<IntegrationDetail>, opts: { also?: string[]; onSuccess?: () => void } = {}) {
  const path = `/integrations/${seg(id)}`;
  return useApiMutation(call, {
    invalidates: [path, ...(opts.also ?? [])],
    update: (d, _vars, client) => client.setQueryData(apiKey(path), d),
    onSuccess: opts.onSuccess,
  });
}

type Capability = NonNullable<IntegrationDetail['verification']>['capabilities'][number];

const CAPABILITIES: Column<Capability>[] = [
  column('Capability', (c) => c.title),
  column('API', (c) => c.api),
  statusColumn((c) => c.status),
  column('Granted by / to add', (c) => (
    <>
      {c.status === 'granted' ? list(c.grantedBy) : list(c.add) && <>Add: {list(c.add)}</>}
      {c.detail ? <div>{c.detail}</div> : null}
    </>
  )),
];

/** Whether every step is done (or only informs). */
const allDone = (d: IntegrationDetail | undefined) => (d ? d.steps.every((s) => s.state === 'done' || s.state === 'info') : false);

export function IntegrationDetailPage() {
  const { id = '' } = useParams();
  const { isAdmin } = useAuth();
  const location = useLocation();
  // The live checklist: fetched again while a step is still open (someone may verify elsewhere, or a collection
  // runs); TanStack Query pauses the interval while the tab is hidden.
  const detail = useApiQuery<IntegrationDetail>(`/integrations/${seg(id)}`, undefined, {
    refetchInterval: (q) => (q.state.data && !allDone(q.state.data) ? POLL_MS : false),
  });
  const verify = useIntegrationChange(id, () => api.post<IntegrationDetail>(`/integrations/${seg(id)}/verify`));
  const [autoVerify, setAutoVerify] = useState(false);
  const d = detail.data;
  useTitle(d ? d.integration.name : 'Integration');
  const done = allDone(d);
  const verifyNow = () => {
    if (!verify.isPending) verify.mutate(undefined);
  };
  const verifyRef = useRef(verifyNow);
  verifyRef.current = verifyNow;

  // Optional: re-verify automatically while steps are missing (each verification asks the tenant for tokens).
  useEffect(() => {
    if (!autoVerify || done) return;
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') verifyRef.current();
    }, AUTO_VERIFY_MS);
    return () => clearInterval(t);
  }, [autoVerify, done]);

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
        {detail.isPending ? <Loading /> : null}
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
          {verify.isPending ? 'Verifying…' : `${doneCount} of ${d.steps.length} steps done${done ? ': setup complete.' : '.'}`}
          {v ? <> Last checked {formatTime(v.checkedAt)}.</> : ' Not verified yet.'}
        </p>
        {isAdmin ? (
          <div className="actions">
            <button type="button" onClick={verifyNow} aria-disabled={verify.isPending} className={verify.isPending ? 'is-busy' : undefined}>
              Verify again
            </button>
            <label className="inline-check">
              <input type="checkbox" checked={autoVerify} onChange={(e) => setAutoVerify(e.target.checked)} /> Verify every 30 seconds until every step is done
            </label>
          </div>
        ) : null}
        <ErrorMessage error={verify.error} />
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

      <RunPanel integrationId={i.id} isAdmin={isAdmin} />

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
            <DataTable label="Permissions per capability" rows={v.capabilities} columns={CAPABILITIES} />
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
      <EnvironmentsSection id={i.id} isAdmin={isAdmin} />

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
          <RotateSecretForm id={i.id} />
        </section>
      ) : null}
    </>
  );
}
