import {
  defaultRemediation,
  kindOf,
  type AadstsCode,
  type CataloguedCode,
  type ErrorCode,
  type ErrorKind,
  type UpstreamCode,
  type UpstreamKind,
} from './error-catalogue.ts';
import { describeAction, type ActionNamer } from './actions.ts';

/**
 * The one error type of Vigil. Every error a person can meet carries a stable `code` from the catalogue
 * (`core/error-catalogue.ts`), a message that says what happened, and a `remediation` that says what to do (which
 * field, which permission, which portal page).
 *
 * Fields are named in domain terms (`tenantId`, `clientSecret`, the API's JSON names): a text that names a field is
 * written as a function of a {@link FieldNamer}, so the CLI shows its flag (`--tenant-id`) where the API shows the
 * JSON field, and nothing below `cli/` knows a flag name. A step to take is named the same way, as an `Action`
 * (`core/actions.ts`) given to the text's {@link ActionNamer}: the CLI shows its `vigil` command line, the API and
 * the portal its domain words and API route.
 *
 * `core/` imports nothing: these types are shared by every layer.
 */

export type { ErrorCode, ErrorKind } from './error-catalogue.ts';

/** How an entry point names a domain field (the CLI: its flag; the API: its JSON field). */
export type FieldNamer = (field: string) => string;

/**
 * A message or remediation: plain text, or text naming fields through the caller's {@link FieldNamer} and steps
 * through its {@link ActionNamer}. Plain text never holds a CLI flag or command line.
 */
export type ErrorText = string | ((name: FieldNamer, act: ActionNamer) => string);

/** Domain names as they are (the API's JSON field names). */
const asIs: FieldNamer = (field) => field;

/** Options of {@link VigilError}. */
interface VigilErrorOptions {
  /** The input field at fault in domain terms (`tenantId`), or an environment variable, header or upstream field. */
  field?: string;
  /** What the person should do next; the catalogue's fixed text when not given. */
  remediation?: ErrorText;
  /** Extra structured detail safe to show and log (never a secret). */
  detail?: Record<string, unknown>;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * The constructor's arguments: a catalogued or AADSTS code, whose kind the catalogue gives (no kind may be passed);
 * or an upstream's own code, whose kind the thrower gives from the HTTP status (the one explicit kind).
 */
type VigilErrorArgs =
  | [code: CataloguedCode | AadstsCode, message: ErrorText, options?: VigilErrorOptions & { kind?: never }]
  | [code: UpstreamCode, message: ErrorText, options: VigilErrorOptions & { kind: UpstreamKind }];

/** An error as an entry point shows it: texts with fields named the entry point's way. */
export interface RenderedError {
  code: string;
  kind: ErrorKind;
  message: string;
  field?: string;
  remediation?: string;
  detail?: Record<string, unknown>;
}

/**
 * The one error type Vigil throws on purpose.
 *
 * `code` is stable (e.g. `AADSTS7000215`, `INVALID_TENANT_ID`, `CONSENT_MISSING`) and safe to match in scripts;
 * `message` and `remediation` are for people (with fields in domain terms; see {@link VigilError.render}). Neither
 * ever contains a secret. `kind` comes from the catalogue (`kindOf`), so a code has one kind wherever it is thrown;
 * an unknown code, or a kind passed with a catalogued code, does not compile.
 */
export class VigilError extends Error {
  readonly kind: ErrorKind;
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly remediation: string | undefined;
  readonly detail: Record<string, unknown> | undefined;
  readonly #message: ErrorText;
  readonly #remediation: ErrorText | undefined;

  constructor(...[code, message, options = {}]: VigilErrorArgs) {
    super(text(message, asIs, describeAction), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VigilError';
    this.kind = options.kind ?? kindOf(code as CataloguedCode | AadstsCode);
    this.code = code;
    this.field = options.field;
    this.#message = message;
    this.#remediation = options.remediation ?? defaultRemediation(code);
    this.remediation = this.#remediation === undefined ? undefined : text(this.#remediation, asIs, describeAction);
    this.detail = options.detail;
  }

  /**
   * Code, kind, message, field, remediation and detail, with fields named by `name` and steps by `act` (by default
   * domain names and the domain wording of `core/actions.ts`, which the API shows).
   */
  render(name: FieldNamer = asIs, act: ActionNamer = describeAction): RenderedError {
    const remediation = this.#remediation === undefined ? undefined : text(this.#remediation, name, act);
    return {
      code: this.code,
      kind: this.kind,
      message: text(this.#message, name, act),
      ...(this.field ? { field: name(this.field) } : {}),
      ...(remediation ? { remediation } : {}),
      ...(this.detail ? { detail: this.detail } : {}),
    };
  }

  /** A plain object for logs: {@link VigilError.render} with domain names and wording. */
  toJSON(): RenderedError {
    return this.render();
  }
}

function text(t: ErrorText, name: FieldNamer, act: ActionNamer): string {
  return typeof t === 'string' ? t : t(name, act);
}

/** Shorthand for an `INVALID_INPUT` error naming the field (domain terms) and the fix. */
export function invalidInput(field: string, message: ErrorText, remediation: ErrorText): VigilError {
  return new VigilError('INVALID_INPUT', message, { field, remediation });
}

/** True when `e` is a {@link VigilError} of one of the given kinds (any kind when none given). */
export function isVigilError(e: unknown, ...kinds: ErrorKind[]): e is VigilError {
  return e instanceof VigilError && (kinds.length === 0 || kinds.includes(e.kind));
}
