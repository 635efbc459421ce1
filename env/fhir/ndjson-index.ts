// The index sidecar of an exported NDJSON file: `<Type>.ndjson.idx` beside `<Type>.ndjson` holds
// everything a load derives from the file (ids, every search index of the TypeTable, where each
// row's line lies in the file), so a load reads bytes and typed arrays and parses no JSON.
//
// Layout (little-endian):
//   [0, 8)    magic "EHRGIDX\n"
//   [8, 12)   format version (u32)
//   [12, 16)  header length in bytes (u32)
//   [16, 48)  sha256 of every byte from 48 to the end (header and blobs: a torn or damaged sidecar is refused)
//   [48, ..)  header: JSON, checked with a zod schema; then blobs, each at an 8-byte-aligned offset
//             (Int32Array / Float64Array / utf8), loaded as views without copying when aligned.
// The header names the source NDJSON by byte size and sha256 (no times: the same export gives the
// same bytes), and the search parameters the indexes were built with. Map keys are written sorted,
// so a sidecar depends only on the table's content, not on the order its rows were first loaded in.
// Bump INDEX_VERSION whenever what a TableBuilder derives from a resource changes (table.ts,
// search-params.ts, dates.ts): a sidecar of another version is refused and the file parsed.
import { createHash } from "node:crypto";
import { z } from "zod";
import type { DateRange } from "./dates.ts";
import { normalizeString, searchParams } from "./search-params.ts";
import { ID_RE } from "./engine.ts";
import { NUMERIC_ID, NumericIdIndex, sub, TableBuilder, TypeTable, type DateColumn, type IdIndex, type Lists } from "./table.ts";

export const INDEX_SUFFIX = ".idx";
export const INDEX_VERSION = 1;
const MAGIC = Buffer.from("EHRGIDX\n", "latin1");
const PREFIX = 48;

/** A sidecar that cannot be used (unreadable, damaged, another version, not about this file). */
export class IndexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "IndexError";
  }
}

/** The NDJSON file a sidecar describes. */
export interface IndexSource {
  bytes: number;
  sha256: string;
}

/** Per row (in table row order): byte offset and length of its line in the NDJSON file. */
export interface RowSpans {
  start: Float64Array;
  length: Int32Array;
}

/** What the search indexes of `type` are made of: a sidecar built with other parameters is refused. */
export function paramsFingerprint(type: string): string {
  return [...searchParams(type).values()].map((d) => `${d.name}:${d.type}`).join(",");
}

// ---- header schema ----

const count = z.number().int().min(0);
const Blob = z.object({ kind: z.enum(["i32", "f64", "u8"]), offset: count, length: count }).strict();
const BlobRef = count; // index into `blobs`
/** Doubles in JSON: the non-finite ones as strings. */
const Num = z.union([z.number(), z.enum(["Infinity", "-Infinity", "NaN"])]);
const Keys = z.array(z.string());

const Header = z
  .object({
    type: z.string().regex(/^[A-Z][A-Za-z]+$/),
    params: z.string(),
    source: z.object({ bytes: count, sha256: z.string().regex(/^[0-9a-f]{64}$/) }).strict(),
    rows: count,
    maxNumericId: count.nullable(),
    blobs: z.array(Blob),
    ids: BlobRef,
    numericIds: BlobRef.nullable(),
    spans: z.object({ start: BlobRef, length: BlobRef }).strict(),
    pool: BlobRef,
    counts: BlobRef,
    tokens: z.array(z.object({ param: z.string(), keys: Keys }).strict()),
    systemTokens: z.array(z.object({ param: z.string(), system: z.string(), keys: Keys }).strict()),
    patients: Keys,
    patientTokens: z.array(z.object({ patient: z.string(), param: z.string(), keys: Keys }).strict()),
    dates: z.array(z.object({ param: z.string(), lo: BlobRef, hi: BlobRef, extra: BlobRef, maxSpan: Num }).strict()),
    strings: z.array(z.object({ param: z.string(), rows: BlobRef, counts: BlobRef, values: BlobRef }).strict()),
  })
  .strict();
type Header = z.infer<typeof Header>;
const StringValues = z.array(z.string());

const numOut = (x: number): z.infer<typeof Num> => (Number.isFinite(x) ? x : (String(x) as "Infinity" | "-Infinity" | "NaN"));
const numIn = (x: number | string): number => (typeof x === "number" ? x : Number(x));

// ---- write ----

type Data = Int32Array | Float64Array | Uint8Array;

