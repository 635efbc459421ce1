// Long texts read from JSON bytes in parts, never as one string. Decoding JSON of over 128 KB, and
// each text of over 128 KB that JSON.parse makes of it, makes a V8 large object: mapped fresh and
// faulted in page by page, ~150 MB/s here against GB/s for smaller strings. FHIR replies of several
// MB sit in rollout rows (read by datasets/) and in the request bodies the stand-in model reads.
//
// Every piece goes through JSON.parse, so what is read is exactly what JSON.parse of the whole gives;
// whatever has another shape than the one read in parts is parsed whole.

/**
 * A long text in parts, each under the large-object size. Parts are cut only before a character
 * that is neither a letter, a digit, `-` or `.` (an MRN never spans two parts) nor half of a
 * surrogate pair, so each part escapes to JSON, and encodes to UTF-8, as its slice of the whole does.
 */
export class LongText {
  constructor(readonly parts: readonly string[]) {}
  get length(): number {
    let n = 0;
    for (const p of this.parts) n += p.length;
    return n;
  }
  text(): string {
    return this.parts.join("");
  }
  /** JSON.stringify writes a LongText as the string it is. */
  toJSON(): string {
    return this.text();
  }
  /** text().slice(start, end), built from the parts it spans (0 <= start <= end <= length). */
  slice(start: number, end: number): string {
    return new Slicer(this).slice(start, end);
  }
  startsWith(s: string): boolean {
    return this.slice(0, Math.min(s.length, this.length)) === s;
  }
  /** text().indexOf(s, from) for a short `s`, found also across parts. */
  indexOf(s: string, from = 0): number {
    let base = 0;
    for (const p of this.parts) {
      const next = base + p.length;
      if (next > from || (next === from && p === this.parts[this.parts.length - 1])) {
        // The part with the start of the next part's first s.length - 1 characters: a match across the cut.
        const window = p + this.slice(next, Math.min(this.length, next + s.length - 1));
        const at = window.indexOf(s, Math.max(0, from - base));
        if (at >= 0) return base + at;
      }
      base = next;
    }
    return -1;
  }

  /** text().lastIndexOf(s) for a short `s`, found also across parts. */
  lastIndexOf(s: string): number {
    let end = this.length;
    for (let i = this.parts.length - 1; i >= 0; i--) {
      const p = this.parts[i]!;
      const base = end - p.length;
      // The part with the start of the next part's first s.length - 1 characters: a match across the cut.
      const window = p + this.slice(end, Math.min(this.length, end + s.length - 1));
      const at = window.lastIndexOf(s);
      if (at >= 0) return base + at;
      end = base;
    }
    return -1;
  }
}

/** Slices of a LongText taken in order: each starts its walk over the parts where the last one ended. */
class Slicer {
  private index = 0;
  private base = 0;

  constructor(private readonly text: LongText) {}

  slice(start: number, end: number): string {
    const parts = this.text.parts;
    if (start < this.base) {
      this.index = 0;
      this.base = 0;
    }
    while (this.index < parts.length - 1 && this.base + parts[this.index]!.length <= start) this.base += parts[this.index++]!.length;
    let out = "";
    for (let i = this.index, base = this.base; i < parts.length && base < end; base += parts[i++]!.length) {
      const p = parts[i]!;
      out += p.slice(Math.max(0, start - base), Math.min(p.length, end - base));
    }
    return out;
  }
}

export type Text = string | LongText;

/** `M` with its content a Text. */
export type WithText<M extends { content: string | null }> = Omit<M, "content"> & { content: Text | null };

export const plainText = (t: Text): string => (typeof t === "string" ? t : t.text());

/**
 * Takes the LongText contents out of parsed messages, leaving "" (to a schema, a long text is a
 * string), by index; anything that is not an array gives none.
 */
export function takeLongContents(messages: unknown): Map<number, LongText> {
  const longs = new Map<number, LongText>();
  if (!Array.isArray(messages)) return longs;
  messages.forEach((m: { content?: unknown } | null, i) => {
    if (m?.content instanceof LongText) {
      longs.set(i, m.content);
      m.content = "";
    }
  });
  return longs;
}

const CONTENT = Buffer.from(',"content":"');
/** Messages longer than this have their content parsed in parts. */
export const LONG_MESSAGE = 64 << 10;
/** Bytes of escaped text per part, about (a part ends at the first cut point after this). */
const PART_BYTES = 32 << 10;

/**
 * JSON.parse of bytes[a, b), a chat message; a long one whose last key is its content gets a LongText.
 * `guess`: [a, b) may not be a message; a long one of another shape is refused, not decoded.
 */
export function parseMessageBytes(bytes: Buffer, a: number, b: number, guess = false): unknown {
  if (b - a > LONG_MESSAGE && bytes[b - 1] === 0x7d && bytes[b - 2] === 0x22) {
    const c = bytes.subarray(a, b).indexOf(CONTENT);
    const value = a + c + CONTENT.length;
    if (c !== -1 && value <= b - 2) {
      const parts = textParts(bytes, value, b - 2);
      if (parts) {
        // The message up to its content, closed with an empty one: the same keys, in the same order.
        const message = JSON.parse(`${bytes.toString("utf8", a, value)}"}`) as Record<string, unknown>;
        message.content = new LongText(parts);
        return message;
      }
    }
  }
  if (guess && b - a > LONG_MESSAGE) throw new SyntaxError("not a message of the shape read in parts");
  return JSON.parse(bytes.toString("utf8", a, b));
}

