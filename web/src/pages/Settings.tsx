import { useMemo, useRef, useState, type FormEvent } from 'react';
import { Link, Navigate, Route, Routes, useLocation } from 'react-router';
import { api, seg } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { CopyBlock } from '../components/CopyBlock.tsx';
import { column, DataTable, NameAndId, timeColumn, type Column } from '../components/DataTable.tsx';
import { toFormError } from '../components/NewIntegrationForm.tsx';
import { ConfirmDialog, ErrorMessage, ErrorSummary, Field, Loaded, StatusBadge, todayIso, type FormError } from '../components/ui.tsx';
import { useForm, useTitle } from '../hooks.ts';
import { useApiMutation, useApiQuery } from '../query.ts';
import type { ApiKeyList, CreatedApiKey, PortalUserList, SinkList, SinkTest } from '../types.ts';

const ROLES = ['viewer', 'admin'] as const;
const ROLE_HINT = 'Viewers read everything; administrators also change integrations, suppress findings and manage users and keys.';

const TABS = [
  { to: '/settings/users', label: 'Users' },
  { to: '/settings/api-keys', label: 'API keys' },
  { to: '/settings/sinks', label: 'SIEM sinks' },
];

/** Organization settings: portal users, API keys and the SIEM sinks, for administrators. */
export function SettingsPage() {
  const { isAdmin, session } = useAuth();
  const { pathname } = useLocation();
  return (
    <>
      <h1>Settings of {session?.organization.name ?? 'the organization'}</h1>
      <nav aria-label="Settings" className="sub-nav">
        <ul>
          {TABS.map((t) => (
            <li key={t.to}>
              <Link to={t.to} aria-current={pathname === t.to ? 'page' : undefined}>
                {t.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {isAdmin ? (
        <Routes>
          <Route index element={<Navigate to="/settings/users" replace />} />
          <Route path="users" element={<UsersSettings />} />
          <Route path="api-keys" element={<ApiKeySettings />} />
          <Route path="sinks" element={<SinkSettings />} />
          <Route path="*" element={<Navigate to="/settings/users" replace />} />
        </Routes>
      ) : (
        <p>Only administrators of the organization see and change its settings. Ask an administrator to make the change, or to make you one.</p>
      )}
    </>
  );
}

type User = PortalUserList['items'][number];

/** A change an admin asks for on one user's row, confirmed in a dialog first. */
type UserChange = { user: User; change: { role: 'admin' | 'viewer' } | { disabled: boolean } };

/** The dialog's title, its consequence and its confirming button, for one change. */
function describeChange({ user, change }: UserChange): { title: string; consequence: string; confirm: string; done: string } {
  const who = user.displayName || user.email;
  if ('role' in change)
    return change.role === 'admin'
      ? {
          title: `Make ${who} an administrator?`,
          consequence: 'They can then change integrations, suppress findings, contain agents and manage users and API keys.',
          confirm: 'Make administrator',
          done: `${user.email} is now an administrator.`,
        }
      : {
          title: `Make ${who} a viewer?`,
          consequence: 'They keep reading everything but can no longer change anything, from their next request on.',
          confirm: 'Make viewer',
          done: `${user.email} is now a viewer.`,
        };
  return change.disabled
    ? {
        title: `Disable ${who}?`,
        consequence: 'They are signed out at once and cannot sign in again; what they did stays in the history. The account can be enabled again.',
        confirm: 'Disable the account',
        done: `${user.email} is disabled and signed out.`,
      }
    : {
        title: `Enable ${who}?`,
        consequence: 'They can sign in again with their password.',
        confirm: 'Enable the account',
        done: `${user.email} can sign in again.`,
      };
}

/** The users table's columns; `ask` opens the confirmation of a change, `me` is the signed-in user's id. */
function userColumns(ask: (c: UserChange) => void, me: string | undefined): Column<User>[] {
  return [
    column('User', (u) => (
      <>
        <NameAndId name={u.displayName || u.email} id={u.email} />
        {u.id === me ? <span className="muted"> (you)</span> : null}
      </>
    )),
    column('Role', (u) => u.role),
    column('State', (u) => <StatusBadge status={u.disabled ? 'disabled' : u.lockedUntil && Date.parse(u.lockedUntil) > Date.now() ? 'locked' : 'active'} />),
    timeColumn('Last sign-in', (u) => u.lastLoginAt),
    timeColumn('Added', (u) => u.createdAt),
    column('Actions', (u) => {
      const who = u.displayName || u.email;
      return (
        <div className="row-actions">
          <button type="button" className="secondary" onClick={() => ask({ user: u, change: { role: u.role === 'admin' ? 'viewer' : 'admin' } })}>
            {u.role === 'admin' ? 'Make viewer' : 'Make admin'}
            <span className="visually-hidden"> {who}</span>
          </button>
          <button type="button" className="secondary" onClick={() => ask({ user: u, change: { disabled: !u.disabled } })}>
            {u.disabled ? 'Enable' : 'Disable'}
            <span className="visually-hidden"> {who}</span>
          </button>
        </div>
      );
    }),
  ];
}

/** A labelled select of the two roles. */
function RoleSelect({ id, value, onChange }: { id: string; value: string; onChange: (v: string) => void }) {
  return (
    <div className="field">
      <label htmlFor={id}>Role</label>
      <div className="hint" id={`${id}-hint`}>
        {ROLE_HINT}
      </div>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)} aria-describedby={`${id}-hint`}>
        {ROLES.map((r) => (
          <option key={r} value={r}>
            {r}
          </option>
        ))}
      </select>
    </div>
  );
}

function UsersSettings() {
  useTitle('Users · Settings');
  const { session } = useAuth();
  const users = useApiQuery<PortalUserList>('/organization/users');
  const [asked, setAsked] = useState<UserChange | null>(null);
  const [changed, setChanged] = useState('');
  const usersHeading = useRef<HTMLHeadingElement>(null);
  const update = useApiMutation(({ user, change }: UserChange) => api.patch<User>(`/organization/users/${seg(user.id)}`, change), {
    invalidates: ['/organization/users'],
  });
  const me = session?.user?.id;
  // Kept between renders: a column's cell is rendered as a component, and a new one replaces the focused button.
  const columns = useMemo(() => userColumns(setAsked, me), [me]);
  const asking = asked ? describeChange(asked) : null;
  const form = useForm({ email: '', displayName: '', password: '' });
  const [role, setRole] = useState('viewer');
  const [added, setAdded] = useState('');
  const add = useApiMutation((body: { email: string; password: string; role: string; displayName?: string }) => api.post<User>('/organization/users', body), {
    invalidates: ['/organization/users'],
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const { email, displayName, password } = form.values;
    const errs: FormError[] = [];
    if (!/^[^\s@]+@[^\s@]+$/.test(email.trim()))
      errs.push({ field: 'email', message: 'Enter the email address the person signs in with.', remediation: 'For example ana@contoso.com.' });
    if (password.length < 12)
      errs.push({ field: 'password', message: 'Enter a password of at least 12 characters.', remediation: 'Give it to the person over a separate channel.' });
    form.setErrors(errs);
    setAdded('');
    if (errs.length || add.isPending) return;
    add.mutate(
      { email: email.trim(), password, role, ...(displayName.trim() ? { displayName: displayName.trim() } : {}) },
      {
        onSuccess: (u) => {
          form.reset();
          setAdded(`${u.email} was added as ${u.role}.`);
        },
        onError: (err) => form.setErrors([toFormError(err, ['email', 'password', 'displayName', 'role'])]),
      },
    );
  }

  return (
    <>
      <section aria-labelledby="h-users">
        <h2 id="h-users" tabIndex={-1} ref={usersHeading}>
          Portal users
        </h2>
        <p className="muted">A disabled user is signed out at once and cannot sign in; the organization always keeps one enabled administrator.</p>
        <p role="status">{changed}</p>
        <Loaded query={users}>{(data) => <DataTable label="Portal users" rows={data.items} columns={columns} empty="No portal user yet." />}</Loaded>
        <ConfirmDialog
          open={asked !== null}
          title={asking?.title ?? ''}
          confirm={asking?.confirm ?? ''}
          busy={update.isPending}
          afterConfirm={usersHeading}
          onConfirm={() =>
            asked &&
            update.mutate(asked, {
              onSuccess: () => {
                setChanged(describeChange(asked).done);
                setAsked(null);
              },
            })
          }
          onClose={() => {
            update.reset();
            setAsked(null);
          }}
        >
          <p>{asking?.consequence}</p>
          <ErrorMessage error={update.error} />
        </ConfirmDialog>
      </section>
      <section aria-labelledby="h-add-user" className="card">
        <h2 id="h-add-user">Add a user</h2>
        <form onSubmit={submit} noValidate>
          <ErrorSummary errors={form.errors} title="The user was not added" />
          <Field {...form.field('email')} label="Email" type="email" autoComplete="off" required />
          <Field {...form.field('displayName')} label="Display name (optional)" autoComplete="off" />
          <Field
            {...form.field('password')}
            label="Initial password"
            type="password"
            autoComplete="new-password"
            hint="12 to 256 characters. Vigil stores only its hash."
            required
          />
          <RoleSelect id="user-role" value={role} onChange={setRole} />
          <button type="submit" className={add.isPending ? 'is-busy' : undefined} aria-disabled={add.isPending || undefined}>
            Add user
          </button>
          <p role="status">{added}</p>
        </form>
      </section>
    </>
  );
}

type Key = ApiKeyList['items'][number];

/** A key's state: revoked, expired or active. */
const keyState = (k: Key) => (k.revokedAt ? 'revoked' : k.expiresAt && Date.parse(k.expiresAt) <= Date.now() ? 'expired' : 'active');

function ApiKeySettings() {
  useTitle('API keys · Settings');
  const keys = useApiQuery<ApiKeyList>('/organization/api-keys');
  const form = useForm({ name: '', expiresAt: '' });
  const [role, setRole] = useState('viewer');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [confirming, setConfirming] = useState<Key | null>(null);
  const keysHeading = useRef<HTMLHeadingElement>(null);
  const create = useApiMutation((body: { name: string; role: string; expiresAt?: string }) => api.post<CreatedApiKey>('/organization/api-keys', body), {
    invalidates: ['/organization/api-keys'],
  });
  const revoke = useApiMutation((id: string) => api.del<null>(`/organization/api-keys/${seg(id)}`), { invalidates: ['/organization/api-keys'] });

  function submit(e: FormEvent) {
    e.preventDefault();
    const { name, expiresAt } = form.values;
    const errs: FormError[] = [];
    if (!name.trim()) errs.push({ field: 'name', message: 'Name the key after what uses it.', remediation: 'For example "SIEM export" or "CI pipeline".' });
    if (expiresAt && !(expiresAt > todayIso()))
      errs.push({ field: 'expiresAt', message: 'Enter an expiry date in the future.', remediation: 'Or leave it empty.' });
    form.setErrors(errs);
    if (errs.length || create.isPending) return;
    create.mutate(
      { name: name.trim(), role, ...(expiresAt ? { expiresAt } : {}) },
      {
        onSuccess: (k) => {
          form.reset();
          setCreated(k);
        },
        onError: (err) => form.setErrors([toFormError(err, ['name', 'expiresAt', 'role'])]),
      },
    );
  }

  // Kept between renders: a column's cell is rendered as a component, and a new one replaces the focused button.
  const columns = useMemo<Column<Key>[]>(
    () => [
      column('Name', (k) => k.name),
      column('Role', (k) => k.role),
      column('State', (k) => <StatusBadge status={keyState(k)} />),
      column('Created by', (k) => k.createdBy ?? <span className="muted">—</span>),
      timeColumn('Created', (k) => k.createdAt),
      timeColumn('Expires', (k) => k.expiresAt),
      timeColumn('Last used', (k) => k.lastUsedAt),
      column('Action', (k) =>
        k.revokedAt ? (
          <span className="muted">—</span>
        ) : (
          <button type="button" className="secondary" onClick={() => setConfirming(k)}>
            Revoke<span className="visually-hidden"> {k.name}</span>
          </button>
        ),
      ),
    ],
    [],
  );

  return (
    <>
      <section aria-labelledby="h-keys">
        <h2 id="h-keys" tabIndex={-1} ref={keysHeading}>
          API keys
        </h2>
        <p className="muted">Scripts and other tools call the API with a key (Authorization: Bearer …). A revoked key stops working at once.</p>
        <Loaded query={keys}>{(data) => <DataTable label="API keys" rows={data.items} columns={columns} empty="No API key yet." />}</Loaded>
        <ConfirmDialog
          open={confirming !== null}
          title={`Revoke ${confirming?.name ?? 'the key'}?`}
          confirm="Revoke the key"
          busy={revoke.isPending}
          afterConfirm={keysHeading}
          onConfirm={() => confirming && revoke.mutate(confirming.id, { onSuccess: () => setConfirming(null) })}
          onClose={() => {
            revoke.reset();
            setConfirming(null);
          }}
        >
          <p>Scripts and tools that call the API with it stop working at once. This cannot be undone.</p>
          <ErrorMessage error={revoke.error} />
        </ConfirmDialog>
      </section>
      <section aria-labelledby="h-new-key" className="card">
        <h2 id="h-new-key">Create an API key</h2>
        {created ? (
          <div className="notice" role="status">
            <p>
              <strong>Copy the key of {created.apiKey.name} now: it is shown this once.</strong> Vigil keeps only its SHA-256.
            </p>
            <CopyBlock label="New API key" value={created.key} />
            <button type="button" className="secondary" onClick={() => setCreated(null)}>
              I have copied it
            </button>
          </div>
        ) : null}
        <form onSubmit={submit} noValidate>
          <ErrorSummary errors={form.errors} title="The key was not created" />
          <Field {...form.field('name')} label="Name" hint="What uses the key." autoComplete="off" required />
          <RoleSelect id="key-role" value={role} onChange={setRole} />
          <Field {...form.field('expiresAt')} label="Expires (optional)" type="date" min={todayIso()} hint="None: until revoked." />
          <button type="submit" className={create.isPending ? 'is-busy' : undefined} aria-disabled={create.isPending || undefined}>
            Create key
          </button>
        </form>
      </section>
    </>
  );
}

type TestOutcome = SinkTest['items'][number];

const SINKS: Column<SinkList['items'][number]>[] = [column('Sink', (o) => o.sink), column('Target', (o) => <code>{o.target}</code>)];

const OUTCOMES: Column<TestOutcome>[] = [
  column('Sink', (o) => o.sink),
  column('Target', (o) => <code>{o.target}</code>),
  column('Result', (o) => (
    <>
      <StatusBadge status={o.ok ? 'delivered' : 'failed'} />
      {o.error ? <div className="small">{o.error}</div> : null}
    </>
  )),
];

function SinkSettings() {
  useTitle('SIEM sinks · Settings');
  const sinks = useApiQuery<SinkList>('/organization/sinks');
  const test = useApiMutation(() => api.post<SinkTest>('/organization/sinks/test'));
  return (
    <section aria-labelledby="h-sinks">
      <h2 id="h-sinks">SIEM sinks</h2>
      <p className="muted">
        Findings and alerts are sent as OCSF Detection Findings to the sinks of this deployment (configured for the whole deployment, see docs/configuration.md,
        &quot;SIEM sinks&quot;).
      </p>
      <Loaded query={sinks}>
        {(data) =>
          data.items.length ? (
            <>
              <DataTable label="Configured sinks" rows={data.items} columns={SINKS} rowId={(s) => s.sink} />
              <div className="actions">
                <button
                  type="button"
                  onClick={() => test.mutate(undefined)}
                  className={test.isPending ? 'is-busy' : undefined}
                  aria-disabled={test.isPending || undefined}
                >
                  Send a test event
                </button>
              </div>
              <ErrorMessage error={test.error} />
              <div role="status">
                {test.isPending ? 'Sending…' : null}
                {test.data ? (
                  <>
                    <p>
                      {test.data.items.every((o) => o.ok)
                        ? 'Every sink accepted the test event.'
                        : `${test.data.items.filter((o) => !o.ok).length} of ${test.data.items.length} sinks failed.`}
                    </p>
                    <DataTable label="Test results" rows={test.data.items} columns={OUTCOMES} rowId={(o) => o.sink} />
                  </>
                ) : null}
              </div>
            </>
          ) : (
            <p>No sink is configured. Set VIGIL_WEBHOOK_URL and VIGIL_WEBHOOK_SECRET, or VIGIL_SYSLOG_TARGET, where Vigil runs, then restart it.</p>
          )
        }
      </Loaded>
    </section>
  );
}
