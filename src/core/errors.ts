/**
 * The error catalogue of Vigil. Every error a person can meet carries a stable `code`, a message that says what
 * happened, and a `remediation` that says what to do (which field, which permission, which portal page).
 *
 * `core/` imports nothing: these types are shared by every layer.
 */

/** Broad families of failure; the CLI maps them to exit codes and the API (later) to HTTP statuses. */
export type ErrorKind =
  /** Bad input from the person or script calling Vigil (a field, a flag, a file). */
  | 'invalid-input'
  /** A named object (integration, run) does not exist. */
  | 'not-found'
  /** An upstream rejected our credentials or the tenant/app identity (AADSTS errors). */
  | 'authentication'
  /** An upstream answered 403: a permission, role or registration is missing. */
  | 'authorization'
  /** An upstream failed after every retry (5xx, throttling, network). */
  | 'upstream'
  /** A conflict with Vigil's own state (a collection already running). */
  | 'conflict'
  /** Configuration of Vigil itself is wrong (master key, endpoints file). */
  | 'configuration'
  /** A bug. */
  | 'internal';

/** Options of {@link VigilError}. */
export interface VigilErrorOptions {
  /** The input field or flag at fault, e.g. `--tenant-id`. */
  field?: string;
  /** What the person should do next. */
  remediation?: string;
  /** Extra structured detail safe to show and log (never a secret). */
  detail?: Record<string, unknown>;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * The one error type Vigil throws on purpose.
 *
 * `code` is stable (e.g. `AADSTS7000215`, `INVALID_GUID`, `BAP_NOT_MANAGEMENT_APP`) and safe to match in scripts;
 * `message` and `remediation` are for people. Neither ever contains a secret.
 */
export class VigilError extends Error {
  readonly kind: ErrorKind;
  readonly code: string;
  readonly field: string | undefined;
  readonly remediation: string | undefined;
  readonly detail: Record<string, unknown> | undefined;

  constructor(kind: ErrorKind, code: string, message: string, options: VigilErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VigilError';
    this.kind = kind;
    this.code = code;
    this.field = options.field;
    this.remediation = options.remediation;
    this.detail = options.detail;
  }

  /** A plain object for `--json` output and logs: code, kind, message, field, remediation, detail. */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      kind: this.kind,
      message: this.message,
      ...(this.field ? { field: this.field } : {}),
      ...(this.remediation ? { remediation: this.remediation } : {}),
      ...(this.detail ? { detail: this.detail } : {}),
    };
  }
}

/** Shorthand for an input error naming the field and the fix. */
export function invalidInput(field: string, message: string, remediation: string): VigilError {
  return new VigilError('invalid-input', 'INVALID_INPUT', message, { field, remediation });
}

/** True when `e` is a {@link VigilError} of one of the given kinds (any kind when none given). */
export function isVigilError(e: unknown, ...kinds: ErrorKind[]): e is VigilError {
  return e instanceof VigilError && (kinds.length === 0 || kinds.includes(e.kind));
}