const isWordByte = (c: number) => (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) || c === 0x2d || c === 0x2e;

/** Whether bytes[p] is escaped (an odd run of backslashes before it). */
export function escaped(bytes: Buffer, p: number): boolean {
  let k = 0;
  while (bytes[p - 1 - k] === 0x5c) k++;
  return (k & 1) === 1;
}

/**
 * The first place at or after `from` (before `end`) where a part may begin: an ASCII byte that is
 * not a word byte, not escaped, and not a `\u` escape (which may make a word character or half a
 * surrogate pair). `end` when there is none.
 */
function nextCut(bytes: Buffer, from: number, end: number): number {
  for (let p = from; p < end; p++) {
    const c = bytes[p]!;
    if (c >= 0x80 || isWordByte(c)) continue;
    if (escaped(bytes, p)) continue;
    if (c === 0x5c && bytes[p + 1] === 0x75) continue;
    return p;
  }
  return end;
}

/** The JSON string body bytes[start, end) parsed in parts; undefined if it is not a valid string body. */
function textParts(bytes: Buffer, start: number, end: number): string[] | undefined {
  const parts: string[] = [];
  for (let a = start; a < end; ) {
    const cut = end - a > PART_BYTES ? nextCut(bytes, a + PART_BYTES, end) : end;
    // Decoded between quotes put in place for the moment (bytes[a - 1] and bytes[cut]), not concatenated.
    const before = bytes[a - 1]!;
    const after = bytes[cut]!;
    bytes[a - 1] = 0x22;
    bytes[cut] = 0x22;
    let part: unknown;
    try {
      part = JSON.parse(bytes.toString("utf8", a - 1, cut + 1));
    } catch {
      part = undefined;
    } finally {
      bytes[a - 1] = before;
      bytes[cut] = after;
    }
    if (typeof part !== "string") return undefined;
    parts.push(part);
    a = cut;
  }
  return parts;
}

/** How far a scan jumps in a pretty-printed array (a batch is about this long). */
const JUMP_CHARS = 40 << 10;
/** Elements of an array scanned before it is jumped through (short arrays, a bundle's links, never are). */
const JUMP_AFTER = 16;

/**
 * How the separator at the comma `at` is written, when pretty-printed: from the newline before it,
 * through indentation and the `}` closing an element, to the `{` opening the next (`\n  }, {`);
 * null for any other writing (compact text, elements that are not objects).
 */
function separatorAt(text: LongText, at: number): string | null {
  const around = text.slice(Math.max(0, at - 40), Math.min(text.length, at + 40));
  const comma = at - Math.max(0, at - 40);
  const hit = /\n[ \t]*\}[ \t]*,[ \t\r\n]*\{$/.exec(around.slice(0, around.indexOf("{", comma) + 1));
  return hit && around.lastIndexOf("\n", comma) === hit.index ? hit[0] : null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SENTINEL = "\u0000ehrgym-array:";
/** Characters of array elements parsed at once (under the large-object size even at 2 bytes a character). */
const BATCH_CHARS = 48 << 10;

/**
 * Parsed batches of array elements by their text, to share between parses of texts that hold the same
 * batches (samples of a task get the same FHIR search replies). Values from it are shared: read only.
 */
export interface BatchMemo {
  get(text: string): unknown[] | undefined;
  set(text: string, elements: unknown[]): void;
}

/**
 * JSON.parse(text.slice(start, end)), the arrays directly under a top-level object parsed a batch of
 * elements at a time, so no string is made of more than a batch (a FHIR bundle's entries). Any other
 * shape, or a piece that does not parse, is parsed whole (which throws JSON.parse's error for invalid
 * JSON). With a memo, batches parsed before are taken from it.
 */
export function parseLongJson(text: LongText, start = 0, end = text.length, memo?: BatchMemo): unknown {
  // With jumps through pretty-printed arrays, then without (a jump may land past the array's end).
  for (const jumps of [true, false]) {
    try {
      const value = parseByArrays(text, start, end, memo, jumps);
      if (value !== undefined) return value;
    } catch {
      // a piece that does not parse: tried again, else parsed whole below (which names the error)
    }
  }
  return JSON.parse(text.slice(start, end));
}

/** Where each array directly under the top-level object lies: its brackets and the commas between its elements. */
interface ArraySpan {
  open: number;
  close: number;
  commas: number[];
}

function parseByArrays(text: LongText, start: number, end: number, memo: BatchMemo | undefined, jumps: boolean): unknown {
  const arrays = topLevelArrays(text, start, end, jumps);
  if (arrays === undefined || arrays.length === 0) return undefined;
  const slicer = new Slicer(text);
  // The text with each array replaced by a sentinel string (not one the text holds itself).
  const outside = arrays.map((a, k) => slicer.slice(k === 0 ? start : arrays[k - 1]!.close + 1, a.open));
  outside.push(slicer.slice(arrays[arrays.length - 1]!.close + 1, end));
  if (outside.some((piece) => piece.includes("ehrgym-array:"))) return undefined;
  const skeleton = outside.reduce((s, piece, k) => (k === 0 ? piece : `${s}${JSON.stringify(SENTINEL + (k - 1))}${piece}`), "");
  const value = JSON.parse(skeleton) as Record<string, unknown>;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  let placed = 0;
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (typeof v !== "string" || !v.startsWith(SENTINEL)) continue;
    placed++;
    const a = arrays[Number(v.slice(SENTINEL.length))]!;
    const bounds = [a.open, ...a.commas, a.close];
    const last = bounds.length - 1;
    const elements: unknown[] = [];
    // Elements parsed a batch at a time: `[` + the batch's text with the commas between + `]`.
    for (let i = 0; i < last; ) {
      let j = i + 1;
      while (j < last && bounds[j + 1]! - bounds[i]! <= BATCH_CHARS) j++;
      const inner = slicer.slice(bounds[i]! + 1, bounds[j]!);
      if (last === 1 && /^[ \t\n\r]*$/.test(inner)) break;
      let batch = memo?.get(inner);
      if (batch === undefined) {
        batch = JSON.parse(`[${inner}]`) as unknown[];
        memo?.set(inner, batch);
      }
      for (const e of batch) elements.push(e);
      i = j;
    }
    value[key] = elements;
  }
  // Every array back where it was (a duplicate key, or a scan misled by a jump, leaves one out).
  return placed === arrays.length ? value : undefined;
}