/** The sidecar bytes of `table`, whose rows lie in the NDJSON file described by `source` at `spans`. */
export function encodeNdjsonIndex(table: TypeTable, spans: RowSpans, source: IndexSource): Buffer {
  const n = table.size;
  if (spans.start.length !== n || spans.length.length !== n) throw new Error("encodeNdjsonIndex: one span per row");
  const blobs: { kind: "i32" | "f64" | "u8"; data: Data }[] = [];
  const blob = (kind: "i32" | "f64" | "u8", data: Data): number => blobs.push({ kind, data }) - 1;
  const sortedEntries = <V>(m: Map<string, V>): [string, V][] => [...m.keys()].sort().map((k) => [k, m.get(k)!]);

  // Row lists: concatenated into one pool in the order the header names them, lengths in `counts`.
  const counts: number[] = [];
  const parts: Int32Array[] = [];
  const lists = (m: Lists<Int32Array>): string[] =>
    sortedEntries(m).map(([key, rows]) => {
      counts.push(rows.length);
      parts.push(rows);
      return key;
    });
  const tokens = sortedEntries(table.tokens).map(([param, m]) => ({ param, keys: lists(m) }));
  const systemTokens: Header["systemTokens"] = [];
  for (const [param, bySystem] of sortedEntries(table.systemTokens))
    for (const [system, m] of sortedEntries(bySystem)) systemTokens.push({ param, system, keys: lists(m) });
  const patients = lists(table.patients);
  const patientTokens: Header["patientTokens"] = [];
  for (const [patient, byParam] of sortedEntries(table.patientTokens))
    for (const [param, m] of sortedEntries(byParam)) patientTokens.push({ patient, param, keys: lists(m) });
  const pool = new Int32Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    pool.set(p, at);
    at += p.length;
  }

  const dates: Header["dates"] = [];
  for (const [param, col] of table.dates) {
    const extra: number[] = [];
    for (const row of [...col.extra.keys()].sort((a, b) => a - b)) {
      const ranges = col.extra.get(row)!;
      extra.push(row, ranges.length);
      for (const r of ranges) extra.push(r.lo, r.hi);
    }
    dates.push({ param, lo: blob("f64", col.lo), hi: blob("f64", col.hi), extra: blob("f64", Float64Array.from(extra)), maxSpan: numOut(col.maxSpan) });
  }

  const strings: Header["strings"] = [];
  for (const [param, col] of table.strings) {
    const rows: number[] = [];
    const valueCounts: number[] = [];
    const values: string[] = [];
    for (let row = 0; row < n; row++) {
      const v = col[row];
      if (!v) continue;
      rows.push(row);
      valueCounts.push(v.length);
      values.push(...v);
    }
    strings.push({ param, rows: blob("i32", Int32Array.from(rows)), counts: blob("i32", Int32Array.from(valueCounts)), values: blob("u8", Buffer.from(JSON.stringify(values))) });
  }

  let maxNumericId: number | null = null;
  let allNumeric = n > 0;
  for (const id of table.ids) {
    if (NUMERIC_ID.test(id)) maxNumericId = Math.max(maxNumericId ?? 0, Number(id));
    else allNumeric = false;
  }

  const header: Omit<Header, "blobs"> = {
    type: table.type,
    params: paramsFingerprint(table.type),
    source: { bytes: source.bytes, sha256: source.sha256 },
    rows: n,
    maxNumericId,
    ids: blob("u8", Buffer.from(table.ids.join("\n"))),
    // Rows of an all-numeric table are in ascending numeric order (TableBuilder.finish).
    numericIds: allNumeric ? blob("f64", Float64Array.from(table.ids, Number)) : null,
    spans: { start: blob("f64", spans.start), length: blob("i32", spans.length) },
    pool: blob("i32", pool),
    counts: blob("i32", Int32Array.from(counts)),
    tokens,
    systemTokens,
    patients,
    patientTokens,
    dates,
    strings,
  };

  // Blob offsets depend on the header length, which depends on the offsets: lay out blobs after a
  // header with zero offsets, then grow the reserved space until the real header fits.
  const align = (x: number) => (x + 7) & ~7;
  let reserved = align(PREFIX + Buffer.byteLength(JSON.stringify({ ...header, blobs: blobs.map((b) => ({ kind: b.kind, offset: 0, length: b.data.length })) })) + 64);
  for (;;) {
    let offset = reserved;
    const described = blobs.map((b) => {
      const d = { kind: b.kind, offset, length: b.data.length };
      offset = align(offset + b.data.byteLength);
      return d;
    });
    const json = Buffer.from(JSON.stringify({ ...header, blobs: described }));
    if (PREFIX + json.length > reserved) {
      reserved = align(PREFIX + json.length + 64);
      continue;
    }
    const out = Buffer.alloc(offset); // zero padding: the same table gives the same bytes
    MAGIC.copy(out, 0);
    out.writeUInt32LE(INDEX_VERSION, 8);
    out.writeUInt32LE(json.length, 12);
    json.copy(out, PREFIX);
    for (const [i, b] of blobs.entries()) {
      out.set(new Uint8Array(b.data.buffer, b.data.byteOffset, b.data.byteLength), described[i]!.offset);
    }
    createHash("sha256").update(out.subarray(PREFIX)).digest().copy(out, 16);
    return out;
  }
}

