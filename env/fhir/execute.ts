// Running parsed criteria against a base TypeTable: the smallest index list drives, the other
// criteria filter (index membership by binary search, date/string columns, then parse-on-demand).
import { matchDate, type DatePrefix, type DateRange } from "./dates.ts";
import { foldedStringMatches, matchesCriterion } from "./matcher.ts";
import type { Criterion, TokenValue } from "./query.ts";
import { describe, PARSE_COST, SLICE, tooCostly, type Scan } from "./scan.ts";
import { lowerBound, PATIENT_TOKEN_PARAMS, type TypeTable } from "./table.ts";

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

/** Is this a patient criterion answerable from the patient index? */
function isPatientCriterion(c: Criterion): boolean {
  if (c.def.type !== "reference" || c.modifier !== "") return false;
  if (c.def.name === "patient") return true;
  // subject=Patient/X selects the same rows as patient=Patient/X
  return c.def.name === "subject" && (c.values as string[]).every((v) => v.startsWith("Patient/"));
}

/** The one patient ("Patient/id") every match must belong to, when the criteria name exactly one. */
export function singlePatient(criteria: Criterion[]): string | undefined {
  for (const c of criteria) if (isPatientCriterion(c) && c.values.length === 1) return c.values[0] as string;
  return undefined;
}

/** Every row of any list in `lists`, as one ascending list. */
function union(lists: Iterable<Int32Array>): Int32Array {
  const all = [...lists];
  if (all.length === 1) return all[0]!;
  return Int32Array.from(materialize(all));
}

/**
 * Per value, the index list of a token criterion, and whether the lists select exactly its rows:
 * "|code" is answered by the code's list (rows with the code under any system, then filtered) and
 * "system|" by the union of the system's codes.
 */
function tokenLists(table: TypeTable, c: Criterion): { set: RowSet; exact: boolean } {
  const out: Int32Array[] = [];
  let exact = true;
  for (const v of c.values as TokenValue[]) {
    let list: Int32Array | undefined;
    if (v.code === undefined) list = union(table.systemTokens.get(c.def.name)?.get(v.system!)?.values() ?? []);
    else if (v.system === "" || v.system === undefined) list = table.tokens.get(c.def.name)?.get(v.code);
    else list = table.systemTokens.get(c.def.name)?.get(v.system)?.get(v.code);
    if (v.system === "") exact = false;
    out.push(list ?? EMPTY);
  }
  return { set: out, exact };
}

/** The rows an indexable criterion selects (`exact` false: a superset still to filter), or undefined when it has no index. */
function indexed(table: TypeTable, c: Criterion): { set: RowSet; exact: boolean } | undefined {
  if (c.modifier !== "") return undefined;
  if (isPatientCriterion(c)) return { set: (c.values as string[]).map((ref) => table.patients.get(ref) ?? EMPTY), exact: true };
  if (c.def.type === "token") {
    const values = c.values as TokenValue[];
    if (c.def.name === "_id") {
      if (values.some((v) => v.system !== undefined)) return undefined;
      const rows = values.map((v) => table.idIndex.get(v.code ?? "")).filter((r): r is number => r !== undefined);
      return { set: [Int32Array.from(new Set(rows)).sort()], exact: true };
    }
    return tokenLists(table, c);
  }
  return undefined;
}

function dateFilter(table: TypeTable, c: Criterion): ((row: number) => boolean) | undefined {
  if (c.def.type !== "date" || c.modifier !== "") return undefined;
  const col = table.dates.get(c.def.name);
  const values = c.values as { prefix: Parameters<typeof matchDate>[0]; range: DateRange }[];
  if (!col) return () => false;
  const { lo, hi, extra } = col;
  const target: DateRange = { lo: 0, hi: 0 };
  const hasExtra = extra.size > 0;
  return (row) => {
    if (hasExtra) {
      const ranges = extra.get(row);
      if (ranges) return ranges.some((r) => values.some((v) => matchDate(v.prefix, r, v.range)));
    }
    const l = lo[row]!;
    if (l !== l) return false; // NaN: no value
    target.lo = l;
    target.hi = hi[row]!;
    for (let i = 0; i < values.length; i++) if (matchDate(values[i]!.prefix, target, values[i]!.range)) return true;
    return false;
  };
}

function stringFilter(table: TypeTable, c: Criterion): ((row: number) => boolean) | undefined {
  if (c.def.type !== "string" || c.modifier === "missing") return undefined;
  const mod = c.modifier as "" | "exact" | "contains";
  const col = (mod === "exact" ? table.strings : table.foldedStrings).get(c.def.name);
  const values = c.values as string[];
  return (row) => {
    const strings = col?.[row];
    if (!strings) return false;
    for (const s of strings) for (const q of values) if (foldedStringMatches(s, mod, q)) return true;
    return false;
  };
}

/** The lo-value window that rows matching `prefix` against `search` must fall in (hi - lo <= span). */
function loWindow(prefix: string, search: DateRange, span: number): [number, number] {
  switch (prefix) {
    case "eq":
      return [search.lo, search.hi];
    case "ge":
      return [search.lo - span, Infinity];
    case "gt":
      return [search.hi - span, Infinity];
    case "sa":
      return [search.hi, Infinity];
    case "le":
      return [-Infinity, search.hi];
    case "lt":
      return [-Infinity, search.lo];
    case "eb":
      return [-Infinity, search.lo];
    default:
      return [-Infinity, Infinity];
  }
}

