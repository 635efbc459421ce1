// Does one parsed resource satisfy a criterion? Used for overlay resources and for base
// criteria that have no index; the base indexes are built from the same extractors.
import { matchDate, type DatePrefix, type DateRange } from "./dates.ts";
import type { Criterion, QuantityValue, TokenValue } from "./query.ts";
import { normalizeString, type Quantity, type SearchParamDef, type Token } from "./search-params.ts";

type R = Record<string, unknown>;

export function tokenMatches(t: Token, v: TokenValue): boolean {
  if (v.code !== undefined && t.code !== v.code) return false;
  if (v.system === undefined) return true;
  if (v.system === "") return t.system === undefined;
  return t.system === v.system;
}

export function stringMatches(value: string, modifier: "" | "exact" | "contains", query: string): boolean {
  return foldedStringMatches(modifier === "exact" ? value : normalizeString(value), modifier, query);
}

/** stringMatches for a value already normalized (unless :exact, which compares as written). */
export function foldedStringMatches(value: string, modifier: "" | "exact" | "contains", query: string): boolean {
  if (modifier === "exact") return value === query;
  return modifier === "contains" ? value.includes(query) : value.startsWith(query);
}

export function dateMatches(ranges: DateRange[], prefix: DatePrefix, search: DateRange): boolean {
  for (const r of ranges) if (matchDate(prefix, r, search)) return true;
  return false;
}

function quantityMatches(q: Quantity, v: QuantityValue): boolean {
  if (v.system !== undefined && q.system !== v.system) return false;
  if (v.code !== undefined && q.code !== v.code && q.unit !== v.code) return false;
  const x = q.value;
  switch (v.prefix) {
    case "eq":
      return x >= v.lo && x < v.hi;
    case "ne":
      return !(x >= v.lo && x < v.hi);
    case "gt":
    case "sa":
      return x > v.value;
    case "lt":
    case "eb":
      return x < v.value;
    case "ge":
      return x >= v.value;
    case "le":
      return x <= v.value;
    case "ap":
      return Math.abs(x - v.value) <= Math.abs(v.value) * 0.1;
  }
}

/** Extracted values of `def` on `r` (the list is empty when the resource has none). */
export function valuesOf(def: SearchParamDef, r: R): unknown[] {
  switch (def.type) {
    case "token":
      return def.tokens(r);
    case "reference":
      return def.refs(r);
    case "string":
      return def.strings(r);
    case "date":
      return def.ranges(r);
    case "quantity":
      return def.quantities(r);
  }
}

export function matchesCriterion(r: R, c: Criterion): boolean {
  if (c.modifier === "missing") return (valuesOf(c.def, r).length === 0) === c.values[0];
  switch (c.def.type) {
    case "token": {
      const tokens = c.def.tokens(r);
      const hit = tokens.some((t) => (c.values as TokenValue[]).some((v) => tokenMatches(t, v)));
      return c.modifier === "not" ? !hit : hit;
    }
    case "reference": {
      const refs = c.def.refs(r);
      return refs.some((ref) => (c.values as string[]).includes(ref));
    }
    case "string": {
      const strings = c.def.strings(r);
      const mod = c.modifier as "" | "exact" | "contains";
      return strings.some((s) => (c.values as string[]).some((q) => stringMatches(s, mod, q)));
    }
    case "date": {
      const ranges = c.def.ranges(r);
      return (c.values as { prefix: DatePrefix; range: DateRange }[]).some((v) => dateMatches(ranges, v.prefix, v.range));
    }
    case "quantity": {
      const qs = c.def.quantities(r);
      return qs.some((q) => (c.values as QuantityValue[]).some((v) => quantityMatches(q, v)));
    }
  }
}

export function matchesAll(r: R, criteria: Criterion[]): boolean {
  for (const c of criteria) if (!matchesCriterion(r, c)) return false;
  return true;
}

/** Sort key of `def` on `r`: a date's low bound, a number, or a string; undefined when absent. */
export function sortKeyOf(def: SearchParamDef, r: R, descending: boolean): number | string | undefined {
  switch (def.type) {
    case "date": {
      const rs = def.ranges(r);
      if (rs.length === 0) return undefined;
      return descending ? Math.max(...rs.map((x) => x.lo)) : Math.min(...rs.map((x) => x.lo));
    }
    case "quantity": {
      const qs = def.quantities(r);
      return qs.length ? qs[0]!.value : undefined;
    }
    case "string": {
      const s = def.strings(r);
      return s.length ? normalizeString(s[0]!) : undefined;
    }
    case "token": {
      const t = def.tokens(r);
      return t.length ? t[0]!.code : undefined;
    }
    case "reference": {
      const x = def.refs(r);
      return x.length ? x[0] : undefined;
    }
  }
}
