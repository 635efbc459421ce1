// Pass 2's unit of work: consecutive output rows, read back from the inputs by offset, converted
// and rendered in every format (a JSONL slice, an openai slice, one Arrow record batch). Chunks are
// independent, so worker threads render them while the main thread writes them in order.
import { closeSync, openSync, readSync } from "node:fs";
import { ESCAPE_SLICE, escapedSlices } from "../env/fhir/index.ts";
import { EpisodeRow } from "../rollout/index.ts";
import { ArrowBatchBuilder } from "./arrow.ts";
import { toOpenAiRecord, toTrlRow, type MessageOf, type TrlRowOf } from "./convert.ts";
import { LongText, parseRowLine, type Text } from "./rowline.ts";

export type Format = "trl" | "openai" | "arrow";

const RowHead = EpisodeRow.omit({ messages: true, checks: true, turns: true });

export interface RowRef {
  file: number;
  off: number;
  len: number;
}

export interface ChunkTask {
  paths: string[];
  rows: RowRef[];
  formats: Format[];
}

export interface RenderedChunk {
  jsonl: Uint8Array;
  openai?: Uint8Array;
  arrow?: Uint8Array;
}

/** The inputs a chunk reads, opened once per chunk. */
export class InputFiles {
  private readonly fds = new Map<string, number>();
  /** The line last read (reused: what is parsed from it are new strings). */
  private scratch = Buffer.allocUnsafeSlow(1 << 16);

  /** A row's line (pass 1 gave its offset and length), without the newline; valid until the next call. */
  line(path: string, ref: Pick<RowRef, "off" | "len">): Buffer {
    let fd = this.fds.get(path);
    if (fd === undefined) this.fds.set(path, (fd = openSync(path, "r")));
    if (this.scratch.length < ref.len) this.scratch = Buffer.allocUnsafeSlow(Math.max(ref.len, this.scratch.length * 2));
    const buf = this.scratch.subarray(0, ref.len);
    for (let got = 0; got < ref.len; ) {
      const n = readSync(fd, buf, got, ref.len - got, ref.off + got);
      if (n === 0) throw new Error(`${path} is shorter than when it was scanned (changed during the build?)`);
      got += n;
    }
    return buf;
  }

  /**
   * A scanned row converted again, its long contents as LongText. Pass 1 validated it whole; here
   * only the fields around the transcript go through the schema again (for its defaults and the
   * older policy shape): on rows this size checking every message costs about as much as parsing.
   */
  trlRow(path: string, ref: Pick<RowRef, "off" | "len">): TrlRowOf<Text> {
    const raw = parseRowLine(this.line(path, ref)) as { messages: MessageOf<Text>[] };
    return toTrlRow({ ...RowHead.parse(raw), messages: raw.messages, checks: [] });
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}

/**
 * Rendered chunks' buffers given back once written (BuildPool.recycle, in this thread only), for
 * the next chunks' JSON lines: a fresh 4 MB buffer per chunk and format made V8 collect for the
 * sake of its external memory alone.
 */
const spare: Buffer[] = [];
const MAX_SPARE = 6;

function takeBuffer(min: number): Buffer {
  for (let i = 0; i < spare.length; i++) if (spare[i]!.length >= min) return spare.splice(i, 1)[0]!;
  return Buffer.allocUnsafeSlow(min);
}

/** Gives back the buffer under a rendered chunk's bytes (nothing may read them after this). */
export function recycleBuffer(bytes: Uint8Array): void {
  if (!(bytes.buffer instanceof ArrayBuffer) || bytes.buffer.byteLength < 1 << 16) return;
  spare.push(Buffer.from(bytes.buffer));
  if (spare.length > MAX_SPARE) {
    spare.sort((a, b) => b.length - a.length);
    spare.length = MAX_SPARE;
  }
}

/** Text encoded into one growing buffer (large strings encoded in place, not allocated one by one). */
export class ByteBuilder {
  private buf: Buffer;
  private used = 0;
  /** Where this builder wrote each long string of the current line (for `copiesFrom` builders). */
  private readonly written = new Map<string | LongText, [start: number, end: number]>();

