// Each validator function from its own module (validator.js documents `validator/lib/<name>` imports): the package's
// index loads all of its 110-odd modules, a tenth of the modules a collection loaded.
import isCreditCardModule from 'validator/lib/isCreditCard.js';
import isEmailModule from 'validator/lib/isEmail.js';
import isIBANModule from 'validator/lib/isIBAN.js';
import isJWTModule from 'validator/lib/isJWT.js';

/**
 * The function a validator module exports. They are CommonJS modules built from ES modules (`exports.default`): some
 * also make it `module.exports`, which a default import then is (Node), and a transforming loader (vitest) may hand
 * out `exports.default` itself.
 */
function validatorFunction<F extends (...args: never[]) => boolean>(m: F | { default: F }): F {
  return typeof m === 'function' ? m : m.default;
}
const isCreditCard = validatorFunction(isCreditCardModule);
const isEmail = validatorFunction(isEmailModule);
const isIBAN = validatorFunction(isIBANModule);
const isJWT = validatorFunction(isJWTModule);

/**
 * The detectors of the content inspection: one pattern per secret or personal-data type, and a validator where the
 * type has a checksum or documented invalid ranges.
 *
 * What comes from a library and why the rest is ours:
 * - `validator` (validator.js, ~80 M downloads a month, maintained since 2010) validates the candidates that have a
 *   published check: payment cards (`isCreditCard`: issuer prefixes and lengths, then the Luhn mod-10 check), IBANs
 *   (`isIBAN`: the country's length and BBAN format, then the ISO 13616 mod-97 check), JWTs (`isJWT`) and e-mail
 *   addresses (`isEmail`, RFC 5321/5322 limits).
 * - The secret patterns are ours. The JavaScript secret scanner that fits (secretlint, with
 *   `@secretlint/secretlint-rule-preset-recommend`) lints files through an async pipeline with its own config loading,
 *   and has no rule for Azure storage account keys, SAS signatures, Stripe keys or JWTs; wrapping it per Copilot
 *   message would cost far more than a scan. The patterns follow the token formats the issuers publish (AWS IAM
 *   "unique identifiers" prefixes, GitHub "About authentication" token prefixes, Slack token types, Stripe API keys,
 *   Azure Storage "Configure a connection string" and "Create a service SAS" `sig`), as gitleaks' default rules do.
 * - US SSN and UK NINO have no check digit and no maintained JS validator; the invalid-range rules are short and
 *   written here from their sources (SSA "Social Security Number Randomization": area 000, 666 and 900–999, group 00
 *   and serial 0000 are never issued; HMRC National Insurance Manual NIM39110: the prefix letters D, F, I, Q, U, V
 *   are never used, O never second, and BG, GB, KN, NK, NT, TN, ZZ are not allocated).
 *
 * Every pattern is linear: bounded quantifiers, no nested unbounded repetition (no catastrophic backtracking).
 */

export type { MatchKind, MatchType } from '../core/types.ts';
import type { MatchKind, MatchType } from '../core/types.ts';

/** One detector: a global regex (`d` flag: group indices), the capture group that holds the value, and its check. */
export interface Detector {
  kind: MatchKind;
  type: MatchType;
  pattern: RegExp;
  /** Capture group whose text is the finding (0 = the whole match). */
  group: number;
  /** Rejects candidates that match the shape but are not the real thing (checksum, invalid range, placeholder). */
  validate?: (value: string) => boolean;
}

const digitsOf = (v: string): string => v.replace(/[^0-9]/g, '');

/** SSA: area 000, 666 and 900–999, group 00 and serial 0000 are never issued; 078-05-1120 is the advertising sample. */
function isValidSsn(value: string): boolean {
  const m = /^(\d{3})-(\d{2})-(\d{4})$/.exec(value);
  if (!m) return false;
  const [area, group, serial] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (area === 0 || area === 666 || area >= 900 || group === 0 || serial === 0) return false;
  return value !== '078-05-1120';
}

const NINO_UNALLOCATED_PREFIXES = new Set(['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ']);

