// An episode row's JSON line parsed with its long message contents kept in parts (LongText), never
// as one string. Decoding a line of over 128 KB, and each text of over 128 KB that JSON.parse makes
// of it, makes a V8 large object: mapped fresh and faulted in page by page, ~150 MB/s here against
// GB/s for smaller strings. Most of a build's input is such rows (FHIR replies in tool turns).
//
// Lines of the shape ehrgym writes are cut where their messages are (`{"role":"` only starts an
// object: inside a string that quote would be escaped), each message is parsed on its own, and a
// long content that is its message's last key is parsed in slices. Every piece is checked by
// JSON.parse, so the value is exactly JSON.parse(line) (long contents as LongText); a line of any
// other shape, or where a check fails, is parsed whole. LongText and the reading of one message are
// rollout/long-text.ts (the stand-in model reads request bodies with them).
import { escaped, LONG_MESSAGE, LongText, parseMessageBytes, takeLongContents, type WithText } from "../rollout/index.ts";

export { LongText, plainText, type Text, type WithText } from "../rollout/index.ts";

const MESSAGES = Buffer.from('"messages":[');
const MESSAGES_KEY = Buffer.from('"messages"');
const MESSAGE = Buffer.from('{"role":"');
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
  for (let i = 0; i < starts.length - 1; i++) messages.push(parseMessageBytes(line, starts[i]!, starts[i + 1]! - 1));
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
      return [q + 2, parseMessageBytes(line, start, q + 2, true)];
    } catch {
      // an opening quote (a text that begins with `}]`): try the next
    }
  }
  for (let p = line.indexOf("}]", start), tries = 0; p !== -1 && p + 1 - start <= LONG_MESSAGE && tries < LAST_END_TRIES; p = line.indexOf("}]", p + 1), tries++) {
    try {
      return [p + 1, parseMessageBytes(line, start, p + 1, true)];
    } catch {
      // a `}]` inside the last message: try the next
    }
  }
  return [-1, undefined];
}

/** Takes the LongText contents out of a parsed row's messages, leaving "" (to a schema, a long text is a string). */
export function takeLongTexts(row: unknown): Map<number, LongText> {
  return takeLongContents((row as { messages?: unknown } | null)?.messages);
}

/** Puts them back into what the schema made of the row (its messages in the same order). */
export function putLongTexts<R extends { messages: { content: string | null }[] }>(row: R, longs: Map<number, LongText>): Omit<R, "messages"> & { messages: WithText<R["messages"][number]>[] } {
  const out = row as unknown as Omit<R, "messages"> & { messages: WithText<R["messages"][number]>[] };
  for (const [i, text] of longs) out.messages[i]!.content = text;
  return out;
}
