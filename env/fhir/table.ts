// One resource type of the base store: resource text plus index keys, no parsed objects.
// Rows ("ordinals") are in ascending id order: load order, or numeric order when every id is numeric.
// A row's text is kept as loaded (compact) and replaced by its pretty entry rendering the first
// time it is served (or at build with `prerender`), so load time is not spent on rows never shown.
import type { DateRange } from "./dates.ts";
import { prettyJson } from "./pretty.ts";
import { normalizeString, searchParams, type DateParam, type ReferenceParam, type StringParam, type TokenParam } from "./search-params.ts";

type R = Record<string, unknown>;

export interface DateColumn {
  lo: Float64Array;
  hi: Float64Array;
  /** Rows with more than one range (rare) keep them all here. */
  extra: Map<number, DateRange[]>;
  /** Largest hi - lo of a single-range row (Infinity with open periods). */
  maxSpan: number;
  /** Date-sorted copies of index lists, made on first use: rows by ascending lo, and their lo and hi values. */
  sorted: WeakMap<Int32Array, { rows: Int32Array; los: Float64Array; his: Float64Array }>;
  /** Whole-table _sort orders, made on first use (see dateOrder). */
  orders: { ascending?: RowOrder; descending?: RowOrder };
}

/** A total order of a table's rows: `rank[row]` is its position, `rowAt[rank]` the row there. */
export interface RowOrder {
  rank: Int32Array;
  rowAt: Int32Array;
}

/**
 * The _sort order of every row by a date column: ascending by earliest start, or descending by
 * latest start; rows without a value last; ties in row (id) order. Sorting a hit list is then a
 * native integer sort of ranks. Built with one typed-array sort: each row's key is replaced by
 * its dense rank among distinct keys, so (key, row) packs exactly into one double.
 */
export function dateOrder(col: DateColumn, descending: boolean): RowOrder {
  const cached = descending ? col.orders.descending : col.orders.ascending;
  if (cached) return cached;
  const n = col.lo.length;
  const keys = new Float64Array(n);
  for (let row = 0; row < n; row++) {
    const extra = col.extra.get(row);
    keys[row] = extra ? (descending ? Math.max(...extra.map((r) => r.lo)) : Math.min(...extra.map((r) => r.lo))) : col.lo[row]!;
  }
  const distinct = Float64Array.from(keys).sort(); // NaN sorts last
  let d = 0;
  for (let i = 0; i < n; i++) if (i === 0 || !Object.is(distinct[i], distinct[d - 1])) distinct[d++] = distinct[i]!;
  const values = distinct.subarray(0, d);
  const packed = new Float64Array(n);
  for (let row = 0; row < n; row++) {
    const k = keys[row]!;
    let dense: number;
    if (k !== k) dense = d; // no value: last either way
    else {
      const at = lowerBound(values, k);
      dense = descending ? d - 1 - at : at;
    }
    packed[row] = dense * n + row;
  }
  packed.sort();
  const rank = new Int32Array(n);
  const rowAt = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const row = packed[i]! % n;
    rowAt[i] = row;
    rank[row] = i;
  }
  const order = { rank, rowAt };
  if (descending) col.orders.descending = order;
  else col.orders.ascending = order;
  return order;
}

/** The pretty indent of a resource inside a Bundle entry ("resource": {...}). */
export const ENTRY_INDENT = 4;

/** Token params that also get a per-patient index (patient + code / category searches). */
export const PATIENT_TOKEN_PARAMS = new Set(["code", "category"]);

export type Lists<T = number[]> = Map<string, T>;

