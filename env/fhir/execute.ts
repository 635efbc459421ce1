// Running parsed criteria against a base TypeTable: the smallest index list drives, the other
// criteria filter (index membership by binary search, date/string columns, then parse-on-demand).
import { matchDate, type DateRange } from "./dates.ts";
import { matchesCriterion, stringMatches } from "./matcher.ts";
import type { Criterion, TokenValue } from "./query.ts";
import { tokenQueryKey, type TypeTable } from "./table.ts";

const EMPTY = new Int32Array(0);

/** A set of rows given as the union of ascending lists. */
type RowSet = Int32Array[];

function setSize(s: RowSet): number {
  let n = 0;
  for (const l of s) n += l.length;
  return n;
}

function contains(list: Int32Array, row: number): boolean {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = list[mid]!;
    if (v === row) return true;
    if (v < row) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

function setHas(s: RowSet, row: number): boolean {
  for (const l of s) if (contains(l, row)) return true;
  return false;
}

/** Ascending, de-duplicated rows of a set. */
function materialize(s: RowSet): ArrayLike<number> {
  if (s.length === 0) return EMPTY;
  if (s.length === 1) return s[0]!;
  const out: number[] = [];
  for (const l of s) for (let i = 0; i < l.length; i++) out.push(l[i]!);
  out.sort((a, b) => a - b);
  let w = 0;
  for (let i = 0; i < out.length; i++) if (i === 0 || out[i] !== out[i - 1]) out[w++] = out[i]!;
  out.length = w;
  return out;
}

function tokenKeysOf(values: TokenValue[]): string[] | undefined {
  const keys: string[] = [];
  for (const v of values) {
    const k = tokenQueryKey(v.system, v.code);
    if (k === undefined) return undefined;
    keys.push(k);
  }
  return keys;
}

/** The rows an indexable criterion selects, or undefined when it has no index. */
function indexed(table: TypeTable, c: Criterion): RowSet | undefined {
  if (c.modifier !== "") return undefined;
  if (c.def.type === "reference") {
    const m = table.index.get(c.def.name);
    return (c.values as string[]).map((ref) => m?.get(ref) ?? EMPTY);
  }
  if (c.def.type === "token") {
    const values = c.values as TokenValue[];
    if (c.def.name === "_id") {
      if (values.some((v) => v.system !== undefined)) return undefined;
      const rows = values.map((v) => table.idIndex.get(v.code ?? "")).filter((r): r is number => r !== undefined);
      return [Int32Array.from(new Set(rows)).sort()];
    }
    const keys = tokenKeysOf(values);
    if (!keys) return undefined;
    const m = table.index.get(c.def.name);
    return keys.map((k) => m?.get(k) ?? EMPTY);
  }
  return undefined;
}

function dateFilter(table: TypeTable, c: Criterion): ((row: number) => boolean) | undefined {
  if (c.def.type !== "date" || c.modifier !== "") return undefined;
  const col = table.dates.get(c.def.name);
  const values = c.values as { prefix: Parameters<typeof matchDate>[0]; range: DateRange }[];
  if (!col) return () => false;
  const target: DateRange = { lo: 0, hi: 0 };
  return (row) => {
    const extra = col.extra.get(row);
    const ranges = extra ?? (Number.isNaN(col.lo[row]!) ? [] : [{ lo: col.lo[row]!, hi: col.hi[row]! }]);
    for (const r of ranges) {
      target.lo = r.lo;
      target.hi = r.hi;
      for (const v of values) if (matchDate(v.prefix, target, v.range)) return true;
    }
    return false;
  };
}

function stringFilter(table: TypeTable, c: Criterion): ((row: number) => boolean) | undefined {
  if (c.def.type !== "string" || c.modifier === "missing") return undefined;
  const col = table.strings.get(c.def.name);
  const mod = c.modifier as "" | "exact" | "contains";
  const values = c.values as string[];
  return (row) => {
    const strings = col?.[row];
    if (!strings) return false;
    for (const s of strings) for (const q of values) if (stringMatches(s, mod, q)) return true;
    return false;
  };
}

/** Ascending rows of `table` matching every criterion. */
export function searchTable(table: TypeTable, criteria: Criterion[]): number[] {
  const sets: RowSet[] = [];
  const filters: ((row: number) => boolean)[] = [];
  const parsed: Criterion[] = [];
  let rest = criteria;

  // patient + code: one composite list per (patient, code) pair instead of intersecting two big lists.
  const patient = criteria.find((c) => c.def.name === "patient" && c.modifier === "" && c.values.length === 1);
  const code = criteria.find((c) => c.def.name === "code" && c.modifier === "");
  const codeKeys = code && tokenKeysOf(code.values as TokenValue[]);
  if (patient && code && codeKeys && table.patientCode.size > 0) {
    const p = patient.values[0] as string;
    sets.push(codeKeys.map((k) => table.patientCode.get(`${p}\0${k}`) ?? EMPTY));
    rest = criteria.filter((c) => c !== patient && c !== code);
  }

  for (const c of rest) {
    const s = indexed(table, c);
    if (s) {
      sets.push(s);
      continue;
    }
    const f = dateFilter(table, c) ?? stringFilter(table, c);
    if (f) filters.push(f);
    else parsed.push(c);
  }

  let driver: ArrayLike<number> | undefined;
  let driverIndex = -1;
  for (let i = 0; i < sets.length; i++) {
    if (driverIndex < 0 || setSize(sets[i]!) < setSize(sets[driverIndex]!)) driverIndex = i;
  }
  if (driverIndex >= 0) driver = materialize(sets[driverIndex]!);
  const others = sets.filter((_, i) => i !== driverIndex);

  const out: number[] = [];
  const n = driver ? driver.length : table.size;
  rows: for (let i = 0; i < n; i++) {
    const row = driver ? driver[i]! : i;
    for (const s of others) if (!setHas(s, row)) continue rows;
    for (const f of filters) if (!f(row)) continue rows;
    if (parsed.length) {
      const r = table.parse(row);
      for (const c of parsed) if (!matchesCriterion(r, c)) continue rows;
    }
    out.push(row);
  }
  return out;
}
