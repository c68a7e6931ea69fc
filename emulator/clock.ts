/**
 * The emulated clock of the audit feed (Management Activity API and Power BI activity events).
 *
 * It drives ONLY what the feed considers "now": which content blobs exist, which have expired, the 7-day and 24-hour
 * window checks, and which Power BI events have happened. Tokens, AADSTS timestamps and the request log keep using
 * real time.
 *
 * Default: real time. `set(iso)` freezes the clock at an instant (tests step it with `advance`); `set(null)` goes back
 * to real time. `advance(seconds)` moves a frozen clock, or shifts a real-time clock by an offset that keeps flowing.
 */

/** The state of an `EmulatedClock`, as `EmulatorControl.clock()` reports it. */
export interface ClockState {
  /** The emulated instant, ISO 8601 UTC with milliseconds. */
  now: string;
  /** True when the clock is frozen (`setClock`), false when it follows real time (possibly with an offset). */
  frozen: boolean;
  /** Milliseconds added to real time when not frozen (0 by default). */
  offsetMs: number;
}

/** A settable clock: real time by default, frozen or shifted for tests. */
export class EmulatedClock {
  #frozenAt: number | null = null;
  #offset = 0;

  /** The emulated instant, epoch milliseconds. */
  now(): number {
    return this.#frozenAt ?? Date.now() + this.#offset;
  }

  /** The emulated instant as a Date. */
  date(): Date {
    return new Date(this.now());
  }

  /**
   * Freezes the clock at `iso` (any string `Date.parse` accepts; a string without a zone is read as UTC), or returns
   * to real time with `null` (the offset is cleared too). Throws RangeError for an unparsable instant.
   */
  set(iso: string | null): void {
    if (iso === null) {
      this.#frozenAt = null;
      this.#offset = 0;
      return;
    }
    const ms = parseUtc(iso);
    if (ms === null) throw new RangeError(`not an ISO instant: ${String(iso)}`);
    this.#frozenAt = ms;
  }

  /**
   * Moves the clock by `seconds` (may be negative or fractional): a frozen clock jumps, a real-time clock gains an
   * offset. Returns the new instant (epoch ms). Throws RangeError for a non-finite number.
   */
  advance(seconds: number): number {
    if (typeof seconds !== 'number' || !Number.isFinite(seconds)) throw new RangeError(`seconds must be a finite number, got ${String(seconds)}`);
    const ms = Math.round(seconds * 1000);
    if (this.#frozenAt !== null) this.#frozenAt += ms;
    else this.#offset += ms;
    return this.now();
  }

  /** The current state (see `ClockState`). */
  state(): ClockState {
    return { now: new Date(this.now()).toISOString(), frozen: this.#frozenAt !== null, offsetMs: this.#frozenAt !== null ? 0 : this.#offset };
  }
}

/**
 * Parses an ISO 8601 instant; a date-time without a zone designator is UTC (as the Microsoft APIs read it).
 * Returns epoch milliseconds, or null when unparsable.
 */
export function parseUtc(text: string): number | null {
  if (typeof text !== 'string' || text.trim() === '') return null;
  const t = text.trim();
  const zoned = /(Z|[+-]\d{2}:?\d{2})$/i.test(t) || !/T|\s\d/.test(t) ? t : `${t}Z`;
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(zoned) ? `${zoned}T00:00:00Z` : zoned);
  return Number.isNaN(ms) ? null : ms;
}
