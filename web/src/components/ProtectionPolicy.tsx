// The protection policy of an integration (issue 19): the effective policy everyone reads — mode, the decision budget
// and the answer when it runs out, each detector's action and threshold, the allow-lists — with where each field comes
// from (a policy id or the defaults); and, for admins, a form setting the integration's policy (or a narrower one for
// an environment or an agent) through PUT /api/v1/protection/{integrationId}/policy, sending only the fields changed.
// The server's 400 names the field (`detectors.jailbreak.threshold`, `allow.hosts.0`): it is shown next to its input.
// Source of the fields: src/protection/policy.ts; docs/protection.md ("Policies").
import { useState, type FormEvent } from 'react';
import { api, ApiError, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { useForm } from '../hooks.ts';
import { useApiMutation, useApiQuery } from '../query.ts';
import type { ProtectionPolicies } from '../types.ts';
import { ErrorSummary, Field, KeyValues, Loaded, Time, type FormError } from './ui.tsx';

type Effective = ProtectionPolicies['effective'];
type StoredPolicy = ProtectionPolicies['policies'][number];
type Fields = StoredPolicy['fields'];
type Action = Effective['detectors'][string]['action'];
type ListName = keyof Effective['allow'];

const ACTIONS: { value: Action; label: string }[] = [
  { value: 'block', label: 'block' },
  { value: 'alert', label: 'alert' },
  { value: 'record', label: 'record' },
  { value: 'off', label: 'off' },
];

const LISTS: { name: ListName; label: string; hint: string }[] = [
  { name: 'mcpServers', label: 'Approved MCP servers', hint: 'Host names of MCP servers agents may call, such as mcp.contoso.com.' },
  { name: 'connectors', label: 'Approved connectors', hint: 'Connector ids such as shared_office365.' },
  { name: 'hosts', label: 'Approved hosts', hint: 'Host names (no scheme, path or port) tools may send data to; subdomains count.' },
  { name: 'internalDomains', label: 'Internal domains', hint: "The organization's own domains: mail to them is not external." },
];

/** One line on what a mode does. */
const MODE_TEXT: Record<Effective['mode'], string> = {
  monitor: 'Monitor: Vigil decides and records what it would block, but allows every tool call.',
  block: 'Block: Vigil blocks the tool calls a detector set to "block" objects to.',
};

/** `prompt_injection` → "Prompt injection". */
function detectorTitle(id: string): string {
  const words = id.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Where a field of the effective policy comes from: the first policy (most specific first) setting it, or the defaults. */
function sourceOf(effective: Effective, policies: StoredPolicy[], get: (f: Fields) => unknown): string {
  for (const id of effective.policyIds) {
    const p = policies.find((x) => x.id === id);
    if (p && get(p.fields) !== undefined) return id;
  }
  return 'defaults';
}

function Source({ from }: { from: string }) {
  return from === 'defaults' ? <span className="muted">defaults</span> : <code>{from}</code>;
}

function scopeOf(p: StoredPolicy): string {
  if (p.agentId) return `agent ${p.agentId}${p.environmentId ? ` (environment ${p.environmentId})` : ''}`;
  if (p.environmentId) return `environment ${p.environmentId}`;
  return p.integrationId ? 'integration' : 'organization';
}

/** The effective policy, read-only, with the source of each field. */
function EffectiveView({ data }: { data: ProtectionPolicies }) {
  const e = data.effective;
  const from = (get: (f: Fields) => unknown) => sourceOf(e, data.policies, get);
  return (
    <>
      <KeyValues
        entries={[
          [
            'Mode',
            <span key="m">
              <strong>{e.mode}</strong> — {MODE_TEXT[e.mode]}{' '}
              <span className="small">
                (from <Source from={from((f) => f.mode)} />)
              </span>
            </span>,
          ],
          [
            'Decision budget',
            <span key="d">
              {e.deadlineMs} ms{' '}
              <span className="small">
                (from <Source from={from((f) => f.deadlineMs)} />)
              </span>
            </span>,
          ],
          [
            'When the budget runs out',
            <span key="t">
              {e.onTimeout === 'allow' ? 'allow the tool call' : 'block the tool call'}{' '}
              <span className="small">
                (from <Source from={from((f) => f.onTimeout)} />)
              </span>
            </span>,
          ],
          [
            'Policies applied',
            e.policyIds.length ? (
              e.policyIds.join(', ')
            ) : (
              <span key="p" className="muted">
                none: the defaults
              </span>
            ),
          ],
        ]}
      />
      <div className="table-scroll" role="region" aria-label="Detectors of the effective policy" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Detector</th>
              <th scope="col">Action</th>
              <th scope="col" className="num">
                Threshold
              </th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(e.detectors).map(([id, d]) => (
              <tr key={id}>
                <th scope="row">
                  {detectorTitle(id)} <code className="small">{id}</code>
                </th>
                <td>{d.action}</td>
                <td className="num">{d.threshold}</td>
                <td>
                  <Source from={from((f) => f.detectors?.[id]?.action ?? f.detectors?.[id]?.threshold)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h3>Allow-lists</h3>
      <dl className="kv" aria-label="Allow-lists of the effective policy">
        {LISTS.map((l) => (
          <div key={l.name} className="kv-row">
            <dt>{l.label}</dt>
            <dd>
              {e.allow[l.name].length ? (
                <ul className="policy-list">
                  {e.allow[l.name].map((v) => (
                    <li key={v}>
                      <code>{v}</code>
                    </li>
                  ))}
                </ul>
              ) : (
                <span className="muted">none</span>
              )}{' '}
              <span className="small">
                (from <Source from={from((f) => f.allow?.[l.name])} />)
              </span>
            </dd>
          </div>
        ))}
      </dl>
      {data.policies.length ? (
        <details>
          <summary>Stored policies ({data.policies.length})</summary>
          <ul>
            {data.policies.map((p) => (
              <li key={p.id}>
                <code>{p.id}</code>: {scopeOf(p)}, sets {Object.keys(p.fields).join(', ') || 'nothing'}; updated <Time value={p.updatedAt} />
                {p.updatedBy ? ` by ${p.updatedBy}` : ''}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </>
  );
}

/** Input ids of the form, each the key of its value in the form state. */
const ids = {
  mode: 'pol-mode',
  deadlineMs: 'pol-deadlineMs',
  onTimeout: 'pol-onTimeout',
  environmentId: 'pol-environmentId',
  agentId: 'pol-agentId',
  action: (d: string) => `pol-det-${d}-action`,
  threshold: (d: string) => `pol-det-${d}-threshold`,
  list: (l: string) => `pol-allow-${l}`,
};

/** The form's values (all strings) from the effective policy. */
function initialValues(e: Effective): Record<string, string> {
  const v: Record<string, string> = {
    [ids.mode]: e.mode,
    [ids.deadlineMs]: String(e.deadlineMs),
    [ids.onTimeout]: e.onTimeout,
    [ids.environmentId]: '',
    [ids.agentId]: '',
  };
  for (const [d, s] of Object.entries(e.detectors)) {
    v[ids.action(d)] = s.action;
    v[ids.threshold(d)] = String(s.threshold);
  }
  for (const l of LISTS) v[ids.list(l.name)] = e.allow[l.name].join('\n');
  return v;
}

const lines = (s: string) =>
  s
    .split('\n')
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * Maps the server's field path to the form's input and a message: `detectors.<id>.threshold` → that threshold,
 * `detectors.<id>` → its action, `allow.<list>.<n>` → the list's text area (naming the line), top-level fields
 * (`mode`, `deadlineMs`, `onTimeout`, `environmentId`, `agentId`) → their input. Unknown paths stay in the summary.
 */
function policyFieldError(err: ApiError): FormError {
  const path = (err.field ?? '')
    .replace(/^body[./]/, '')
    .split(/[./]/)
    .filter(Boolean);
  // The server's message starts with the field's path (`allow.hosts.1: must be …`): the input says which field it is.
  const message = err.field && err.message.startsWith(`${err.field}: `) ? err.message.slice(err.field.length + 2) : err.message;
  const base = { message, remediation: err.remediation };
  const [head, second, third] = path;
  if (head === 'detectors' && second) return { ...base, field: third === 'threshold' ? ids.threshold(second) : ids.action(second) };
  if (head === 'allow' && second && LISTS.some((l) => l.name === second)) {
    const n = Number(third);
    return { ...base, field: ids.list(second), message: Number.isInteger(n) ? `Line ${n + 1}: ${message}` : message };
  }
  if (head && path.length === 1 && head in ids) return { ...base, field: (ids as Record<string, unknown>)[head] as string };
  return base;
}

/** A labelled select bound to the form, with its error. */
function Select({
  id,
  label,
  value,
  options,
  onChange,
  error,
  hideLabel,
}: {
  id: string;
  label: string;
  value: string;
  options: { value: string; label: string }[];
  onChange: (v: string) => void;
  error: FormError | undefined;
  hideLabel?: boolean;
}) {
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id} className={hideLabel ? 'visually-hidden' : undefined}>
        {label}
      </label>
      {error ? (
        <div className="field-error" id={`${id}-error`}>
          <span className="visually-hidden">Error: </span>
          {error.message}
        </div>
      ) : null}
      <select id={id} name={id} value={value} onChange={(e) => onChange(e.target.value)} aria-describedby={error ? `${id}-error` : undefined}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The admin's form: the scope, then every field, prefilled with the effective policy; Save sends what changed. */
function PolicyForm({ integrationId, effective, onSaved }: { integrationId: string; effective: Effective; onSaved: (id: string) => void }) {
  const form = useForm(initialValues(effective));
  const v = form.values;
  const err = (id: string) => form.errors.find((e) => e.field === id);
  const save = useApiMutation((body: object) => api.put<{ id: string }>(`/protection/${seg(integrationId)}/policy`, body), {
    invalidates: [`/protection/${seg(integrationId)}/policies`],
    onSuccess: (p) => onSaved(p.id),
  });

  /** The changed fields, or the problems found before asking the server. */
  function changes(): { body: Record<string, unknown>; errors: FormError[] } {
    const errors: FormError[] = [];
    const body: Record<string, unknown> = {};
    if (v[ids.mode] !== effective.mode) body.mode = v[ids.mode];
    if (v[ids.onTimeout] !== effective.onTimeout) body.onTimeout = v[ids.onTimeout];
    const deadline = Number(v[ids.deadlineMs]);
    if (!Number.isInteger(deadline) || deadline < 10 || deadline > 900)
      errors.push({ field: ids.deadlineMs, message: 'The decision budget must be a whole number of milliseconds from 10 to 900.' });
    else if (deadline !== effective.deadlineMs) body.deadlineMs = deadline;
    const detectors: Record<string, { action?: string; threshold?: number }> = {};
    // Only the changed fields go: the server keeps a detector's other stored field (src/protection/policies.ts).
    for (const [d, s] of Object.entries(effective.detectors)) {
      const change: { action?: string; threshold?: number } = {};
      if (v[ids.action(d)] !== s.action) change.action = v[ids.action(d)];
      const raw = (v[ids.threshold(d)] ?? '').trim();
      const t = Number(raw);
      if (raw === '' || Number.isNaN(t) || t < 0 || t > 1)
        errors.push({ field: ids.threshold(d), message: `The threshold of ${detectorTitle(d)} must be a number from 0 to 1.` });
      else if (t !== s.threshold) change.threshold = t;
      if (Object.keys(change).length) detectors[d] = change;
    }
    if (Object.keys(detectors).length) body.detectors = detectors;
    const allow: Record<string, string[]> = {};
    for (const l of LISTS) {
      const now = lines(v[ids.list(l.name)] ?? '');
      if (now.join('\n') !== effective.allow[l.name].join('\n')) allow[l.name] = now;
    }
    if (Object.keys(allow).length) body.allow = allow;
    return { body, errors };
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const { body, errors } = changes();
    if (!errors.length && !Object.keys(body).length) errors.push({ message: 'Nothing to save: change a field first.' });
    form.setErrors(errors);
    if (errors.length) return;
    const env = v[ids.environmentId]!.trim();
    const agent = v[ids.agentId]!.trim();
    save.mutate(
      { ...(env ? { environmentId: env } : {}), ...(agent ? { agentId: agent } : {}), ...body },
      {
        onError: (x) => form.setErrors([x instanceof ApiError ? policyFieldError(x) : { message: (x as Error).message || 'The policy could not be saved.' }]),
      },
    );
  }

  return (
    <form onSubmit={submit} noValidate aria-labelledby="h-policy-edit" className="policy-form">
      <h3 id="h-policy-edit">Change the policy</h3>
      <p className="muted small">
        Prefilled with the effective policy; Save sets only the fields you change, the others stay as they are. Leave the environment and agent empty to change
        the policy of the whole integration.
      </p>
      <ErrorSummary errors={form.errors} title="The policy was not saved" />
      <div className="policy-scope">
        <Field
          {...form.field(ids.environmentId)}
          label="Environment ID (optional)"
          hint="Only for this environment's agents."
          autoComplete="off"
          spellCheck={false}
        />
        <Field
          {...form.field(ids.agentId)}
          label="Agent ID (optional)"
          hint="Only for this agent (its Copilot Studio bot id)."
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <Select
        id={ids.mode}
        label="Mode"
        value={v[ids.mode]!}
        options={[
          { value: 'monitor', label: 'monitor: record, never block' },
          { value: 'block', label: 'block: block what detectors object to' },
        ]}
        onChange={(x) => form.set(ids.mode, x)}
        error={err(ids.mode)}
      />
      <fieldset className="policy-detectors">
        <legend>Detectors</legend>
        <p className="hint">
          block: stop the tool call (in block mode); alert: raise an alert; record: only record; off: do not run. A detector acts when its confidence reaches
          the threshold (0 to 1).
        </p>
        <table>
          <thead>
            <tr>
              <th scope="col">Detector</th>
              <th scope="col">Action</th>
              <th scope="col">Threshold</th>
            </tr>
          </thead>
          <tbody>
            {Object.keys(effective.detectors).map((d) => {
              const te = err(ids.threshold(d));
              return (
                <tr key={d}>
                  <th scope="row">{detectorTitle(d)}</th>
                  <td>
                    <Select
                      id={ids.action(d)}
                      label={`Action of ${detectorTitle(d)}`}
                      hideLabel
                      value={v[ids.action(d)]!}
                      options={ACTIONS}
                      onChange={(x) => form.set(ids.action(d), x)}
                      error={err(ids.action(d))}
                    />
                  </td>
                  <td>
                    <div className={`field${te ? ' field-invalid' : ''}`}>
                      <label htmlFor={ids.threshold(d)} className="visually-hidden">
                        Threshold of {detectorTitle(d)}
                      </label>
                      {te ? (
                        <div className="field-error" id={`${ids.threshold(d)}-error`}>
                          <span className="visually-hidden">Error: </span>
                          {te.message}
                        </div>
                      ) : null}
                      <input
                        type="number"
                        id={ids.threshold(d)}
                        name={ids.threshold(d)}
                        min={0}
                        max={1}
                        step={0.05}
                        value={v[ids.threshold(d)]}
                        onChange={(e) => form.set(ids.threshold(d), e.target.value)}
                        aria-invalid={te ? true : undefined}
                        aria-describedby={te ? `${ids.threshold(d)}-error` : undefined}
                      />
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </fieldset>
      <fieldset>
        <legend>Allow-lists (one entry per line)</legend>
        {LISTS.map((l) => (
          <Field key={l.name} {...form.field(ids.list(l.name))} label={l.label} hint={l.hint} rows={3} />
        ))}
      </fieldset>
      <Field
        {...form.field(ids.deadlineMs)}
        label="Decision budget (ms)"
        hint="10 to 900: Copilot Studio waits 1,000 ms at most."
        type="number"
        min={10}
        max={900}
        step={10}
      />
      <Select
        id={ids.onTimeout}
        label="When the budget runs out"
        value={v[ids.onTimeout]!}
        options={[
          { value: 'allow', label: 'allow the tool call' },
          { value: 'block', label: 'block the tool call' },
        ]}
        onChange={(x) => form.set(ids.onTimeout, x)}
        error={err(ids.onTimeout)}
      />
      <div className="actions">
        <button type="submit" disabled={save.isPending}>
          Save policy
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            form.reset();
            form.setErrors([]);
          }}
        >
          Undo changes
        </button>
      </div>
    </form>
  );
}

/** The "Policy" section of an integration's Protection page: the effective policy, and the form for admins. */
export function PolicySection({ integrationId }: { integrationId: string }) {
  const { isAdmin } = useAuth();
  const policies = useApiQuery<ProtectionPolicies>(`/protection/${seg(integrationId)}/policies`);
  const [saved, setSaved] = useState<string | null>(null);
  return (
    <section aria-labelledby="h-policy" className="card">
      <h2 id="h-policy">Policy</h2>
      <Loaded query={policies}>
        {(p) => (
          <>
            <EffectiveView data={p} />
            {saved ? (
              <p className="notice" role="status">
                Policy <code>{saved}</code> saved.
              </p>
            ) : null}
            {isAdmin ? (
              <PolicyForm key={JSON.stringify(p.effective)} integrationId={integrationId} effective={p.effective} onSaved={(id) => setSaved(id)} />
            ) : null}
          </>
        )}
      </Loaded>
    </section>
  );
}
