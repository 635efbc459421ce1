// An episode row's JSON line parsed with its long message contents kept in parts (LongText), never
// as one string. Decoding a line of over 128 KB, and each text of over 128 KB that JSON.parse makes
// of it, makes a V8 large object: mapped fresh and faulted in page by page, ~150 MB/s here against
// GB/s for smaller strings. Most of a build's input is such rows (FHIR replies in tool turns).
//
// Lines of the shape ehrgym writes are cut where their messages are (`{"role":"` only starts an
// object: inside a string that quote would be escaped), each message is parsed on its own, and a
// long content that is its message's last key is parsed in slices. Every piece is checked by
// JSON.parse, so the value is exactly JSON.parse(line) (long contents as LongText); a line of any
// other shape, or where a check fails, is parsed whole.

/**
 * A long text in parts, each under the large-object size. Parts are cut only before a character
 * that is neither a letter, a digit, `-` or `.` (an MRN never spans two parts) nor half of a
 * surrogate pair, so each part escapes to JSON as its slice of the whole text does.
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
}

export type Text = string | LongText;

/** `M` with its content a Text (what a parsed line's messages hold). */
export type WithText<M extends { content: string | null }> = Omit<M, "content"> & { content: Text | null };

export const plainText = (t: Text): string => (typeof t === "string" ? t : t.text());

const MESSAGES = Buffer.from('"messages":[');
const MESSAGES_KEY = Buffer.from('"messages"');
const MESSAGE = Buffer.from('{"role":"');
const CONTENT = Buffer.from(',"content":"');
/** Messages longer than this have their content parsed in parts (and shorter lines are parsed whole). */
const LONG_MESSAGE = 64 << 10;
/** Bytes of escaped text per part, about (a part ends at the first cut point after this). */
const PART_BYTES = 32 << 10;
/** Tries at where the last message ends, of each kind. */
const LAST_END_TRIES = 4;
const SENTINEL = "\u0000ehrgym";

/** JSON.parse of a row's line (a trailing CR is whitespace to it), long message contents as LongText. */
export function parseRowLine(line: Buffer): unknown {
  if (line.length > LONG_MESSAGE) {
    try {
      const row = parseByMessages(line);
      if (row !== undefined) return row;
    } catch {
      // a piece that does not parse: the line is not the shape this reads (or not JSON) and is parsed whole
    }
  }
  return JSON.parse(line.toString("utf8"));
}

function parseByMessages(line: Buffer): unknown {
  const key = line.indexOf(MESSAGES);
  if (key < 1 || (line[key - 1] !== 0x7b && line[key - 1] !== 0x2c)) return undefined;
  const first = key + MESSAGES.length;
  if (line.indexOf(MESSAGE, first) !== first) return undefined;
  const starts = [first];
  for (let p = line.indexOf(MESSAGE, first + 1); p !== -1; p = line.indexOf(MESSAGE, p + 1)) if (line[p - 1] === 0x2c) starts.push(p);
  const last = starts[starts.length - 1]!;
  const [end, lastMessage] = lastMessageOf(line, last);
  // A "messages" key after these would be the one JSON.parse keeps (one before them is not).
  if (end === -1 || line.subarray(end).indexOf(MESSAGES_KEY) !== -1) return undefined;
  // The line with its messages replaced by one sentinel: parsed, the sentinel must be all the row's
  // `messages` holds, which proves the cut points are the array's own brackets.
  const row = JSON.parse(`${line.toString("utf8", 0, first)}${JSON.stringify(SENTINEL)}${line.toString("utf8", end)}`) as Record<string, unknown> | null;
  const held = row?.messages;
  if (!Array.isArray(held) || held.length !== 1 || held[0] !== SENTINEL) return undefined;
  const messages: unknown[] = [];
  for (let i = 0; i < starts.length - 1; i++) messages.push(parseMessage(line, starts[i]!, starts[i + 1]! - 1));
  messages.push(lastMessage);
  row!.messages = messages;
  return row;
}

/**
 * Where the last message (from `start`) ends, just before the `]` closing the messages, and its
 * value; -1 if not found. An unescaped `"}]` ends a last message whose last key is its content
 * (inside a string every quote is escaped; the first is the content's end, unless the content
 * begins with `}]`); failing that, one of the first few `}]` ends a short one.
 */
