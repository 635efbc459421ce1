// Reads chat request bodies, parsing only what is new. Each request of an episode resends the whole
// conversation (FHIR bundles make it ~100 KB and growing), so the reader keeps an episode's last body:
// when the next body repeats its bytes up to the end of its messages, and repeats its bytes after them,
// only the messages in between are parsed, validated and digested, long contents among them kept in
// parts (long-content.ts: a FHIR reply of several MB is never made one string). Any other body is read
// in full.
import type { Message } from "../../env/core/index.ts";
import { LONG_MESSAGE, parseMessageBytes, takeLongContents } from "../long-text.ts";
import { messageDigest } from "./digest.ts";
import { arraySpan } from "./json-span.ts";
import { setLongContent } from "./long-content.ts";
import { Lru } from "./lru.ts";
import { invalidRequest, MessageIn, parseChatRequest, toMessage, type ChatRequest } from "./request.ts";

/** A validated request with its messages normalised and digested. */
export interface Body {
  request: ChatRequest;
  messages: Message[];
  digests: string[];
  /** The episode the request belongs to, by its Idempotency-Key (see episodeOf). */
  episode?: string;
}

/**
 * The episode of an Idempotency-Key shaped `<episode>/<turn>` (the rollout runner's `suite/task/sample/turn`);
 * undefined for any other key. A wrong guess costs only a full read: bodies are compared byte for byte.
 */
export function episodeOf(key: string | undefined): string | undefined {
  const at = key?.lastIndexOf("/") ?? -1;
  return at > 0 ? key!.slice(0, at) : undefined;
}

interface Kept {
  body: Body;
  raw: Buffer;
  /** Offset of the `]` that closes the messages. */
  close: number;
}

const MessagesIn = MessageIn.array();

export class BodyReader {
  private readonly kept: Lru<string, Kept>;

  constructor(maxEpisodes = 1024) {
    this.kept = new Lru(maxEpisodes);
  }

  /** `key`: the request's Idempotency-Key; when it names an episode, the body is kept for its next request. */
  read(raw: Buffer, key?: string): Body {
    const episode = episodeOf(key);
    if (episode === undefined) return readFull(raw);
    const before = this.kept.get(episode);
    const extended = before && extend(before, raw);
    if (extended) {
      this.kept.set(episode, extended);
      return extended.body;
    }
    const body = { ...readFull(raw), episode };
    const span = arraySpan(raw, "messages");
    if (span) this.kept.set(episode, { body, raw, close: span.close });
    else this.kept.delete(episode);
    return body;
  }

  /** Drops what is kept for an episode that has ended. */
  forget(episode: string): void {
    this.kept.delete(episode);
  }
}

const MESSAGE = Buffer.from('{"role":"');

/**
 * JSON.parse of the array raw[open..close] (the added messages), long contents as LongText: when it
 * is long, it is cut where its messages start (`{"role":"` only starts an object: inside a string that
 * quote would be escaped) and each is parsed alone, so every piece is checked by JSON.parse and the
 * pieces, joined by the commas between them, are the array. Any other shape is parsed whole.
 */
function parseAdded(raw: Buffer, open: number, close: number): unknown {
  if (close - open > LONG_MESSAGE && raw.indexOf(MESSAGE, open + 1) === open + 1) {
    const starts = [open + 1];
    for (let p = raw.indexOf(MESSAGE, open + 2); p !== -1 && p < close; p = raw.indexOf(MESSAGE, p + 1)) if (raw[p - 1] === 0x2c) starts.push(p);
    try {
      return starts.map((a, i) => parseMessageBytes(raw, a, i + 1 < starts.length ? starts[i + 1]! - 1 : close));
    } catch {
      // a `{"role":"` that was not a message's start: parsed whole
    }
  }
  return JSON.parse(raw.toString("utf8", open, close + 1));
}

function readFull(raw: Buffer): Body {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString("utf8"));
  } catch (e) {
    throw invalidRequest(`the request body is not valid JSON: ${(e as Error).message}`);
  }
  const request = parseChatRequest(json);
  const messages = request.messages.map(toMessage);
  return { request, messages, digests: messages.map(messageDigest) };
}

/**
 * The body as `before` plus the messages between its end of messages and its unchanged rest, or
 * undefined when `raw` is not such a body (it is then read in full, which also names any error).
 */
function extend(before: Kept, raw: Buffer): Kept | undefined {
  const rest = before.raw.length - before.close;
  const close = raw.length - rest;
  if (close < before.close) return undefined;
  if (raw.compare(before.raw, 0, before.close, 0, before.close) !== 0) return undefined;
  if (raw.compare(before.raw, before.close, before.raw.length, close, raw.length) !== 0) return undefined;
  if (close === before.close) return { ...before, raw };
  // The added bytes are `,m1,m2...` up to the `]` at `close`: with the comma read as `[` they are the
  // array of the added messages (ASCII at both ends, so decoding them alone decodes as the whole would).
  // The comma is swapped in place rather than a string built around them, which JSON.parse reads slower.
  if (raw[before.close] !== 0x2c) return undefined;
  let added: unknown;
  raw[before.close] = 0x5b;
  try {
    added = parseAdded(raw, before.close, close);
  } catch {
    return undefined;
  } finally {
    raw[before.close] = 0x2c;
  }
  // Long contents are taken out for the schema (to which they are strings) and put back as parts.
  const longs = takeLongContents(added);
  const parsed = MessagesIn.safeParse(added);
  if (!parsed.success) return undefined;
  const messages = parsed.data.map(toMessage);
  for (const [i, text] of longs) {
    setLongContent(parsed.data[i]!, text);
    setLongContent(messages[i]!, text);
  }
  const b = before.body;
  const body: Body = {
    ...b,
    request: { ...b.request, messages: [...b.request.messages, ...parsed.data] },
    messages: [...b.messages, ...messages],
    digests: [...b.digests, ...messages.map(messageDigest)],
  };
  return { body, raw, close };
}