/** The first index of sorted `a` whose value is not below `x` (a.length if none). */
export function lowerBound(a: Float64Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Row of an id: a Map from the parse path, or a search over sorted numeric ids (index sidecar). */
export interface IdIndex {
  get(id: string): number | undefined;
  has(id: string): boolean;
}

/** Ids that order numerically (and that created resources continue from). */
export const NUMERIC_ID = /^\d{1,15}$/;

/** The id index of a table whose ids are all numeric, in ascending numeric order (row order). */
export class NumericIdIndex implements IdIndex {
  constructor(
    private readonly ids: string[],
    /** Number(ids[row]), non-decreasing. */
    private readonly nums: Float64Array,
  ) {}

  get(id: string): number | undefined {
    if (!NUMERIC_ID.test(id)) return undefined;
    const x = Number(id);
    const nums = this.nums;
    // Equal numbers with other spellings ("7", "07") sit side by side.
    for (let row = lowerBound(nums, x); row < nums.length && nums[row] === x; row++) if (this.ids[row] === id) return row;
    return undefined;
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }
}

/** Where each row's compact text lies in the bytes of its NDJSON file (tables loaded through an index sidecar). */
export interface RowSource {
  buf: Buffer;
  /** Byte offset of each row's line. */
  start: Float64Array;
  /** Byte length of each row's line (without the newline). */
  length: Int32Array;
  /** True when `buf` is an NDJSON file's bytes (a table adopted from its index sidecar). */
  fromFile?: boolean;
}

/**
 * Row texts as one UTF-8 buffer: a table's texts are most of a population's memory, and as JS
 * strings they would fill hundreds of old-generation pages that every young-generation GC walks
 * (a server's pauses grow with them). Rows are decoded again on first use.
 */
export function packTexts(texts: readonly string[]): RowSource {
  const n = texts.length;
  const length = new Int32Array(n);
  let total = 0;
  for (let row = 0; row < n; row++) total += length[row] = Buffer.byteLength(texts[row]!);
  const buf = Buffer.allocUnsafe(total);
  const start = new Float64Array(n);
  let at = 0;
  for (let row = 0; row < n; row++) {
    start[row] = at;
    at += buf.write(texts[row]!, at, "utf8");
  }
  return { buf, start, length };
}

export class TypeTable {
  /** Rows whose text still lies only in `source.buf`; the buffer is dropped when none is left. */
  private unloaded: number;
  private buf: Buffer | undefined;

  constructor(
    readonly type: string,
    readonly ids: string[],
    /** Compact text until first served, then pretty JSON at ENTRY_INDENT (see `rendered`). With a
     *  `source`, a row's entry stays empty until its text is first used. */
    private readonly texts: (string | undefined)[],
    private readonly rendered: Uint8Array,
    readonly idIndex: IdIndex,
    /** token param -> code -> rows (any system). */
    readonly tokens: Map<string, Lists<Int32Array>>,
    /** token param -> system -> code -> rows. */
    readonly systemTokens: Map<string, Map<string, Lists<Int32Array>>>,
    /** "Patient/id" -> rows whose patient is that. */
    readonly patients: Lists<Int32Array>,
    /** "Patient/id" -> token param -> code -> rows. */
    readonly patientTokens: Map<string, Map<string, Lists<Int32Array>>>,
    readonly dates: Map<string, DateColumn>,
    /** string param -> per row: the values as written (for :exact). */
    readonly strings: Map<string, (string[] | undefined)[]>,
    /** string param -> per row: the values normalized for matching (accents and case folded). */
    readonly foldedStrings: Map<string, (string[] | undefined)[]>,
    /** The bytes the rows' texts are taken from on first use (texts start out empty): the NDJSON file, or `packTexts`. */
    source?: RowSource,
  ) {
    this.buf = source?.buf;
    this.spans = source ? { start: source.start, length: source.length } : undefined;
    this.fromFile = source?.fromFile === true;
    this.unloaded = source ? ids.length : 0;
  }

  /** Where the rows' texts lie in `source.buf`: the NDJSON file for a table loaded through an index
   *  sidecar, else the table's own packed texts (in row order). */
  readonly spans: { start: Float64Array; length: Int32Array } | undefined;
  /** Adopted from an index sidecar: `spans` are positions in the NDJSON file. */
  readonly fromFile: boolean;

  get size(): number {
    return this.ids.length;
  }

  /** The row's compact text, decoded from the source bytes. */
  private sourceText(row: number): string {
    const start = this.spans!.start[row]!;
    return this.buf!.toString("utf8", start, start + this.spans!.length[row]!);
  }

  private load(row: number): string {
    const text = this.sourceText(row);
    this.texts[row] = text;
    if (--this.unloaded === 0) this.buf = undefined; // every row has its own text now
    return text;
  }

  /** Pretty text at ENTRY_INDENT, rendered once. */
  entryText(row: number): string {
    if (this.rendered[row] === 0) {
      this.texts[row] = prettyJson(this.text(row), ENTRY_INDENT);
      this.rendered[row] = 1;
    }
    return this.texts[row]!;
  }

  /** The row's JSON text (compact or pretty). */
  text(row: number): string {
    return this.texts[row] ?? this.load(row);
  }

  /** The row's text as loaded or rendered, without keeping a copy of a text still in `source` (export). */
  peekText(row: number): string {
    return this.texts[row] ?? this.sourceText(row);
  }

  parse(row: number): R {
    return JSON.parse(this.text(row)) as R;
  }

  prerender(): void {
    for (let row = 0; row < this.texts.length; row++) this.entryText(row);
  }
}

function push(map: Lists, key: string, row: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [row]);
  else if (list[list.length - 1] !== row) list.push(row);
}
export function sub<V>(map: Map<string, V>, key: string, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) map.set(key, (v = make()));
  return v;
}

