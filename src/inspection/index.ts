import { DETECTORS, type MatchKind, type MatchType } from './detectors.ts';

/**
 * Content inspection: finds secrets (cloud keys and tokens, private keys, passwords in connection strings) and personal
 * data (payment cards, US SSN, UK NINO, IBAN, e-mail addresses in bulk) in free text such as Copilot prompts and
 * responses, and returns the text with every finding masked. Findings never carry the value: an excerpt shows its
 * first characters and its length, inside ±20 characters of already-masked context.
 *
 * Cost: each detector is one linear regex pass (bounded quantifiers), so a scan is O(detectors × text length).
 */

export type { MatchType } from './detectors.ts';

/** One finding. */
interface InspectionMatch {
  kind: MatchKind;
  type: MatchType;
  /**
   * Redacted excerpt: up to 20 characters of context on each side (other findings masked), and the finding itself as
   * its first characters (at most 4, and at most a third of it), `…` and its length in characters: `AKIA…(20)`.
   */
  excerpt: string;
  /** Offset of the finding in the inspected text (UTF-16 code units). */
  offset: number;
  /** Length of the finding (UTF-16 code units). */
  length: number;
}

/** Outcome of {@link inspectText}. */
export interface InspectionResult {
  /** Findings in text order, never overlapping. */
  matches: InspectionMatch[];
  /** The text with every finding replaced by `[REDACTED:{type}]`. */
  redacted: string;
}

/** Options of {@link inspectText}. */
export interface InspectOptions {
  /** E-mail addresses count as personal data only when one text holds at least this many. @default 5 */
  bulkEmailThreshold?: number;
  /** Characters of context on each side of an excerpt. @default 20 */
  context?: number;
}

/** The mask that replaces a finding in redacted text. */
export const maskOf = (type: MatchType): string => `[REDACTED:${type}]`;

interface Candidate {
  kind: MatchKind;
  type: MatchType;
  start: number;
  end: number;
  order: number;
}

function preview(value: string): string {
  const shown = Math.min(4, Math.floor(value.length / 3));
  return `${value.slice(0, shown)}…(${value.length})`;
}

const oneLine = (s: string): string => s.replace(/\s/g, ' ');

/**
 * Scans `text` for secrets and personal data.
 *
 * @returns the findings (no value in clear) and the text with each finding masked. Empty text gives no findings.
 * @throws RangeError when `bulkEmailThreshold` is not a positive integer.
 */
export function inspectText(text: string, options: InspectOptions = {}): InspectionResult {
  const threshold = options.bulkEmailThreshold ?? 5;
  if (!Number.isInteger(threshold) || threshold < 1) throw new RangeError(`bulkEmailThreshold must be a positive integer, got ${String(threshold)}`);
  const context = options.context ?? 20;
  if (!text) return { matches: [], redacted: text };

  const candidates: Candidate[] = [];
  const emails: Candidate[] = [];
  DETECTORS.forEach((d, order) => {
    d.pattern.lastIndex = 0;
    for (const m of text.matchAll(d.pattern)) {
      const span = m.indices?.[d.group];
      if (!span) continue;
      const value = text.slice(span[0], span[1]);
      if (d.validate && !d.validate(value)) continue;
      const c = { kind: d.kind, type: d.type, start: span[0], end: span[1], order };
      (d.type === 'email' ? emails : candidates).push(c);
    }
  });
  if (emails.length >= threshold) candidates.push(...emails);

  // Earliest start first; at the same start the longer finding, then the earlier detector (secrets come first).
  candidates.sort((a, b) => a.start - b.start || b.end - b.start - (a.end - a.start) || a.order - b.order);
  const kept: Candidate[] = [];
  let reach = 0;
  for (const c of candidates) {
    if (c.start < reach) continue;
    kept.push(c);
    reach = c.end;
  }

  // Redacted text, and where each finding's mask sits in it.
  let redacted = '';
  let at = 0;
  const spans: [number, number][] = [];
  for (const c of kept) {
    redacted += text.slice(at, c.start);
    const mask = maskOf(c.type);
    spans.push([redacted.length, redacted.length + mask.length]);
    redacted += mask;
    at = c.end;
  }
  redacted += text.slice(at);

  const matches = kept.map((c, i): InspectionMatch => {
    const [rs, re] = spans[i]!;
    const before = redacted.slice(Math.max(0, rs - context), rs);
    const after = redacted.slice(re, re + context);
    return {
      kind: c.kind,
      type: c.type,
      offset: c.start,
      length: c.end - c.start,
      excerpt: oneLine(`${before}${preview(text.slice(c.start, c.end))}${after}`),
    };
  });
  return { matches, redacted };
}

/** Per-object summary of an inspection, as stored in estate attrs (`attrs.inspection`). */
export interface InspectionSummary {
  /** Number of secret findings. */
  secrets: number;
  /** Number of personal-data findings. */
  personal: number;
  /** Distinct finding types, sorted. */
  types: MatchType[];
  /** Up to 5 redacted excerpts, in text order. */
  excerpts: string[];
}

/** Summarises the findings of one or more inspections of the same object (body and attachments). */
export function summarize(results: readonly InspectionResult[]): InspectionSummary {
  const all = results.flatMap((r) => r.matches);
  return {
    secrets: all.filter((m) => m.kind === 'secret').length,
    personal: all.filter((m) => m.kind === 'personal').length,
    types: [...new Set(all.map((m) => m.type))].sort(),
    excerpts: all.slice(0, 5).map((m) => m.excerpt),
  };
}