/**
 * The arrays that are values of the top-level object in text[start, end), by a scan that follows
 * strings, escapes and nesting; undefined when the text does not start with an object. Validity is
 * left to JSON.parse of the pieces.
 *
 * With `jumps`, in a pretty-printed array (elements separated by a newline, indentation, `}, {`) of
 * more than JUMP_AFTER elements, the scan jumps: past each comma it records, to the first separator
 * written the same way JUMP_CHARS further on, and records that comma next (the commas between only
 * cut batches). A separator found inside an element or a string, or past the array's end, leaves a
 * batch that does not parse, and the text is then scanned without jumps.
 */
function topLevelArrays(text: LongText, start: number, end: number, jumps: boolean): ArraySpan[] | undefined {
  const arrays: ArraySpan[] = [];
  let current: (ArraySpan & { separator?: string | null }) | undefined;
  let depth = 0;
  let inString = false;
  let escape = false;
  let seenFirst = false;
  let base = 0;
  /** Where the scan goes on (a jump's comma), when ahead of where it is. */
  let resume = start;
  for (const part of text.parts) {
    const from = Math.max(0, resume - base);
    const to = Math.min(part.length, end - base);
    for (let i = from; i < to; i++) {
      if (inString) {
        // To the string's closing quote: the next quote not escaped (an odd run of backslashes before it).
        if (escape) {
          escape = false;
          continue;
        }
        let q = part.indexOf('"', i);
        for (; q !== -1 && q < to; q = part.indexOf('"', q + 1)) {
          let run = 0;
          while (q - 1 - run >= i && part.charCodeAt(q - 1 - run) === BACKSLASH) run++;
          if ((run & 1) === 0) break;
        }
        if (q === -1 || q >= to) {
          // The string goes on in the next part, whose first character is escaped after an odd run here.
          let run = 0;
          while (to - 1 - run >= i && part.charCodeAt(to - 1 - run) === BACKSLASH) run++;
          escape = (run & 1) === 1;
          break;
        }
        inString = false;
        i = q;
        continue;
      }
      const c = part.charCodeAt(i);
      if (!seenFirst) {
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
        if (c !== 0x7b) return undefined;
        seenFirst = true;
      }
      switch (c) {
        case QUOTE:
          inString = true;
          break;
        case 0x7b: // {
          depth++;
          break;
        case 0x5b: // [
          if (depth === 1) current = { open: base + i, close: -1, commas: [] };
          depth++;
          break;
        case 0x7d: // }
          depth--;
          break;
        case 0x5d: // ]
          depth--;
          if (depth === 1 && current) {
            current.close = base + i;
            arrays.push(current);
            current = undefined;
          }
          break;
        case 0x2c: {
          // ,
          if (depth !== 2 || !current) break;
          const at = base + i;
          current.commas.push(at);
          if (!jumps || current.commas.length < JUMP_AFTER) break;
          if (current.separator === undefined) current.separator = separatorAt(text, at);
          if (!current.separator) break;
          const found = text.indexOf(current.separator, at + JUMP_CHARS);
          if (found === -1 || found + current.separator.length >= end) break;
          resume = found + current.separator.indexOf(",");
          if (resume - base < to) i = resume - base - 1;
          else i = to;
          break;
        }
      }
    }
    base += part.length;
    if (base >= end) break;
  }
  return seenFirst ? arrays : undefined;
}
