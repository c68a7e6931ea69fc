/** Shared vocabulary of Vigil's use cases. Imports nothing. */

/** Severity of a check or finding, most severe first. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * The outcome of one check for one resource: `pass`, `fail`, or `not_evaluated` when Vigil could not see enough to
 * decide (a missing permission, an environment it could not read, an errored collection) — never a silent pass.
 */
export type CheckStatus = 'pass' | 'fail' | 'not_evaluated';

/** Status of one (stream, slice) in a collection run; `error` is recorded apart from an empty slice. */
export type SliceStatus = 'pending' | 'in_progress' | 'done' | 'error';

/** Status of a collection run. `partial` = finished with some slices in error. */
export type RunStatus = 'running' | 'succeeded' | 'partial' | 'failed';

/* Content inspection (src/inspection): the kinds and types of what a detector finds, stored with Copilot interactions. */

/** `secret`: a credential; `personal`: data about a person. */
export type MatchKind = 'secret' | 'personal';

/** The types of finding, by detector. */
export type MatchType =
  | 'aws_access_key'
  | 'aws_secret_key'
  | 'azure_storage_connection_string'
  | 'azure_storage_account_key'
  | 'azure_sas_token'
  | 'github_token'
  | 'slack_token'
  | 'stripe_key'
  | 'openai_key'
  | 'jwt'
  | 'private_key'
  | 'password'
  | 'card_number'
  | 'us_ssn'
  | 'uk_nino'
  | 'iban'
  | 'email';