  /** `copiesFrom`: a builder that writes the same long strings first (the openai line after the trl one): their bytes are copied, not escaped again. */
  constructor(capacity: number, private readonly copiesFrom?: ByteBuilder) {
    this.buf = takeBuffer(Math.max(1024, capacity));
  }
  text(text: string): void {
    const room = this.buf.length - this.used;
    if (text.length * 3 > room) {
      const need = Buffer.byteLength(text);
      if (need > room) this.grow(need);
    }
    this.used += this.buf.write(text, this.used);
  }

  /**
   * JSON.stringify(record) and a newline, byte for byte, written a message at a time, and a long
   * string a slice at a time: a row's or a FHIR bundle's text (~100 KB and more) would be a
   * large-object string, which V8 maps fresh for each one (costly page faults) and, as a JSON
   * result, a rope it copies again to flatten.
   */
  jsonLine(record: { messages: readonly unknown[] }): void {
    this.written.clear();
    this.text('{"messages":[');
    record.messages.forEach((m, i) => {
      if (i) this.text(",");
      this.json(m);
    });
    const rest = JSON.stringify({ ...record, messages: undefined });
    this.text(rest === "{}" ? "]}\n" : `],${rest.slice(1)}\n`);
  }

  /** JSON.stringify(value) for a message (a plain object from JSON.parse), long strings in slices. */
  private json(value: unknown): void {
    if ((typeof value === "string" && value.length > ESCAPE_SLICE) || value instanceof LongText) return this.longString(value);
    if (typeof value !== "object" || value === null || Array.isArray(value)) return this.text(JSON.stringify(value));
    let first = true;
    this.text("{");
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
      this.text(`${first ? "" : ","}${JSON.stringify(key)}:`);
      first = false;
      this.json(v);
    }
    this.text("}");
  }

  private longString(text: string | LongText): void {
    const span = this.copiesFrom?.written.get(text);
    if (span) return this.copy(this.copiesFrom!.buf, span[0], span[1]);
    const from = this.used;
    this.text('"');
    // A LongText's parts escape as their slices of the whole text do (no surrogate pair is split).
    for (const part of typeof text === "string" ? [text] : text.parts) for (const piece of escapedSlices(part)) this.text(piece);
    this.text('"');
    this.written.set(text, [from, this.used]);
  }

  private copy(from: Buffer, start: number, end: number): void {
    if (end - start > this.buf.length - this.used) this.grow(end - start);
    this.used += from.copy(this.buf, this.used, start, end);
  }

  private grow(need: number): void {
    const next = takeBuffer(Math.max(this.buf.length * 2, this.used + need));
    this.buf.copy(next, 0, 0, this.used);
    recycleBuffer(this.buf);
    this.buf = next;
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.used);
  }
}

export function renderChunk(t: ChunkTask): RenderedChunk {
  // A trl line runs a little longer than its input row (every message gets all five keys): room for
  // that up front, since growing copies the chunk so far into a fresh buffer.
  const input = t.rows.reduce((n, r) => n + r.len, 0) + t.rows.length;
  const estimate = Math.ceil(input * 1.1) + (64 << 10);
  const jsonl = new ByteBuilder(estimate);
  const openai = t.formats.includes("openai") ? new ByteBuilder(estimate, jsonl) : undefined;
  const arrow = t.formats.includes("arrow") ? new ArrowBatchBuilder() : undefined;
  const inputs = new InputFiles();
  try {
    for (const ref of t.rows) {
      const row = inputs.trlRow(t.paths[ref.file]!, ref);
      jsonl.jsonLine(row);
      if (openai) openai.jsonLine(toOpenAiRecord(row));
      arrow?.add(row);
    }
  } finally {
    inputs.close();
  }
  return {
    jsonl: jsonl.bytes(),
    ...(openai ? { openai: openai.bytes() } : {}),
    ...(arrow ? { arrow: arrow.finish() } : {}),
  };
}