function lastMessageOf(line: Buffer, start: number): [end: number, message: unknown] {
  for (let q = line.indexOf('"}]', start), tries = 0; q !== -1 && tries < LAST_END_TRIES; q = line.indexOf('"}]', q + 1)) {
    if (escaped(line, q)) continue;
    tries++;
    try {
      return [q + 2, parseMessage(line, start, q + 2, true)];
    } catch {
      // an opening quote (a text that begins with `}]`): try the next
    }
  }
  for (let p = line.indexOf("}]", start), tries = 0; p !== -1 && p + 1 - start <= LONG_MESSAGE && tries < LAST_END_TRIES; p = line.indexOf("}]", p + 1), tries++) {
    try {
      return [p + 1, parseMessage(line, start, p + 1, true)];
    } catch {
      // a `}]` inside the last message: try the next
    }
  }
  return [-1, undefined];
}

/**
 * JSON.parse of line[a, b), a message; a long one whose last key is its content gets a LongText.
 * `guess`: [a, b) may not be a message; a long one of another shape is refused, not decoded.
 */
function parseMessage(line: Buffer, a: number, b: number, guess = false): unknown {
  if (b - a > LONG_MESSAGE && line[b - 1] === 0x7d && line[b - 2] === 0x22) {
    const c = line.subarray(a, b).indexOf(CONTENT);
    const value = a + c + CONTENT.length;
    if (c !== -1 && value <= b - 2) {
      const parts = textParts(line, value, b - 2);
      if (parts) {
        // The message up to its content, closed with an empty one: the same keys, in the same order.
        const message = JSON.parse(`${line.toString("utf8", a, value)}"}`) as Record<string, unknown>;
        message.content = new LongText(parts);
        return message;
      }
    }
  }
  if (guess && b - a > LONG_MESSAGE) throw new SyntaxError("not a message of the shape read in parts");
  return JSON.parse(line.toString("utf8", a, b));
}

const isWordByte = (c: number) => (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) || c === 0x2d || c === 0x2e;

/** Whether line[p] is escaped (an odd run of backslashes before it). */
function escaped(line: Buffer, p: number): boolean {
  let k = 0;
  while (line[p - 1 - k] === 0x5c) k++;
  return (k & 1) === 1;
}

/**
 * The first place at or after `from` (before `end`) where a part may begin: an ASCII byte that is
 * not a word byte, not escaped, and not a `\u` escape (which may make a word character or half a
 * surrogate pair). `end` when there is none.
 */
function nextCut(line: Buffer, from: number, end: number): number {
  for (let p = from; p < end; p++) {
    const c = line[p]!;
    if (c >= 0x80 || isWordByte(c)) continue;
    if (escaped(line, p)) continue;
    if (c === 0x5c && line[p + 1] === 0x75) continue;
    return p;
  }
  return end;
}

/** The JSON string body line[start, end) parsed in parts; undefined if it is not a valid string body. */
function textParts(line: Buffer, start: number, end: number): string[] | undefined {
  const parts: string[] = [];
  for (let a = start; a < end; ) {
    const cut = end - a > PART_BYTES ? nextCut(line, a + PART_BYTES, end) : end;
    // Decoded between quotes put in place for the moment (line[a - 1] and line[cut]), not concatenated.
    const before = line[a - 1]!;
    const after = line[cut]!;
    line[a - 1] = 0x22;
    line[cut] = 0x22;
    let part: unknown;
    try {
      part = JSON.parse(line.toString("utf8", a - 1, cut + 1));
    } catch {
      part = undefined;
    } finally {
      line[a - 1] = before;
      line[cut] = after;
    }
    if (typeof part !== "string") return undefined;
    parts.push(part);
    a = cut;
  }
  return parts;
}

/** Takes the LongText contents out of a parsed row's messages, leaving "" (to a schema, a long text is a string). */
export function takeLongTexts(row: unknown): Map<number, LongText> {
  const longs = new Map<number, LongText>();
  const messages = (row as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(messages)) return longs;
  messages.forEach((m: { content?: unknown } | null, i) => {
    if (m?.content instanceof LongText) {
      longs.set(i, m.content);
      m.content = "";
    }
  });
  return longs;
}

/** Puts them back into what the schema made of the row (its messages in the same order). */
export function putLongTexts<R extends { messages: { content: string | null }[] }>(row: R, longs: Map<number, LongText>): Omit<R, "messages"> & { messages: WithText<R["messages"][number]>[] } {
  const out = row as unknown as Omit<R, "messages"> & { messages: WithText<R["messages"][number]>[] };
  for (const [i, text] of longs) out.messages[i]!.content = text;
  return out;
}
