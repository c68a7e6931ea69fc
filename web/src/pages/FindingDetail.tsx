import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { api, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { IntegrationName, ResourceName } from '../components/ListPage.tsx';
import { toFormError } from '../components/NewIntegrationForm.tsx';
import {
  endOfDay,
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
import { useForm, useTitle } from '../hooks.ts';
import { apiKey, useApiMutation, useApiQuery } from '../query.ts';
import type { Finding, FindingDetail } from '../types.ts';

function SuppressForm({ id, onDone }: { id: string; onDone: () => void }) {
  const form = useForm({ reason: '', expiresAt: '' });
  const { reason, expiresAt: until } = form.values;
  const suppress = useFindingChange(
    id,
    (body: { reason: string; expiresAt?: string }) => api.post<Finding>(`/findings/${seg(id)}/suppression`, body),
    () => {
      form.reset();
      onDone();
    },
  );

  function submit(e: FormEvent) {
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
    form.setErrors(errs);
    if (errs.length || suppress.isPending) return;
    suppress.mutate(
      { reason: reason.trim(), ...(until ? { expiresAt: endOfDay(until) } : {}) },
      { onError: (err) => form.setErrors([toFormError(err, ['reason', 'expiresAt'])]) },
    );
  }

  return (
    <form onSubmit={submit} noValidate>
      <ErrorSummary errors={form.errors} title="The finding was not suppressed" />
      <Field {...form.field('reason')} label="Reason" rows={3} hint="Recorded in the finding's history with your name." required />
      <Field
        {...form.field('expiresAt')}
        label="Suppress until"
        type="date"
        min={todayIso()}
        hint="Optional. The finding reopens after this day (UTC) if still present."
      />
      <button type="submit" aria-disabled={suppress.isPending}>
        Suppress
      </button>
    </form>
  );
}

/**
 * A change of finding `id`'s suppression. The answer is the finding without its history: it is merged into the
 * cached detail at once, then the findings (this one and every list) are fetched again.
 */
function useFindingChange<V>(id: string, call: (vars: V) => Promise<Finding>, onSuccess: () => void) {
  return useApiMutation(call, {
    invalidates: ['/findings', '/dashboard'],
    update: (next, _vars, client) => client.setQueryData<FindingDetail>(apiKey(`/findings/${seg(id)}`), (f) => f && { ...f, ...next }),
    onSuccess,
  });
}

export function FindingDetailPage() {
  const { id = '' } = useParams();
  const { isAdmin } = useAuth();
  const detail = useApiQuery<FindingDetail>(`/findings/${seg(id)}`);
  const [message, setMessage] = useState<string | null>(null);
  const lift = useFindingChange(
    id,
    () => api.del<Finding>(`/findings/${seg(id)}/suppression`),
    () => setMessage('The suppression was lifted.'),
  );
  const f = detail.data;
  useTitle(f ? (f.title ?? f.checkId) : 'Finding');

  return (
    <>
      <p className="crumbs">
        <Link to="/findings">Findings</Link> ›
      </p>
      <h1>{f ? (f.title ?? f.checkId) : 'Finding'}</h1>
      <ErrorMessage error={detail.error} />
      {detail.isPending ? <Loading /> : null}
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
                [
                  'Resource',
                  <span key="rn">
                    <ResourceName r={f} /> ({f.resourceType})
                  </span>,
                ],
                ['Resource ID', <code key="r">{f.resourceId}</code>],
                [
                  'Integration',
                  <Link key="i" to={`/integrations/${seg(f.integrationId)}`}>
                    <IntegrationName id={f.integrationId} />
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
                  <button type="button" onClick={() => lift.mutate(undefined)}>
                    Lift suppression
                  </button>
                ) : null}
                <ErrorMessage error={lift.error} />
              </>
            ) : isAdmin ? (
              <SuppressForm id={f.id} onDone={() => setMessage('The finding is suppressed.')} />
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
