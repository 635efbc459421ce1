// Chat request bodies as UTF-8 bytes, encoded incrementally per conversation. Every turn resends the
// whole conversation (~100 KB of FHIR bundles, some several MB), but a conversation only ever grows:
// each turn serializes just the messages added since the last one, appended to the bytes of the
// previous body. Handing the client bytes also spares it a JSON.stringify and the transport a UTF-8 encode
// of the whole conversation per turn.
//
// A long JSON.stringify result is a rope that V8 must flatten (copy) before it can be written, and for
// a bundle of several MB that flattening cost more than the stringify itself: a FHIR reply is written
// from its entries' escaped texts the FHIR service keeps, other long contents in slices, each
// stringified on its own. Body buffers go back to a pool when an
// episode ends: fresh memory for every episode's ~0.5 MB of body costs page faults on every write.
import { messageJsonPieces, type Message } from "../../env/core/index.ts";
import type { SentMessages } from "../row-bytes.ts";

interface Conversation {
  tools: readonly unknown[] | undefined;
  /** How many messages are in `bytes`, and the last of them (a different one there means another conversation). */
  count: number;
  last: Message | undefined;
  /** `{...fields,"messages":[m0,m1,...` (the closing `]}` is written after it for each body). */
  bytes: Buffer;
  length: number;
  /** Where m0 starts. */
  start: number;
  /** How far into `bytes` any conversation has written (pages touched, so resident). */
  touched: number;
}

interface FreeBuffer {
  bytes: Buffer;
  touched: number;
}

const CLOSE = Buffer.from("]}");
/**
 * A conversation's first buffer: address space only, its pages are touched as the body grows (a copy
 * to a bigger one costs more here than the encoding). 4 MB holds a conversation with a FHIR reply of
 * several MB (a `_count=5000` search): with 1 MB, ~1.5% of bench episodes outgrew it, each copying
 * ~1 MB into a fresh 4 MB buffer (~6 ms, page faults included).
 */
const FIRST_BUFFER = 4 << 20;
const GROWTH = 4;
/** Memory the pool may keep, counted as the bytes written into its buffers (about what 64 episodes in flight hold). */
const POOL_BYTES = 64 << 20;

export class ChatBodies {
  private readonly conversations = new WeakMap<readonly Message[], Conversation>();
  private readonly free: FreeBuffer[] = [];
  private freeBytes = 0;

  /** `fields`: every top-level field but `messages` and `tools` (model, sampling, extra body fields). */
  constructor(private readonly fields: Record<string, unknown>) {}

  /**
   * The body for this turn of the conversation `messages` (the same array, grown, on each turn of an
   * episode). Messages already sent must not change. The bytes stay valid until the next turn of
   * the same conversation, which writes past them, or until the conversation is released.
   */
  encode(messages: readonly Message[], tools?: readonly unknown[]): Uint8Array {
    let c = this.conversations.get(messages);
    if (!c || c.tools !== tools || c.count > messages.length || (c.count > 0 && messages[c.count - 1] !== c.last)) {
      if (c) this.recycle(c);
      const { messages: _m, tools: _t, ...fields } = this.fields;
      const head = JSON.stringify({ ...fields, ...(tools ? { tools } : {}) });
      c = { tools, count: 0, last: undefined, length: 0, start: 0, ...this.take(FIRST_BUFFER) };
      this.append(c, `${head.slice(0, -1)}${head.length > 2 ? "," : ""}"messages":[`);
      c.start = c.length;
      this.conversations.set(messages, c);
    }
    for (; c.count < messages.length; c.count++) this.appendMessage(c, messages[c.count]!, c.count > 0);
    c.last = messages[c.count - 1];
    this.reserve(c, CLOSE.length);
    CLOSE.copy(c.bytes, c.length);
    return c.bytes.subarray(0, c.length + CLOSE.length);
  }

  /** The conversation is over and its last body was answered (so read whole): its buffer goes back for reuse. */
  release(messages: readonly Message[]): void {
    this.detach(messages)?.done();
  }

  /**
   * As release, but first hands over the JSON of the messages sent, `m0,m1,...` (exactly
   * JSON.stringify of each, joined by commas), to write elsewhere (the episode's row) without encoding
   * them again. The bytes stay valid until `done()`, which gives the buffer back for reuse; a holder
   * that never calls it only keeps the buffer from the pool.
   */
  detach(messages: readonly Message[]): SentMessages | undefined {
    const c = this.conversations.get(messages);
    if (!c) return undefined;
    this.conversations.delete(messages);
    let done = false;
    return {
      count: c.count,
      bytes: c.bytes.subarray(c.start, c.length),
      done: () => {
        if (done) return;
        done = true;
        this.recycle(c);
      },
    };
  }

  /** The conversation ended on a failed request: the socket may still hold its bytes, so they are not reused. */
  discard(messages: readonly Message[]): void {
    this.conversations.delete(messages);
  }

  /** The largest free buffer (one that held a whole conversation spares the next one its growth copies), if big enough. */
  private take(min: number): FreeBuffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++) if (best === -1 || this.free[i]!.bytes.length > this.free[best]!.bytes.length) best = i;
    if (best === -1 || this.free[best]!.bytes.length < min) return { bytes: Buffer.allocUnsafeSlow(Math.max(min, FIRST_BUFFER)), touched: 0 };
    const b = this.free[best]!;
    this.free[best] = this.free[this.free.length - 1]!;
    this.free.pop();
    this.freeBytes -= b.touched;
    return b;
  }

  private recycle(c: Conversation): void {
    const touched = Math.max(c.touched, c.length + CLOSE.length);
    if (this.freeBytes + touched > POOL_BYTES) return;
    this.free.push({ bytes: c.bytes, touched });
    this.freeBytes += touched;
  }

  private reserve(c: Conversation, extra: number): void {
    if (c.length + extra <= c.bytes.length) return;
    const grown = this.take(Math.max(GROWTH * c.bytes.length, c.length + extra + FIRST_BUFFER));
    c.bytes.copy(grown.bytes, 0, 0, c.length);
    this.recycle(c);
    c.bytes = grown.bytes;
    c.touched = grown.touched;
  }

  private append(c: Conversation, text: string): void {
    // Counting UTF-8 bytes is a pass over the text: only done when the worst case might not fit.
    if (c.length + text.length * 3 + CLOSE.length > c.bytes.length) this.reserve(c, Buffer.byteLength(text) + CLOSE.length);
    c.length += c.bytes.write(text, c.length);
  }

  private appendMessage(c: Conversation, m: Message, comma: boolean): void {
    // A FHIR reply from the environment comes from its entries' cached escaped texts, other long
    // content in slices (see messageJsonPieces).
    for (const piece of messageJsonPieces(m, comma ? [","] : [], false)) this.append(c, piece);
  }
}
