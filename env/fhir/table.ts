// One resource type of the base store: pre-rendered text plus the index keys, no parsed objects.
// Rows ("ordinals") are in ascending id order: load order, or numeric order when every id is numeric.
import type { DateRange } from "./dates.ts";
import { prettyJson } from "./pretty.ts";
import { searchParams, type SearchParamDef, type Token } from "./search-params.ts";

type R = Record<string, unknown>;

/** Index key of a token for each query form: code, system|code, system|, |code. */
export function tokenKeys(t: Token): string[] {
  if (t.system === undefined) return [`c\0${t.code}`, `n\0${t.code}`];
  return [`c\0${t.code}`, `s\0${t.system}\0${t.code}`, `S\0${t.system}`];
}
export function tokenQueryKey(system: string | undefined, code: string | undefined): string | undefined {
  if (code === undefined) return system ? `S\0${system}` : undefined;
  if (system === undefined) return `c\0${code}`;
  if (system === "") return `n\0${code}`;
  return `s\0${system}\0${code}`;
}

export interface DateColumn {
  lo: Float64Array;
  hi: Float64Array;
  /** Rows with more than one range (rare) keep them all here. */
  extra: Map<number, DateRange[]>;
}

/** The pretty indent of a resource inside a Bundle entry ("resource": {...}). */
export const ENTRY_INDENT = 4;

export const PATIENT_CODE_PARAMS = ["patient", "code"] as const;

export class TypeTable {
  readonly idIndex = new Map<string, number>();
  constructor(
    readonly type: string,
    readonly ids: string[],
    /** Pretty JSON at ENTRY_INDENT. */
    readonly texts: string[],
    /** param name -> key -> ordinals (ascending). */
    readonly index: Map<string, Map<string, Int32Array>>,
    /** `${patientRef}\0${codeKey}` -> ordinals (ascending). */
    readonly patientCode: Map<string, Int32Array>,
    readonly dates: Map<string, DateColumn>,
    readonly strings: Map<string, (string[] | undefined)[]>,
  ) {
    for (let i = 0; i < ids.length; i++) this.idIndex.set(ids[i]!, i);
  }
  get size(): number {
    return this.ids.length;
  }
  parse(ord: number): R {
    return JSON.parse(this.texts[ord]!) as R;
  }
}

/** Accumulates rows of one type in load order; `finish` sorts and packs them. */
export class TableBuilder {
  private ids: string[] = [];
  private texts: string[] = [];
  private index = new Map<string, Map<string, number[]>>();
  private patientCode = new Map<string, number[]>();
  private dateLo = new Map<string, number[]>();
  private dateHi = new Map<string, number[]>();
  private dateExtra = new Map<string, Map<number, DateRange[]>>();
  private strings = new Map<string, (string[] | undefined)[]>();
  private readonly defs: SearchParamDef[];
  readonly seen = new Set<string>();

  constructor(readonly type: string) {
    this.defs = [...searchParams(type).values()];
  }

  get size(): number {
    return this.ids.length;
  }

  private push(map: Map<string, number[]>, key: string, row: number): void {
    const list = map.get(key);
    if (list === undefined) map.set(key, [row]);
    else if (list[list.length - 1] !== row) list.push(row);
  }

  /** Add one resource: `compact` is its JSON text, `r` the same resource parsed. */
  add(id: string, compact: string, r: R): void {
    const row = this.ids.length;
    this.ids.push(id);
    this.seen.add(id);
    this.texts.push(prettyJson(compact, ENTRY_INDENT));
    let patients: string[] | undefined;
    let codeKeys: string[] | undefined;
    for (const def of this.defs) {
      switch (def.type) {
        case "token": {
          if (def.name === "_id") break;
          const tokens = def.tokens(r);
          if (tokens.length === 0) break;
          let m = this.index.get(def.name);
          if (!m) this.index.set(def.name, (m = new Map()));
          const keys = tokens.flatMap(tokenKeys);
          for (const k of keys) this.push(m, k, row);
          if (def.name === "code") codeKeys = keys;
          break;
        }
        case "reference": {
          const refs = def.refs(r);
          if (refs.length === 0) break;
          let m = this.index.get(def.name);
          if (!m) this.index.set(def.name, (m = new Map()));
          for (const ref of refs) this.push(m, ref, row);
          if (def.name === "patient") patients = refs;
          break;
        }
        case "date": {
          const ranges = def.ranges(r);
          let lo = this.dateLo.get(def.name);
          let hi = this.dateHi.get(def.name);
          if (!lo || !hi) {
            this.dateLo.set(def.name, (lo = []));
            this.dateHi.set(def.name, (hi = []));
          }
          while (lo.length < row) lo.push(NaN), hi.push(NaN);
          lo.push(ranges.length ? ranges[0]!.lo : NaN);
          hi.push(ranges.length ? ranges[0]!.hi : NaN);
          if (ranges.length > 1) {
            let extra = this.dateExtra.get(def.name);
            if (!extra) this.dateExtra.set(def.name, (extra = new Map()));
            extra.set(row, ranges);
          }
          break;
        }
        case "string": {
          const values = def.strings(r);
          let col = this.strings.get(def.name);
          if (!col) this.strings.set(def.name, (col = []));
          col[row] = values.length ? values : undefined;
          break;
        }
        case "quantity":
          break; // matched by parsing candidates on demand
      }
    }
    if (patients && codeKeys) for (const p of patients) for (const k of codeKeys) this.push(this.patientCode, `${p}\0${k}`, row);
  }

  finish(): TypeTable {
    const n = this.ids.length;
    // Rows must be in ascending id order: numerically when every id is numeric.
    let perm: Int32Array | undefined; // old row -> new row
    if (this.ids.every((id) => /^\d{1,15}$/.test(id))) {
      const nums = this.ids.map(Number);
      let sorted = true;
      for (let i = 1; i < n && sorted; i++) if (nums[i]! < nums[i - 1]!) sorted = false;
      if (!sorted) {
        const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => nums[a]! - nums[b]!);
        perm = new Int32Array(n);
        order.forEach((oldRow, newRow) => (perm![oldRow] = newRow));
        this.ids = order.map((o) => this.ids[o]!);
        this.texts = order.map((o) => this.texts[o]!);
        for (const [name, col] of this.strings) this.strings.set(name, order.map((o) => col[o]));
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
    const index = new Map<string, Map<string, Int32Array>>();
    for (const [name, m] of this.index) {
      const packed = new Map<string, Int32Array>();
      for (const [k, rows] of m) packed.set(k, pack(rows));
      index.set(name, packed);
    }
    const patientCode = new Map<string, Int32Array>();
    for (const [k, rows] of this.patientCode) patientCode.set(k, pack(rows));
    const dates = new Map<string, DateColumn>();
    for (const [name, loRows] of this.dateLo) {
      const hiRows = this.dateHi.get(name)!;
      while (loRows.length < n) loRows.push(NaN), hiRows.push(NaN);
      const lo = new Float64Array(n);
      const hi = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const to = perm ? perm[i]! : i;
        lo[to] = loRows[i]!;
        hi[to] = hiRows[i]!;
      }
      const extra = new Map<number, DateRange[]>();
      for (const [row, ranges] of this.dateExtra.get(name) ?? []) extra.set(perm ? perm[row]! : row, ranges);
      dates.set(name, { lo, hi, extra });
    }
    for (const col of this.strings.values()) col.length = n;
    return new TypeTable(this.type, this.ids, this.texts, index, patientCode, dates, this.strings);
  }
}