/** Accumulates rows of one type in load order; `finish` sorts and packs them. */
export class TableBuilder {
  /**
   * A builder holding the rows of a finished table as if they had been added one by one from its
   * NDJSON file (in file order when the table was adopted from one, else in row order): how rows added
   * after an adopted index-sidecar table join it. Re-parses every row (rare path).
   */
  static fromTable(table: TypeTable): TableBuilder {
    const b = new TableBuilder(table.type);
    const n = table.size;
    let order: ArrayLike<number> = Array.from({ length: n }, (_, i) => i);
    if (table.fromFile) {
      const start = table.spans!.start;
      order = Array.from(order).sort((x, y) => start[x]! - start[y]!);
    }
    for (let i = 0; i < n; i++) {
      const row = order[i]!;
      const text = table.text(row);
      b.add(table.ids[row]!, text, JSON.parse(text) as R);
    }
    return b;
  }

  private ids: string[] = [];
  private texts: string[] = [];
  readonly idIndex = new Map<string, number>();
  private tokens = new Map<string, Lists>();
  private systemTokens = new Map<string, Map<string, Lists>>();
  private patients: Lists = new Map();
  private patientTokens = new Map<string, Map<string, Lists>>();
  private dateLo = new Map<string, number[]>();
  private dateHi = new Map<string, number[]>();
  private dateExtra = new Map<string, Map<number, DateRange[]>>();
  private strings = new Map<string, (string[] | undefined)[]>();
  private foldedStrings = new Map<string, (string[] | undefined)[]>();
  private readonly tokenDefs: TokenParam[] = [];
  private readonly dateDefs: DateParam[] = [];
  private readonly stringDefs: StringParam[] = [];
  private readonly patientDef: ReferenceParam | undefined;

  constructor(readonly type: string) {
    for (const def of searchParams(type).values()) {
      if (def.type === "token" && def.name !== "_id") this.tokenDefs.push(def);
      else if (def.type === "date") this.dateDefs.push(def);
      else if (def.type === "string") this.stringDefs.push(def);
    }
    const p = searchParams(type).get("patient");
    this.patientDef = p?.type === "reference" ? p : undefined;
    for (const d of this.dateDefs) {
      this.dateLo.set(d.name, []);
      this.dateHi.set(d.name, []);
    }
  }

  get size(): number {
    return this.ids.length;
  }

  /** Add one resource: `text` is its JSON text, `r` the same resource parsed. (What this derives is
   *  what index sidecars store: a change here needs a bump of INDEX_VERSION in ndjson-index.ts.) */
  add(id: string, text: string, r: R): void {
    const row = this.ids.length;
    this.ids.push(id);
    this.idIndex.set(id, row);
    this.texts.push(text);
    const patients = this.patientDef ? this.patientDef.refs(r) : [];
    for (const p of patients) push(this.patients, p, row);
    for (const def of this.tokenDefs) {
      const tokens = def.tokens(r);
      if (tokens.length === 0) continue;
      const byCode = sub(this.tokens, def.name, () => new Map());
      const bySystem = sub(this.systemTokens, def.name, () => new Map<string, Lists>());
      for (const t of tokens) {
        push(byCode, t.code, row);
        if (t.system !== undefined) push(sub(bySystem, t.system, () => new Map()), t.code, row);
      }
      if (patients.length && PATIENT_TOKEN_PARAMS.has(def.name)) {
        for (const p of patients) {
          const m = sub(sub(this.patientTokens, p, () => new Map<string, Lists>()), def.name, () => new Map());
          for (const t of tokens) push(m, t.code, row);
        }
      }
    }
    for (const def of this.dateDefs) {
      const ranges = def.ranges(r);
      this.dateLo.get(def.name)!.push(ranges.length ? ranges[0]!.lo : NaN);
      this.dateHi.get(def.name)!.push(ranges.length ? ranges[0]!.hi : NaN);
      if (ranges.length > 1) sub(this.dateExtra, def.name, () => new Map()).set(row, ranges);
    }
    for (const def of this.stringDefs) {
      const values = def.strings(r);
      sub(this.strings, def.name, () => [])[row] = values.length ? values : undefined;
      sub(this.foldedStrings, def.name, () => [])[row] = values.length ? values.map(normalizeString) : undefined;
    }
  }

