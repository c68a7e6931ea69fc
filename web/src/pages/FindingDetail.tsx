import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { api, ApiError, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { toFormError } from '../components/NewIntegrationForm.tsx';
import {
  ErrorMessage,
  ErrorSummary,
  Field,
  JsonValue,
  KeyValues,
  Loading,
  SeverityBadge,
  StatusBadge,
  Time,
  todayIso,
  type FormError,
} from '../components/ui.tsx';
import { useApi, useTitle } from '../hooks.ts';
import type { Finding, FindingDetail, Integration, Page } from '../types.ts';

/** A suppression "until" a date lasts through that whole day (UTC). */
function endOfDay(date: string): string {
  return `${date}T23:59:59.000Z`;
}

function SuppressForm({ id, onDone }: { id: string; onDone: (f: Finding) => void }) {
  const [reason, setReason] = useState('');
  const [until, setUntil] = useState('');
  const [errors, setErrors] = useState<FormError[]>([]);
  const [busy, setBusy] = useState(false);
  const errFor = (f: string) => errors.find((e) => e.field === f);
  const reasonErr = errFor('reason');

  async function submit(e: FormEvent) {
    e.preventDefault();
    const errs: FormError[] = [];
    if (!reason.trim())
      errs.push({
        field: 'reason',
        message: 'Enter the reason for suppressing this finding.',
        remediation: 'Say why the risk is accepted or handled elsewhere, for auditors and colleagues.',
      });
    if (until && until <= todayIso())
      errs.push({
        field: 'expiresAt',
        message: 'The end date must be in the future.',
        remediation: 'Choose a later date, or leave it empty to suppress until lifted.',
      });
    setErrors(errs);
    if (errs.length || busy) return;
    setBusy(true);
    try {
      const f = await api.post<Finding>(`/findings/${seg(id)}/suppression`, { reason: reason.trim(), ...(until ? { expiresAt: endOfDay(until) } : {}) });
      setReason('');
      setUntil('');
      onDone(f);
    } catch (err) {
      setErrors([toFormError(err, ['reason', 'expiresAt'])]);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(e) => void submit(e)} noValidate>
      <ErrorSummary errors={errors} title="The finding was not suppressed" />
      <div className={`field${reasonErr ? ' field-invalid' : ''}`}>
        <label htmlFor="reason">Reason</label>
        <div className="hint" id="reason-hint">
          Recorded in the finding&apos;s history with your name.
        </div>
        {reasonErr ? (
          <div className="field-error" id="reason-error">
            <span className="visually-hidden">Error: </span>
            {reasonErr.message}
            {reasonErr.remediation ? <span className="remediation"> {reasonErr.remediation}</span> : null}
          </div>
        ) : null}
        <textarea
          id="reason"
          name="reason"
          rows={3}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          aria-invalid={reasonErr ? true : undefined}
          aria-describedby={reasonErr ? 'reason-error reason-hint' : 'reason-hint'}
          required
        />
      </div>
      <Field
        id="expiresAt"
        label="Suppress until"
        type="date"
        min={todayIso()}
        value={until}
        onChange={(e) => setUntil(e.target.value)}
        error={errFor('expiresAt')}
        hint="Optional. The finding reopens after this day (UTC) if still present."
      />
      <button type="submit" aria-disabled={busy}>
        Suppress
      </button>
    </form>
  );
}

export function FindingDetailPage() {
  const { id = '' } = useParams();
  const { isAdmin } = useAuth();
  const detail = useApi<FindingDetail>(`/findings/${seg(id)}`);
  const integrations = useApi<Page<Integration>>('/integrations');
  const [liftError, setLiftError] = useState<ApiError | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const f = detail.data;
  useTitle(f ? (f.title ?? f.checkId) : 'Finding');

  function changed(next: Finding, msg: string) {
    // The suppression answers the finding without its history: keep what we have and fetch the rest.
    if (f) detail.setData({ ...f, ...next });
    setMessage(msg);
    detail.reload();
  }

  async function lift() {
    setLiftError(null);
    try {
      const next = await api.del<Finding>(`/findings/${seg(id)}/suppression`);
      changed(next, 'The suppression was lifted.');
    } catch (e) {
      setLiftError(e instanceof ApiError ? e : new ApiError(0, 'CLIENT', (e as Error).message));
    }
  }

  return (
    <>
      <p className="crumbs">
        <Link to="/findings">Findings</Link> ›
      </p>
      <h1>{f ? (f.title ?? f.checkId) : 'Finding'}</h1>
      <ErrorMessage error={detail.error} />
      {detail.loading && !f ? <Loading /> : null}
      {message ? (
        <p className="success" role="status">
          {message}
        </p>
      ) : null}
      {f ? (
        <div className="dash-grid">
          <section aria-labelledby="h-finding" className="card">
            <h2 id="h-finding">Finding</h2>
            <KeyValues
              entries={[
                ['Severity', <SeverityBadge key="s" severity={f.severity} />],
                ['Status', <StatusBadge key="st" status={f.status} />],
                ['Check', <code key="c">{f.checkId}</code>],
                ['Resource', `${f.resourceName ?? f.resourceId} (${f.resourceType})`],
                ['Resource ID', <code key="r">{f.resourceId}</code>],
                [
                  'Integration',
                  <Link key="i" to={`/integrations/${seg(f.integrationId)}`}>
                    {integrations.data?.items.find((i) => i.id === f.integrationId)?.name ?? f.integrationId}
                  </Link>,
                ],
                ['First seen', <Time key="f" value={f.firstSeenAt} />],
                ['Last seen', <Time key="l" value={f.lastSeenAt} />],
                ['Resolved', <Time key="rs" value={f.resolvedAt} />],
              ]}
            />
            {f.resourceType === 'agent' || f.resourceType === 'bot' ? (
              <p>
                <Link to={`/integrations/${seg(f.integrationId)}/agents/${seg(f.resourceId)}`}>Open the agent</Link>
              </p>
            ) : null}
            {f.detail ? (
              <>
                <h3>Detail</h3>
                <JsonValue value={f.detail} summary="Show the evidence" />
              </>
            ) : null}
          </section>

          {f.check ? (
            <section aria-labelledby="h-check" className="card">
              <h2 id="h-check">Why it matters and how to fix it</h2>
              <h3>Risk</h3>
              <p>{f.check.risk}</p>
              <h3>Remediation</h3>
              <p className="pre-line">{f.check.remediation}</p>
              {f.check.references.length ? (
                <>
                  <h3>References</h3>
                  <ul>
                    {f.check.references.map((r) => (
                      <li key={r}>
                        {/^https?:\/\//.test(r) ? (
                          <a href={r} target="_blank" rel="noopener noreferrer">
                            {r}
                          </a>
                        ) : (
                          r
                        )}
                      </li>
                    ))}
                  </ul>
                </>
              ) : null}
            </section>
          ) : null}

          <section aria-labelledby="h-suppression" className="card">
            <h2 id="h-suppression">Suppression</h2>
            {f.suppression ? (
              <>
                <KeyValues
                  entries={[
                    ['Reason', f.suppression.reason],
                    ['By', f.suppression.author],
                    ['Since', <Time key="c" value={f.suppression.createdAt} />],
                    ['Until', f.suppression.expiresAt ? <Time key="e" value={f.suppression.expiresAt} /> : 'lifted by hand'],
                  ]}
                />
                {isAdmin ? (
                  <button type="button" onClick={() => void lift()}>
                    Lift suppression
                  </button>
                ) : null}
                <ErrorMessage error={liftError} />
              </>
            ) : isAdmin ? (
              <SuppressForm id={f.id} onDone={(next) => changed(next, 'The finding is suppressed.')} />
            ) : (
              <p className="muted">Not suppressed. Administrators can suppress a finding with a reason.</p>
            )}
          </section>

          <section aria-labelledby="h-history" className="card">
            <h2 id="h-history">History</h2>
            {f.history.length ? (
              <ol className="timeline">
                {[...f.history]
                  .sort((a, b) => b.at.localeCompare(a.at))
                  .map((h, n) => (
                    <li key={`${h.at}-${n}`}>
                      <Time value={h.at} /> <strong>{h.event}</strong>{' '}
                      {h.detail !== null && h.detail !== undefined ? (
                        typeof h.detail === 'object' ? (
                          <JsonValue value={h.detail} summary="Detail" />
                        ) : (
                          String(h.detail)
                        )
                      ) : null}
                    </li>
                  ))}
              </ol>
            ) : (
              <p className="muted">No history yet.</p>
            )}
          </section>
        </div>
      ) : null}
    </>
  );
}