/** HMRC NIM39110 prefix rules on a NINO with or without spaces (`AB 12 34 56 C`). */
function isValidNino(value: string): boolean {
  const v = value.replace(/ /g, '').toUpperCase();
  if (!/^[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\d{6}[A-D]$/.test(v)) return false;
  return !NINO_UNALLOCATED_PREFIXES.has(v.slice(0, 2));
}

/** Placeholders that follow `password=` in documentation and templates: not a secret. */
function isRealPassword(value: string): boolean {
  if (/^(?:\*+|x+|\.+|<[^>]*>?|\{[^}]*\}?|\$\{?[A-Za-z_]+\}?|%[A-Za-z_]+%?|null|none|empty|password|changeme)$/i.test(value)) return false;
  return true;
}

/** The detectors, secrets first (on overlap at the same start, the longer match wins, then the earlier detector). */
export const DETECTORS: readonly Detector[] = [
  {
    kind: 'secret',
    type: 'private_key',
    group: 0,
    pattern: /-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----[^-]{0,16384}(?:-----END (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----)?/dg,
  },
  {
    kind: 'secret',
    type: 'azure_storage_connection_string',
    group: 0,
    pattern: /DefaultEndpointsProtocol=https?;AccountName=[a-z0-9]{3,24};AccountKey=[A-Za-z0-9+/]{86}==(?:;EndpointSuffix=[A-Za-z0-9.]{1,64})?/dg,
  },
  { kind: 'secret', type: 'azure_storage_account_key', group: 0, pattern: /(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{86}==(?![A-Za-z0-9+/=])/dg },
  { kind: 'secret', type: 'azure_sas_token', group: 0, pattern: /\bsig=[A-Za-z0-9%+/]{40,120}(?:%3[Dd]|=){0,2}/dg },
  { kind: 'secret', type: 'aws_access_key', group: 0, pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[A-Z0-9]{16}\b/dg },
  {
    kind: 'secret',
    type: 'aws_secret_key',
    group: 1,
    pattern: /\baws_?secret_?(?:access_?)?key["']?\s{0,4}[:=]\s{0,4}["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/dgi,
  },
  { kind: 'secret', type: 'github_token', group: 0, pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{82})\b/dg },
  { kind: 'secret', type: 'slack_token', group: 0, pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,250}/dg },
  { kind: 'secret', type: 'stripe_key', group: 0, pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,247}\b/dg },
  { kind: 'secret', type: 'openai_key', group: 0, pattern: /\bsk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,250}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b)/dg },
  {
    kind: 'secret',
    type: 'jwt',
    group: 0,
    pattern: /\beyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{16,1024}/dg,
    validate: (v) => isJWT(v),
  },
  {
    kind: 'secret',
    type: 'password',
    group: 1,
    pattern: /\b(?:password|passwd|pwd)["']?\s{0,4}[=:]\s{0,4}["']?([^\s;"'&,<>]{4,128})/dgi,
    validate: isRealPassword,
  },
  {
    kind: 'personal',
    type: 'iban',
    group: 0,
    pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/dg,
    validate: (v) => isIBAN(v.replace(/ /g, '')),
  },
  {
    kind: 'personal',
    type: 'card_number',
    group: 0,
    pattern: /\b\d(?:[ -]?\d){12,18}\b/dg,
    validate: (v) => {
      const d = digitsOf(v);
      return d.length >= 13 && d.length <= 19 && isCreditCard(d);
    },
  },
  { kind: 'personal', type: 'us_ssn', group: 0, pattern: /\b\d{3}-\d{2}-\d{4}\b/dg, validate: isValidSsn },
  { kind: 'personal', type: 'uk_nino', group: 0, pattern: /\b[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/dg, validate: isValidNino },
  {
    kind: 'personal',
    type: 'email',
    group: 0,
    // Starts only where a run of local-part characters starts: unanchored, the pattern re-scanned up to 64 characters
    // from every position of a long run without '@' (≈ 250 ms on 512 KiB, measured by the protection detectors' test).
    pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}/dg,
    validate: (v) => isEmail(v),
  },
];
