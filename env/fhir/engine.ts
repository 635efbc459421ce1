// What the store and an overlay share with the service: search hits (base rows or overlay
// records), their rendering, and ordering. Internal to env/fhir.
import { sortKeyOf } from "./matcher.ts";
import { prettyJson } from "./pretty.ts";
import type { ParsedSearch, SortKey } from "./query.ts";
import { PARSE_COST, runSync, SLICE, tooCostly, type Scan } from "./scan.ts";
import { ENTRY_INDENT, dateOrder, type RowOrder, type TypeTable } from "./table.ts";

type R = Record<string, unknown>;

/** A resource written in an overlay (or a tombstone for a deletion). */
export interface OverlayRecord {
  type: string;
  id: string;
  /** Position in id order: the base row for a base id, beyond every base row for a created one. */
  order: number;
  version: number;
  deleted: boolean;
  /** The resource with Decimal number lexemes kept. */
  resource: R;
  /** Compact JSON text. */
  text: string;
  /** The patients ("Patient/id") the resource belongs to, for the overlay's patient index. */
  patients: string[];
  pretty?: string;
}

/** A base row number or an overlay record. */
export type Hit = number | OverlayRecord;

export interface Engine {
  table(type: string): TypeTable | undefined;
  /** Every match of a parsed search, sorted as requested (id order without _sort). */
  findHits(parsed: ParsedSearch): Hit[];
  /** Every match of a parsed search in id order (sort them with sortHits / topHits), slice by slice. */
  scanHits(parsed: ParsedSearch): Scan<Hit[]>;
  /** Resources one search may read without an index (scan.ts). */
  readonly scanLimit: number;
  /** The current version of a resource; "deleted" when this overlay deleted it. */
  lookup(type: string, id: string): Hit | "deleted" | undefined;
  readonly maxCount: number;
}

export const CREATED_ORDER_BASE = 2 ** 40;

export const ID_RE = /^[A-Za-z0-9\-.]{1,64}$/;

export function orderOf(h: Hit): number {
  return typeof h === "number" ? h : h.order;
}

export function hitId(table: TypeTable | undefined, h: Hit): string {
  return typeof h === "number" ? table!.ids[h]! : h.id;
}

/** Pretty text at ENTRY_INDENT. */
export function hitEntryText(table: TypeTable | undefined, h: Hit): string {
  if (typeof h === "number") return table!.entryText(h);
  h.pretty ??= prettyJson(h.text, ENTRY_INDENT);
  return h.pretty;
}

export function hitResource(table: TypeTable | undefined, h: Hit): R {
  return typeof h === "number" ? table!.parse(h) : (JSON.parse(h.text) as R);
}

function keyOf(table: TypeTable | undefined, h: Hit, key: SortKey): number | string | undefined {
  if (typeof h === "number" && key.def.type === "date") {
    const col = table!.dates.get(key.def.name);
    if (!col) return undefined;
    const extra = col.extra.get(h);
    if (extra) return key.descending ? Math.max(...extra.map((r) => r.lo)) : Math.min(...extra.map((r) => r.lo));
    const lo = col.lo[h]!;
    return Number.isNaN(lo) ? undefined : lo;
  }
  if (key.def.name === "_id") return hitId(table, h);
  return sortKeyOf(key.def, hitResource(table, h), key.descending);
}

/** The precomputed whole-table order for this sort, when every hit is a base row and one exists. */
function rowOrder(table: TypeTable | undefined, hits: Hit[], sort: SortKey[]): RowOrder | undefined {
  if (sort.length !== 1 || sort[0]!.def.type !== "date") return undefined;
  const col = table?.dates.get(sort[0]!.def.name);
  if (!col) return undefined;
  for (let i = 0; i < hits.length; i++) if (typeof hits[i] !== "number") return undefined;
  return dateOrder(col, sort[0]!.descending);
}

/**
 * The first `k` hits in _sort order by linear selection, so a first page of a big sorted result
 * (`_sort=-date&_count=1`) costs no full sort; undefined when selection does not apply (no _sort,
 * no precomputed order, a large k, or k covers every hit): sort them with sortHits then.
 */
export function topHits(table: TypeTable | undefined, hits: Hit[], sort: SortKey[], k: number): Hit[] | undefined {
  if (sort.length === 0 || k > 32 || k >= hits.length) return undefined;
  if (k === 0) return [];
  const order = rowOrder(table, hits, sort);
  if (!order) return undefined;
  // Keep the k smallest ranks seen so far in an ascending buffer.
  const best = new Int32Array(k);
  let size = 0;
  for (let i = 0; i < hits.length; i++) {
    const r = order.rank[hits[i] as number]!;
    if (size === k && r >= best[k - 1]!) continue;
    let j = size < k ? size++ : k - 1;
    while (j > 0 && best[j - 1]! > r) {
      best[j] = best[j - 1]!;
      j--;
    }
    best[j] = r;
  }
  const out = new Array<number>(size);
  for (let i = 0; i < size; i++) out[i] = order.rowAt[best[i]!]!;
  return out;
}

/** Does a sort key of a base row need the row parsed? */
function parsesRow(table: TypeTable | undefined, key: SortKey): boolean {
  return key.def.name !== "_id" && !(key.def.type === "date" && table?.dates.has(key.def.name));
}

/** Sort hits by the _sort keys; absent values last, ties keep id order. */
export function sortHits(table: TypeTable | undefined, hits: Hit[], sort: SortKey[]): Hit[] {
  return runSync(scanSort(table, hits, sort, Infinity));
}

/** sortHits slice by slice, reading at most `limit` resources for their sort keys. */
export function* scanSort(table: TypeTable | undefined, hits: Hit[], sort: SortKey[], limit: number): Scan<Hit[]> {
  if (sort.length === 0 || hits.length < 2) return hits;
  const order = rowOrder(table, hits, sort);
  if (order) return sortRows(hits as number[], order);
  const reads = sort.some((k) => parsesRow(table, k));
  if (reads && hits.length > limit) throw tooCostly(table?.type ?? "", limit, sort.map((k) => `_sort=${k.descending ? "-" : ""}${k.def.name}`));
  const keys = new Array<(number | string | undefined)[]>(hits.length);
  let work = 0;
  for (let i = 0; i < hits.length; i++) {
    keys[i] = sort.map((k) => keyOf(table, hits[i]!, k));
    work += reads ? PARSE_COST : 1;
    if (work >= SLICE) {
      work = 0;
      yield;
    }
  }
  const idx = hits.map((_, i) => i);
  idx.sort((a, b) => {
    for (let s = 0; s < sort.length; s++) {
      const x = keys[a]![s];
      const y = keys[b]![s];
      if (x === y) continue;
      if (x === undefined) return 1;
      if (y === undefined) return -1;
      const cmp = x < y ? -1 : 1;
      return sort[s]!.descending ? -cmp : cmp;
    }
    return a - b;
  });
  return idx.map((i) => hits[i]!);
}

function sortRows(rows: number[], order: RowOrder): number[] {
  const ranks = new Int32Array(rows.length);
  for (let i = 0; i < rows.length; i++) ranks[i] = order.rank[rows[i]!]!;
  ranks.sort();
  const out = new Array<number>(rows.length);
  for (let i = 0; i < ranks.length; i++) out[i] = order.rowAt[ranks[i]!]!;
  return out;
}

let lastMs = NaN;
let lastInstant = "";
/** The current time as HAPI writes it (2024-01-02T03:04:05.678+00:00); one string per millisecond. */
export function nowInstant(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastInstant = new Date(ms).toISOString().replace("Z", "+00:00");
  }
  return lastInstant;
}
