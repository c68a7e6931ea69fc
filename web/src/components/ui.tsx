import { Fragment, useEffect, useRef, type ChangeEvent, type InputHTMLAttributes, type ReactNode, type RefObject } from 'react';
import type { Severity } from '../types.ts';

/** A form error: the field it belongs to (its input id), the message and how to fix it. */
export interface FormError {
  field?: string;
  message: string;
  remediation?: string;
}

/** The list of problems at the top of a form, each linking to its field; announced at once (role="alert"). */
export function ErrorSummary({ errors, title = 'There is a problem', focus = true }: { errors: FormError[]; title?: string; focus?: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (focus && errors.length) ref.current?.focus();
  }, [errors, focus]);
  if (!errors.length) return null;
  return (
    <div className="error-summary" role="alert" tabIndex={-1} ref={ref}>
      <h2 className="error-summary-title">{title}</h2>
      <ul>
        {errors.map((e, i) => (
          <li key={`${e.field ?? ''}-${i}`}>
            {e.field ? <a href={`#${e.field}`}>{e.message}</a> : <span>{e.message}</span>}
            {e.remediation ? <span className="remediation"> {e.remediation}</span> : null}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Shows an API error (message and remediation) where no form field owns it. */
export function ErrorMessage({ error }: { error: { message: string; remediation?: string | undefined } | null | undefined }) {
  if (!error) return null;
  return (
    <div className="error-box" role="alert">
      <p>
        <strong>{error.message}</strong>
      </p>
      {error.remediation ? <p>{error.remediation}</p> : null}
    </div>
  );
}

type FieldProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'onChange'> & {
  id: string;
  label: string;
  hint?: ReactNode;
  error?: FormError | null | undefined;
  onChange?: (e: ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => void;
  /** A multi-line text area of this many rows instead of an input. */
  rows?: number;
};

/** A labelled input (or text area) with its hint and error, both linked through aria-describedby. */
export function Field({ id, label, hint, error, className, rows, ...rest }: FieldProps) {
  const hintId = hint ? `${id}-hint` : undefined;
  const errId = error ? `${id}-error` : undefined;
  const control = { id, name: id, 'aria-invalid': error ? true : undefined, 'aria-describedby': [errId, hintId].filter(Boolean).join(' ') || undefined };
  return (
    <div className={`field${error ? ' field-invalid' : ''}${className ? ` ${className}` : ''}`}>
      <label htmlFor={id}>{label}</label>
      {hint ? (
        <div className="hint" id={hintId}>
          {hint}
        </div>
      ) : null}
      {error ? (
        <div className="field-error" id={errId}>
          <span className="visually-hidden">Error: </span>
          {error.message}
          {error.remediation ? <span className="remediation"> {error.remediation}</span> : null}
        </div>
      ) : null}
      {rows ? <textarea {...control} rows={rows} value={rest.value} onChange={rest.onChange} required={rest.required} /> : <input {...control} {...rest} />}
    </div>
  );
}

/** What a fetch is showing: its error, "Loading…" while there is nothing yet, then `children(data)`. */
export function Loaded<T>({
  query,
  children,
}: {
  query: { data: T | undefined; error: { message: string; remediation?: string | undefined } | null; isPending: boolean };
  children: (data: T) => ReactNode;
}) {
  return (
    <>
      <ErrorMessage error={query.error} />
      {query.isPending ? <Loading /> : null}
      {query.data !== undefined ? children(query.data) : null}
    </>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="loading" role="status">
      {label}
    </p>
  );
}

/**
 * An identifier such as a rule or detector id (`copilot_guest_sensitive_access`) in code type, breaking only after
 * its underscores: a narrow table column wraps it at word boundaries, never letter by letter.
 */
export function Ident({ id }: { id: string }) {
  const parts = id.split('_');
  return (
    <code className="ident">
      {parts.map((p, i) => (
        <Fragment key={i}>
          {p}
          {i < parts.length - 1 ? (
            <>
              _<wbr />
            </>
          ) : null}
        </Fragment>
      ))}
    </code>
  );
}

/** A horizontally scrollable container for a wide table, reachable with the keyboard. */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

export function SeverityBadge({ severity }: { severity: Severity | string | null | undefined }) {
  if (!severity) return <span className="muted">—</span>;
  return <span className={`badge sev-${severity}`}>{severity}</span>;
}

const STATUS_CLASS: Record<string, string> = {
  succeeded: 'ok',
  done: 'ok',
  granted: 'ok',
  resolved: 'ok',
  closed: 'ok',
  valid: 'ok',
  ok: 'ok',
  verified: 'ok',
  running: 'info',
  queued: 'info',
  acknowledged: 'info',
  suppressed: 'muted',
  partial: 'warn',
  incomplete: 'warn',
  new: 'warn',
  open: 'warn',
  failed: 'bad',
  missing: 'bad',
  error: 'bad',
  invalid: 'bad',
  expired: 'bad',
  rejected: 'bad',
  interrupted: 'warn',
  'already-granted': 'ok',
  'no-dataverse': 'muted',
  delivered: 'ok',
  active: 'ok',
  locked: 'bad',
  disabled: 'muted',
  revoked: 'muted',
};

export function StatusBadge({ status }: { status: string | null | undefined }) {
  if (!status) return <span className="muted">—</span>;
  return <span className={`badge st-${STATUS_CLASS[status] ?? 'neutral'}`}>{status}</span>;
}

/** A yes/no/unknown answer as a badge: `yes` when true, `no` when false, a neutral "unknown" otherwise. */
export function BoolBadge({ value, yes, no }: { value: boolean | string | null | undefined; yes: string; no: string }) {
  if (value === true) return <StatusBadge status={yes} />;
  if (value === false) return <StatusBadge status={no} />;
  return <span className="badge st-neutral">unknown</span>;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:MM UTC`: the same for every viewer, as in the CLI. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

export function Time({ value }: { value: string | null | undefined }) {
  if (!value) return <span className="muted">—</span>;
  return <time dateTime={value}>{formatTime(value)}</time>;
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

/** Renders any JSON value compactly: scalars inline, objects in a collapsible block. */
export function JsonValue({ value, summary = 'Show JSON' }: { value: unknown; summary?: string }) {
  if (value === null || value === undefined) return <span className="muted">—</span>;
  if (typeof value !== 'object') return <>{String(value)}</>;
  return (
    <details className="json">
      <summary>{summary}</summary>
      <pre>
        <code>{JSON.stringify(value, null, 2)}</code>
      </pre>
    </details>
  );
}

/** A definition list of key/value pairs (values rendered with JsonValue). */
export function KeyValues({ entries }: { entries: [string, ReactNode][] }) {
  return (
    <dl className="kv">
      {entries.map(([k, v]) => (
        <div key={k} className="kv-row">
          <dt>{k}</dt>
          <dd>{v ?? <span className="muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Previous/Next paging over an opaque cursor. */
export function Pager({
  hasPrevious,
  nextCursor,
  onPrevious,
  onNext,
  label = 'Pages',
}: {
  hasPrevious: boolean;
  nextCursor: string | null | undefined;
  onPrevious: () => void;
  onNext: () => void;
  label?: string;
}) {
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" onClick={onPrevious} disabled={!hasPrevious}>
        Previous
      </button>
      <button type="button" onClick={onNext} disabled={!nextCursor}>
        Next
      </button>
    </nav>
  );
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isGuid = (s: string) => GUID.test(s.trim());
const DOMAIN = /^(?=.{3,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;
export const isDomain = (s: string) => DOMAIN.test(s.trim());

/** Today as YYYY-MM-DD (UTC), for date inputs' min attribute. */
export function todayIso(): string {
  return new Date().toISOString().slice(0, 10);
}

/** The end of a UTC day given as YYYY-MM-DD (a suppression "until" a date lasts through that whole day). */
export function endOfDay(date: string): string {
  return `${date}T23:59:59.000Z`;
}

/**
 * A modal confirmation: the native `<dialog>` opened with `showModal()` while `open` (HTML Living Standard, "The
 * dialog element": the rest of the page is inert, focus moves into the dialog, Escape cancels). Focus starts on
 * Cancel; when it closes, focus goes back to the element that had it (the trigger), or after the action was confirmed
 * to `afterConfirm` when given (the trigger is gone once the action is done: a revoked key has no Revoke button).
 * `onClose` is called on Cancel and on Escape; the caller closes it after `onConfirm` by setting `open` false.
 */
export function ConfirmDialog({
  open,
  title,
  confirm,
  onConfirm,
  onClose,
  busy,
  afterConfirm,
  children,
}: {
  open: boolean;
  title: string;
  /** The confirming button's text. */
  confirm: string;
  onConfirm: () => void;
  onClose: () => void;
  busy?: boolean;
  afterConfirm?: RefObject<HTMLElement | null>;
  children?: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const trigger = useRef<Element | null>(null);
  const confirmed = useRef(false);
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      trigger.current = document.activeElement;
      confirmed.current = false;
      d.showModal();
      // The safe choice first (showModal would focus the first button, the action).
      cancel.current?.focus();
    } else if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className="confirm-dialog"
      aria-labelledby="confirm-dialog-title"
      // Escape closes through the state, as Cancel does: closed by the browser alone, the dialog would be shut while
      // `open` still said open, and a quick reopening (the same state again) would render nothing new.
      onCancel={(e) => {
        e.preventDefault();
        confirmed.current = false;
        onClose();
      }}
      onClose={() => {
        // The close event comes a task after close(): if the dialog was opened again meanwhile (a quick Enter on the
        // trigger the browser had given focus back to), this one is stale and must not close the new one.
        if (ref.current?.open) return;
        const t = confirmed.current && afterConfirm?.current ? afterConfirm.current : trigger.current;
        trigger.current = null;
        if (t instanceof HTMLElement && t.isConnected) t.focus();
        if (open) onClose();
      }}
    >
      <h2 id="confirm-dialog-title">{title}</h2>
      {children}
      <div className="actions">
        <button
          type="button"
          className={busy ? 'is-busy' : undefined}
          aria-disabled={busy || undefined}
          onClick={() => {
            if (busy) return;
            confirmed.current = true;
            onConfirm();
          }}
        >
          {confirm}
        </button>
        <button
          type="button"
          className="secondary"
          ref={cancel}
          onClick={() => {
            confirmed.current = false;
            onClose();
          }}
        >
          Cancel
        </button>
      </div>
    </dialog>
  );
}