// ---- read ----

export interface NdjsonIndex {
  header: Header;
  bytes: Buffer;
}

/** Check a sidecar's bytes (magic, version, checksum, header schema, blob bounds). Throws IndexError. */
export function readNdjsonIndex(bytes: Buffer): NdjsonIndex {
  if (bytes.length < PREFIX || !bytes.subarray(0, 8).equals(MAGIC)) throw new IndexError("not an index sidecar");
  const version = bytes.readUInt32LE(8);
  if (version !== INDEX_VERSION) throw new IndexError(`index format version ${version}, this build reads version ${INDEX_VERSION}`);
  const headerLength = bytes.readUInt32LE(12);
  if (PREFIX + headerLength > bytes.length) throw new IndexError("truncated");
  if (!createHash("sha256").update(bytes.subarray(PREFIX)).digest().equals(bytes.subarray(16, PREFIX))) throw new IndexError("checksum mismatch (damaged or truncated)");
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8", PREFIX, PREFIX + headerLength));
  } catch (e) {
    throw new IndexError(`header is not JSON: ${(e as Error).message}`);
  }
  const parsed = Header.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new IndexError(`header: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  const header = parsed.data;
  const size = { i32: 4, f64: 8, u8: 1 } as const;
  for (const b of header.blobs) if (b.offset + b.length * size[b.kind] > bytes.length) throw new IndexError("a blob lies beyond the end of the file");
  if (header.params !== paramsFingerprint(header.type)) throw new IndexError(`built with other ${header.type} search parameters`);
  return { header, bytes };
}

/**
 * The table a checked sidecar describes, its row texts taken from `ndjson` (the file's bytes) on
 * first use. `ndjson` may still be being filled: call checkRowSpans once it is. Throws IndexError.
 */
export function tableFromIndex(index: NdjsonIndex, ndjson: Buffer): TypeTable {
  const { header: h, bytes } = index;
  const n = h.rows;
  if (ndjson.length !== h.source.bytes) throw new IndexError("size differs from the indexed file");
  const blobAt = (ref: number, kind: "i32" | "f64" | "u8") => {
    const b = h.blobs[ref];
    if (!b || b.kind !== kind) throw new IndexError(`blob ${ref} is not ${kind}`);
    return b;
  };
  const i32 = (ref: number, length?: number): Int32Array => {
    const b = blobAt(ref, "i32");
    if (length !== undefined && b.length !== length) throw new IndexError(`blob ${ref}: ${b.length} values, expected ${length}`);
    const at = bytes.byteOffset + b.offset;
    return at % 4 === 0 ? new Int32Array(bytes.buffer, at, b.length) : new Int32Array(bytes.buffer.slice(at, at + b.length * 4));
  };
  const f64 = (ref: number, length?: number): Float64Array => {
    const b = blobAt(ref, "f64");
    if (length !== undefined && b.length !== length) throw new IndexError(`blob ${ref}: ${b.length} values, expected ${length}`);
    const at = bytes.byteOffset + b.offset;
    return at % 8 === 0 ? new Float64Array(bytes.buffer, at, b.length) : new Float64Array(bytes.buffer.slice(at, at + b.length * 8));
  };
  const utf8 = (ref: number): string => {
    const b = blobAt(ref, "u8");
    return bytes.toString("utf8", b.offset, b.offset + b.length);
  };

  // Where each row lies in the file (what lies there is checked by checkRowSpans once it is read).
  const start = f64(h.spans.start, n);
  const length = i32(h.spans.length, n);
  for (let row = 0; row < n; row++) {
    const s = start[row]!;
    if (!(Number.isInteger(s) && s >= 0 && length[row]! >= 2 && s + length[row]! <= ndjson.length)) throw new IndexError(`row ${row} lies outside the file`);
  }

  const ids = n === 0 ? [] : utf8(h.ids).split("\n");
  if (ids.length !== n) throw new IndexError(`${ids.length} ids for ${n} rows`);
  let idIndex: IdIndex;
  if (h.numericIds !== null) {
    const nums = f64(h.numericIds, n);
    for (let row = 1; row < n; row++) if (!(nums[row - 1]! <= nums[row]!)) throw new IndexError("numeric ids out of order");
    idIndex = new NumericIdIndex(ids, nums);
  } else {
    const m = new Map<string, number>();
    for (let row = 0; row < n; row++) m.set(ids[row]!, row);
    idIndex = m;
  }

  // Row lists, in header order.
  const pool = i32(h.pool);
  for (let i = 0; i < pool.length; i++) if (!(pool[i]! >= 0 && pool[i]! < n)) throw new IndexError("a row list holds a row out of range");
  const counts = i32(h.counts);
  let list = 0;
  let at = 0;
  const lists = (keys: string[]): Lists<Int32Array> => {
    const m = new Map<string, Int32Array>();
    for (const key of keys) {
      if (list >= counts.length) throw new IndexError("fewer row lists than keys");
      const len = counts[list++]!;
      if (len < 1 || at + len > pool.length) throw new IndexError("row list out of bounds");
      m.set(key, pool.subarray(at, at + len));
      at += len;
    }
    return m;
  };
  const tokens = new Map<string, Lists<Int32Array>>();
  for (const t of h.tokens) tokens.set(t.param, lists(t.keys));
  const systemTokens = new Map<string, Map<string, Lists<Int32Array>>>();
  for (const t of h.systemTokens) sub(systemTokens, t.param, () => new Map()).set(t.system, lists(t.keys));
  const patients = lists(h.patients);
  const patientTokens = new Map<string, Map<string, Lists<Int32Array>>>();
  for (const t of h.patientTokens) sub(patientTokens, t.patient, () => new Map()).set(t.param, lists(t.keys));
  if (list !== counts.length || at !== pool.length) throw new IndexError("row lists left over");

  const dates = new Map<string, DateColumn>();
  for (const d of h.dates) {
    const extra = new Map<number, DateRange[]>();
    const e = f64(d.extra);
    for (let i = 0; i < e.length; ) {
      const row = e[i]!;
      const k = e[i + 1]!;
      if (!(Number.isInteger(row) && row >= 0 && row < n && Number.isInteger(k) && k > 1 && i + 2 + 2 * k <= e.length)) throw new IndexError(`date ${d.param}: bad extra ranges`);
      const ranges: DateRange[] = [];
      for (let j = 0; j < k; j++) ranges.push({ lo: e[i + 2 + 2 * j]!, hi: e[i + 3 + 2 * j]! });
      extra.set(row, ranges);
      i += 2 + 2 * k;
    }
    dates.set(d.param, { lo: f64(d.lo, n), hi: f64(d.hi, n), extra, maxSpan: numIn(d.maxSpan), sorted: new WeakMap(), orders: {} });
  }

  const strings = new Map<string, (string[] | undefined)[]>();
  const foldedStrings = new Map<string, (string[] | undefined)[]>();
  for (const s of h.strings) {
    const rows = i32(s.rows);
    const valueCounts = i32(s.counts, rows.length);
    let values: string[];
    try {
      values = StringValues.parse(JSON.parse(utf8(s.values)));
    } catch (e) {
      throw new IndexError(`string ${s.param}: bad values (${(e as Error).message.slice(0, 100)})`);
    }
    const exact: (string[] | undefined)[] = new Array<string[] | undefined>(n).fill(undefined);
    const folded: (string[] | undefined)[] = new Array<string[] | undefined>(n).fill(undefined);
    let v = 0;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      const k = valueCounts[i]!;
      if (!(row >= 0 && row < n && k >= 1 && v + k <= values.length)) throw new IndexError(`string ${s.param}: bad rows`);
      const vs = values.slice(v, v + k);
      v += k;
      exact[row] = vs;
      folded[row] = vs.map(normalizeString);
    }
    if (v !== values.length) throw new IndexError(`string ${s.param}: values left over`);
    strings.set(s.param, exact);
    foldedStrings.set(s.param, folded);
  }

  const texts = new Array<string | undefined>(n);
  return new TypeTable(h.type, ids, texts, new Uint8Array(n), idIndex, tokens, systemTokens, patients, patientTokens, dates, strings, foldedStrings, {
    buf: ndjson,
    start,
    length,
    fromFile: true,
  });
}

/** Every row of a sidecar table must span one JSON object of the file's bytes. Throws IndexError. */
export function checkRowSpans(table: TypeTable, ndjson: Buffer): void {
  const { start, length } = table.spans!;
  for (let row = 0; row < table.size; row++) {
    const s = start[row]!;
    if (ndjson[s] !== 0x7b || ndjson[s + length[row]! - 1] !== 0x7d) throw new IndexError(`row ${row} does not span a JSON object in the file`);
  }
}

// ---- indexing a file from its bytes ----

const BUNDLE_LINE = /^\s*\{\s*"resourceType"\s*:\s*"Bundle"/;
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0b || c === 0x0c;

/**
 * Builds the sidecar of an NDJSON file from its bytes, given in order: every line is parsed and
 * indexed exactly as a load parses it (loadNdjson -> StoreBuilder.addText). Files a load would
 * treat otherwise (Bundles, a pretty-printed document, resources without an id, several types,
 * anything a load rejects) get no sidecar.
 */
export class NdjsonIndexer {
  private readonly hash = createHash("sha256");
  private table: TableBuilder | undefined;
  private readonly starts: number[] = [];
  private readonly lengths: number[] = [];
  private lineNo = 0;
  private carry = Buffer.alloc(0);
  /** File offset of carry[0]. */
  private base = 0;
  /** Why the file gets no sidecar, once known. */
  failed: string | undefined;

  push(chunk: Buffer): void {
    if (this.failed !== undefined) return;
    this.hash.update(chunk);
    const data = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    let a = 0;
    for (;;) {
      const nl = data.indexOf(0x0a, a);
      if (nl < 0) break;
      this.failed = this.line(data, a, nl);
      if (this.failed !== undefined) return;
      a = nl + 1;
    }
    this.carry = Buffer.from(data.subarray(a));
    this.base += a;
  }

  /** The sidecar, or why there is none. */
  finish(): { rows: number; sidecar: Buffer } | { skipped: string } {
    if (this.failed === undefined && this.carry.length) this.failed = this.line(this.carry, 0, this.carry.length);
    if (this.failed !== undefined) return { skipped: this.failed };
    if (!this.table) return { skipped: "no resources" };
    const { table, order } = this.table.finishOrdered();
    const n = table.size;
    const start = new Float64Array(n);
    const length = new Int32Array(n);
    for (let row = 0; row < n; row++) {
      const from = order ? order[row]! : row;
      start[row] = this.starts[from]!;
      length[row] = this.lengths[from]!;
    }
    const sidecar = encodeNdjsonIndex(table, { start, length }, { bytes: this.base + this.carry.length, sha256: this.hash.digest("hex") });
    return { rows: n, sidecar };
  }

  /** Index the line data[a, b) (data[0] lies at file offset `base`); a reason when it cannot be. */
  private line(data: Buffer, a: number, b: number): string | undefined {
    const lineNo = ++this.lineNo;
    while (a < b && isSpace(data[a]!)) a++;
    while (b > a && isSpace(data[b - 1]!)) b--;
    if (a === b) return undefined;
    const text = data.toString("utf8", a, b);
    if (text.trim() !== text) return `line ${lineNo}: unusual white space`;
    if (lineNo === 1 && text === "{") return "a pretty-printed document";
    if (text.startsWith('{"resourceType":"Bundle"') || BUNDLE_LINE.test(text)) return `line ${lineNo}: a Bundle`;
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return `line ${lineNo}: invalid JSON`;
    }
    if (r === null || typeof r !== "object" || Array.isArray(r)) return `line ${lineNo}: not a JSON object`;
    const type = r.resourceType;
    if (typeof type !== "string" || !/^[A-Z][A-Za-z]+$/.test(type)) return `line ${lineNo}: invalid resourceType`;
    this.table ??= new TableBuilder(type);
    if (type !== this.table.type) return `line ${lineNo}: a ${type} among ${this.table.type} resources`;
    const id = r.id;
    if (typeof id !== "string" || !ID_RE.test(id)) return `line ${lineNo}: no valid id`;
    if (this.table.idIndex.has(id)) return `line ${lineNo}: duplicate id ${id}`;
    this.table.add(id, "", r); // the sidecar holds no texts
    this.starts.push(this.base + a);
    this.lengths.push(b - a);
    return undefined;
  }
}