/**
 * With a big driver list and single-valued date criteria, only rows whose date falls in the
 * criteria's window can match: find them by binary search in a date-sorted copy of the list,
 * and test those criteria there on contiguous values (the table's columns are big and rows are
 * scattered). Returns the matching rows in ascending row order and the criteria it settled,
 * or undefined when this does not apply.
 */
function dateWindow(table: TypeTable, list: Int32Array, criteria: Criterion[]): { rows: Int32Array; settled: Criterion[] } | undefined {
  if (list.length < 64) return undefined;
  for (const c of criteria) {
    if (c.def.type !== "date" || c.modifier !== "" || c.values.length !== 1) continue;
    const col = table.dates.get(c.def.name);
    if (!col || col.extra.size > 0 || !Number.isFinite(col.maxSpan)) continue;
    let from = -Infinity;
    let to = Infinity;
    const settled: Criterion[] = [];
    for (const d of criteria) {
      if (d.def !== c.def || d.modifier !== "" || d.values.length !== 1) continue;
      const v = d.values[0] as { prefix: string; range: DateRange };
      const [a, b] = loWindow(v.prefix, v.range, col.maxSpan);
      from = Math.max(from, a);
      to = Math.min(to, b);
      settled.push(d);
    }
    if (from === -Infinity && to === Infinity) continue;
    let sorted = col.sorted.get(list);
    if (!sorted) {
      const rows = Array.from(list).filter((r) => col.lo[r] === col.lo[r]); // rows without a date never match
      rows.sort((x, y) => col.lo[x]! - col.lo[y]!);
      sorted = { rows: Int32Array.from(rows), los: Float64Array.from(rows, (r) => col.lo[r]!), his: Float64Array.from(rows, (r) => col.hi[r]!) };
      col.sorted.set(list, sorted);
    }
    const start = lowerBound(sorted.los, from);
    const end = to === Infinity ? sorted.los.length : lowerBound(sorted.los, to + 0.5);
    // A wide window saves little over filtering the whole list, and costs a sort.
    if (end - start > list.length / 2) return undefined;
    const values = settled.map((d) => (d.values as { prefix: DatePrefix; range: DateRange }[])[0]!);
    const out = new Int32Array(Math.max(0, end - start));
    const target: DateRange = { lo: 0, hi: 0 };
    let n = 0;
    rows: for (let i = start; i < end; i++) {
      target.lo = sorted.los[i]!;
      target.hi = sorted.his[i]!;
      for (let k = 0; k < values.length; k++) if (!matchDate(values[k]!.prefix, target, values[k]!.range)) continue rows;
      out[n++] = sorted.rows[i]!;
    }
    return { rows: out.subarray(0, n).sort(), settled };
  }
  return undefined;
}

/**
 * Ascending rows of `table` matching every criterion. Yields between slices of work; throws a
 * too-costly FhirError once more than `limit` rows had to be parsed (scan.ts).
 */
export function* scanTable(table: TypeTable, criteria: Criterion[], limit: number): Scan<number[]> {
  const sets: RowSet[] = [];
  const filters: ((row: number) => boolean)[] = [];
  const parsed: Criterion[] = [];
  let rest = criteria;

  // patient + code (or category): one per-patient list instead of intersecting two big lists.
  const patient = criteria.find((c) => isPatientCriterion(c) && c.values.length === 1);
  const perPatient = patient && table.patientTokens.get(patient.values[0] as string);
  const token = patient && criteria.find((c) => c.def.type === "token" && c.modifier === "" && PATIENT_TOKEN_PARAMS.has(c.def.name));
  if (patient && token) {
    const values = token.values as TokenValue[];
    if (values.every((v) => v.code !== undefined && v.system !== "")) {
      const byCode = perPatient?.get(token.def.name);
      sets.push(values.map((v) => byCode?.get(v.code!) ?? EMPTY));
      // Codes with a system still need the system check: keep the criterion as a filter then.
      rest = criteria.filter((c) => c !== patient && (c !== token || values.some((v) => v.system !== undefined)));
    }
  }

  const unindexed: Criterion[] = [];
  for (const c of rest) {
    const s = indexed(table, c);
    if (s) sets.push(s.set);
    if (!s?.exact) unindexed.push(c);
  }

  let driver: ArrayLike<number> | undefined;
  let driverIndex = -1;
  for (let i = 0; i < sets.length; i++) {
    if (driverIndex < 0 || setSize(sets[i]!) < setSize(sets[driverIndex]!)) driverIndex = i;
  }
  let settled: Criterion[] = [];
  if (driverIndex >= 0) {
    const set = sets[driverIndex]!;
    const window = set.length === 1 ? dateWindow(table, set[0]!, unindexed) : undefined;
    if (window) ({ rows: driver, settled } = window);
    else driver = materialize(set);
  }
  const others = sets.filter((_, i) => i !== driverIndex);
  for (const c of unindexed) {
    if (settled.includes(c)) continue;
    const f = dateFilter(table, c) ?? stringFilter(table, c);
    if (f) filters.push(f);
    else parsed.push(c);
  }

  const out: number[] = [];
  const n = driver ? driver.length : table.size;
  let work = 0;
  let reads = 0;
  rows: for (let i = 0; i < n; i++) {
    if (++work >= SLICE) {
      work = 0;
      yield;
    }
    const row = driver ? driver[i]! : i;
    for (const s of others) if (!setHas(s, row)) continue rows;
    for (const f of filters) if (!f(row)) continue rows;
    if (parsed.length) {
      if (++reads > limit) throw tooCostly(table.type, limit, parsed.map(describe));
      work += PARSE_COST;
      const r = table.parse(row);
      for (const c of parsed) if (!matchesCriterion(r, c)) continue rows;
    }
    out.push(row);
  }
  return out;
}
