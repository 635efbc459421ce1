// Chat request bodies as UTF-8 bytes, encoded incrementally per conversation. Every turn resends the
// whole conversation (~100 KB of FHIR bundles, some several MB), but a conversation only ever grows:
// each turn serializes just the messages added since the last one, appended to the bytes of the
// previous body. Handing the client bytes also spares it a JSON.stringify and undici a UTF-8 encode
// of the whole conversation per turn.
//
// A long JSON.stringify result is a rope that V8 must flatten (copy) before it can be written, and for
// a bundle of several MB that flattening cost more than the stringify itself: long message contents
// are written in slices, each stringified on its own.
import type { Message } from "../../env/core/index.ts";

interface Conversation {
  tools: readonly unknown[] | undefined;
  /** How many messages are in `bytes`, and the last of them (a different one there means another conversation). */
  count: number;
  last: Message | undefined;
  /** `{...fields,"messages":[m0,m1,...` (the closing `]}` is written after it for each body). */
  bytes: Buffer;
  length: number;
}

const CLOSE = Buffer.from("]}");
const SLICE = 8192;

export class ChatBodies {
  private readonly conversations = new WeakMap<readonly Message[], Conversation>();

  /** `fields`: every top-level field but `messages` and `tools` (model, sampling, extra body fields). */
  constructor(private readonly fields: Record<string, unknown>) {}

  /**
   * The body for this turn of the conversation `messages` (the same array, grown, on each turn of an
   * episode). Messages already sent must not change. The bytes stay valid until the next turn of
   * the same conversation, which writes past them.
   */
  encode(messages: readonly Message[], tools?: readonly unknown[]): Uint8Array {
    let c = this.conversations.get(messages);
    if (!c || c.tools !== tools || c.count > messages.length || (c.count > 0 && messages[c.count - 1] !== c.last)) {
      const { messages: _m, tools: _t, ...fields } = this.fields;
      const head = JSON.stringify({ ...fields, ...(tools ? { tools } : {}) });
      c = { tools, count: 0, last: undefined, bytes: Buffer.allocUnsafe(0), length: 0 };
      append(c, `${head.slice(0, -1)}${head.length > 2 ? "," : ""}"messages":[`);
      this.conversations.set(messages, c);
    }
    for (; c.count < messages.length; c.count++) appendMessage(c, messages[c.count]!, c.count > 0);
    c.last = messages[c.count - 1];
    reserve(c, CLOSE.length);
    CLOSE.copy(c.bytes, c.length);
    return c.bytes.subarray(0, c.length + CLOSE.length);
  }
}

function reserve(c: Conversation, extra: number): void {
  if (c.length + extra <= c.bytes.length) return;
  const grown = Buffer.allocUnsafe(Math.max(2 * c.bytes.length, c.length + extra + 1024));
  c.bytes.copy(grown, 0, 0, c.length);
  c.bytes = grown;
}

function append(c: Conversation, text: string): void {
  reserve(c, Buffer.byteLength(text) + CLOSE.length);
  c.length += c.bytes.write(text, c.length);
}

function appendMessage(c: Conversation, m: Message, comma: boolean): void {
  const content = m.content;
  if (typeof content !== "string" || content.length <= SLICE) return append(c, (comma ? "," : "") + JSON.stringify(m));
  const { content: _, ...rest } = m;
  const head = JSON.stringify(rest);
  append(c, `${comma ? "," : ""}${head.slice(0, -1)}${head.length > 2 ? "," : ""}"content":"`);
  for (let start = 0; start < content.length; ) {
    let end = Math.min(content.length, start + SLICE);
    // A surrogate pair stays in one slice (split, each half would be escaped as a lone surrogate).
    const last = content.charCodeAt(end - 1);
    if (end < content.length && last >= 0xd800 && last <= 0xdbff) end--;
    append(c, JSON.stringify(content.slice(start, end)).slice(1, -1));
    start = end;
  }
  append(c, '"}');
}