  finish(): TypeTable {
    return this.finishOrdered().table;
  }

  /** The finished table, and when rows were reordered, `order[newRow]` = the row's load position. */
  finishOrdered(): { table: TypeTable; order: number[] | undefined } {
    const n = this.ids.length;
    // Rows must be in ascending id order: numerically when every id is numeric.
    let perm: Int32Array | undefined; // old row -> new row
    let order: number[] | undefined;
    if (this.ids.every((id) => NUMERIC_ID.test(id))) {
      const nums = this.ids.map(Number);
      let sorted = true;
      for (let i = 1; i < n && sorted; i++) if (nums[i]! < nums[i - 1]!) sorted = false;
      if (!sorted) {
        order = Array.from({ length: n }, (_, i) => i).sort((a, b) => nums[a]! - nums[b]!);
        perm = new Int32Array(n);
        order.forEach((oldRow, newRow) => (perm![oldRow] = newRow));
        const o = order;
        this.ids = o.map((i) => this.ids[i]!);
        this.texts = o.map((i) => this.texts[i]!);
        this.idIndex.clear();
        this.ids.forEach((id, row) => this.idIndex.set(id, row));
        for (const m of [this.strings, this.foldedStrings]) for (const [name, col] of m) m.set(name, o.map((i) => col[i]));
      }
    }
    const pack = (rows: number[]): Int32Array => {
      const a = Int32Array.from(rows);
      if (perm) {
        for (let i = 0; i < a.length; i++) a[i] = perm[a[i]!]!;
        a.sort();
      }
      return a;
    };
    const packLists = (m: Lists): Lists<Int32Array> => {
      const out = new Map<string, Int32Array>();
      for (const [k, rows] of m) out.set(k, pack(rows));
      return out;
    };
    const packNested = (m: Map<string, Lists>): Map<string, Lists<Int32Array>> => {
      const out = new Map<string, Lists<Int32Array>>();
      for (const [k, v] of m) out.set(k, packLists(v));
      return out;
    };
    const tokens = packNested(this.tokens);
    const systemTokens = new Map<string, Map<string, Lists<Int32Array>>>();
    for (const [k, v] of this.systemTokens) systemTokens.set(k, packNested(v));
    const patientTokens = new Map<string, Map<string, Lists<Int32Array>>>();
    for (const [k, v] of this.patientTokens) patientTokens.set(k, packNested(v));
    const dates = new Map<string, DateColumn>();
    for (const [name, loRows] of this.dateLo) {
      const hiRows = this.dateHi.get(name)!;
      const lo = new Float64Array(n);
      const hi = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const to = perm ? perm[i]! : i;
        lo[to] = loRows[i]!;
        hi[to] = hiRows[i]!;
      }
      const extra = new Map<number, DateRange[]>();
      for (const [row, ranges] of this.dateExtra.get(name) ?? []) extra.set(perm ? perm[row]! : row, ranges);
      let maxSpan = 0;
      for (let i = 0; i < n; i++) if (hi[i]! - lo[i]! > maxSpan) maxSpan = hi[i]! - lo[i]!;
      dates.set(name, { lo, hi, extra, maxSpan, sorted: new WeakMap(), orders: {} });
    }
    for (const col of this.strings.values()) col.length = n;
    for (const col of this.foldedStrings.values()) col.length = n;
    const source = packTexts(this.texts);
    this.texts = [];
    const table = new TypeTable(
      this.type,
      this.ids,
      new Array<string | undefined>(n),
      new Uint8Array(n),
      this.idIndex,
      tokens,
      systemTokens,
      packLists(this.patients),
      patientTokens,
      dates,
      this.strings,
      this.foldedStrings,
      source,
    );
    return { table, order };
  }
}
