// Parsing and validating a search query string into matchers (FHIR.md "Search semantics").
import { isDatePrefix, parseDateRange, splitPrefix, type DatePrefix, type DateRange } from "./dates.ts";
import {
  normalizeReference,
  normalizeString,
  searchParams,
  type DateParam,
  type QuantityParam,
  type ReferenceParam,
  type SearchParamDef,
  type StringParam,
  type TokenParam,
} from "./search-params.ts";
import { FhirError } from "./types.ts";

export interface TokenValue {
  /** undefined: any system; "": no system ("|code"). */
  system: string | undefined;
  /** undefined: any code of the system ("system|"). */
  code: string | undefined;
}
export interface QuantityValue {
  prefix: DatePrefix;
  lo: number;
  hi: number;
  value: number;
  system: string | undefined;
  code: string | undefined;
}

export type Criterion =
  | { def: TokenParam; modifier: "" | "not"; values: TokenValue[] }
  | { def: ReferenceParam; modifier: ""; values: string[] }
  | { def: StringParam; modifier: "" | "exact" | "contains"; values: string[] }
  | { def: DateParam; modifier: ""; values: { prefix: DatePrefix; range: DateRange }[] }
  | { def: QuantityParam; modifier: ""; values: QuantityValue[] }
  | { def: SearchParamDef; modifier: "missing"; values: boolean[] };

export interface SortKey {
  def: SearchParamDef;
  descending: boolean;
}

export interface ParsedSearch {
  type: string;
  /** ANDed criteria (each criterion ORs its values). */
  criteria: Criterion[];
  count: number | undefined;
  sort: SortKey[];
  summaryCount: boolean;
  total: "none" | "estimate" | "accurate" | undefined;
  pretty: boolean;
  /** Decoded [name, value] pairs in request order (for the self link). */
  params: [string, string][];
}

export interface QueryLimits {
  maxCount: number;
}

const RESULT_PARAMS = new Set(["_count", "_sort", "_summary", "_total", "_format", "_pretty", "_elements"]);
const UNSUPPORTED = new Set(["_include", "_revinclude", "_has", "_contained", "_containedType", "_text", "_content", "_list", "_query", "_filter"]);

function decode(part: string): string {
  if (!part.includes("%") && !part.includes("+")) return part;
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    throw new FhirError(400, `Invalid URL encoding in "${part}"`);
  }
}

/** Split a query string ("a=1&b=2", no leading "?") into decoded pairs; empty values are dropped. */
export function parseQueryString(query: string): [string, string][] {
  const out: [string, string][] = [];
  if (!query) return out;
  for (const part of query.split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    const name = decode(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? "" : decode(part.slice(eq + 1));
    out.push([name, value]);
  }
  return out;
}

/** Split on unescaped `sep`, unescaping `\sep`. */
function splitEscaped(value: string, sep: string): string[] {
  if (!value.includes("\\")) return value.split(sep);
  const out: string[] = [];
  let cur = "";
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (ch === "\\" && i + 1 < value.length && (value[i + 1] === sep || value[i + 1] === "\\" || value[i + 1] === "," || value[i + 1] === "|" || value[i + 1] === "$")) {
      cur += value[++i];
    } else if (ch === sep) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

function validNames(type: string): string {
  return `[${[...searchParams(type).keys()].sort().join(", ")}]`;
}

function unknownParam(type: string, name: string): FhirError {
  return new FhirError(
    400,
    `Unknown search parameter "${name}" for resource type "${type}". Valid search parameters for this search are: ${validNames(type)}`,
  );
}

function parseDateValue(raw: string): { prefix: DatePrefix; range: DateRange } {
  const { prefix, value } = splitPrefix(raw);
  if (!isDatePrefix(prefix)) throw new FhirError(400, `Invalid date/time prefix "${prefix}" in "${raw}": expected one of eq, ne, gt, lt, ge, le, sa, eb, ap`);
  const range = parseDateRange(value);
  if (!range) throw new FhirError(400, `Invalid date/time format: "${raw}"`);
  return { prefix, range };
}

function parseQuantityValue(raw: string): QuantityValue {
  const [numberPart = "", system, code] = splitEscaped(raw, "|");
  const { prefix, value } = splitPrefix(numberPart);
  if (!isDatePrefix(prefix)) throw new FhirError(400, `Invalid quantity prefix "${prefix}" in "${raw}"`);
  if (!/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value)) throw new FhirError(400, `Invalid quantity value: "${raw}"`);
  const n = Number(value);
  // eq uses the precision of the given number: 5.4 means [5.35, 5.45)
  const decimals = /\.(\d+)/.exec(value)?.[1]?.length ?? 0;
  const half = 0.5 * 10 ** -decimals;
  return { prefix, value: n, lo: n - half, hi: n + half, system: system || undefined, code: code || undefined };
}

function parseTokenValue(raw: string): TokenValue {
  const parts = splitEscaped(raw, "|");
  if (parts.length === 1) return { system: undefined, code: parts[0]! };
  const [system = "", code = ""] = [parts[0], parts.slice(1).join("|")];
  return { system, code: code === "" ? undefined : code };
}

function badModifier(type: string, def: SearchParamDef, modifier: string): FhirError {
  return new FhirError(400, `Invalid modifier ":${modifier}" for search parameter "${def.name}" of resource type "${type}"`);
}

function criterion(type: string, def: SearchParamDef, modifier: string, raw: string): Criterion {
  const values = splitEscaped(raw, ",");
  if (modifier === "missing") {
    if (raw !== "true" && raw !== "false") throw new FhirError(400, `Invalid :missing value "${raw}" for "${def.name}": expected true or false`);
    return { def, modifier: "missing", values: [raw === "true"] };
  }
  switch (def.type) {
    case "token":
      if (modifier !== "" && modifier !== "not") throw badModifier(type, def, modifier);
      return { def, modifier, values: values.map(parseTokenValue) };
    case "reference": {
      // A type modifier (subject:Patient=S1) names the target type.
      const targetType = modifier && /^[A-Z][A-Za-z]+$/.test(modifier) ? modifier : modifier ? undefined : "Patient";
      if (targetType === undefined) throw badModifier(type, def, modifier);
      // A value that is no valid reference simply matches nothing, as on HAPI.
      const refs = values.map((v) => (v.includes("/") ? (normalizeReference(v) ?? v) : `${targetType}/${v}`));
      return { def, modifier: "", values: refs };
    }
    case "string":
      if (modifier !== "" && modifier !== "exact" && modifier !== "contains") throw badModifier(type, def, modifier);
      return { def, modifier, values: modifier === "exact" ? values : values.map(normalizeString) };
    case "date":
      if (modifier !== "") throw badModifier(type, def, modifier);
      return { def, modifier: "", values: values.map(parseDateValue) };
    case "quantity":
      if (modifier !== "") throw badModifier(type, def, modifier);
      return { def, modifier: "", values: values.map(parseQuantityValue) };
  }
}

function parseCount(raw: string, limits: QueryLimits): number {
  if (!/^\d+$/.test(raw) || Number(raw) > limits.maxCount)
    throw new FhirError(400, `Invalid _count value "${raw}": must be an integer from 0 to ${limits.maxCount}`);
  return Number(raw);
}

function parseSort(type: string, raw: string): SortKey[] {
  const params = searchParams(type);
  return raw.split(",").map((item) => {
    const descending = item.startsWith("-");
    const name = descending ? item.slice(1) : item;
    const def = params.get(name);
    if (!def) throw new FhirError(400, `Unknown _sort parameter value "${name}" for resource type "${type}". Valid values for this search are: ${validNames(type)}`);
    return { def, descending };
  });
}

/** Parse a search query for `type`. Throws FhirError(400) with a HAPI-like message on bad input. */
export function parseSearch(type: string, query: string, limits: QueryLimits): ParsedSearch {
  const pairs = parseQueryString(query);
  const defs = searchParams(type);
  const out: ParsedSearch = { type, criteria: [], count: undefined, sort: [], summaryCount: false, total: undefined, pretty: true, params: pairs };
  for (const [fullName, value] of pairs) {
    const colon = fullName.indexOf(":");
    const name = colon < 0 ? fullName : fullName.slice(0, colon);
    const modifier = colon < 0 ? "" : fullName.slice(colon + 1);
    if (RESULT_PARAMS.has(name)) {
      if (name === "_count") out.count = parseCount(value, limits);
      else if (name === "_sort") out.sort = value ? parseSort(type, value) : [];
      else if (name === "_summary") {
        if (!["count", "false", "true", "text", "data"].includes(value)) throw new FhirError(400, `Invalid _summary value "${value}": expected count, true, text, data or false`);
        out.summaryCount = value === "count";
      } else if (name === "_total") {
        if (value !== "none" && value !== "estimate" && value !== "accurate") throw new FhirError(400, `Invalid _total value "${value}": expected none, estimate or accurate`);
        out.total = value;
      } else if (name === "_pretty") out.pretty = value !== "false";
      continue; // _format and _elements are accepted and ignored: replies are always JSON
    }
    if (UNSUPPORTED.has(name)) throw new FhirError(400, `Search parameter "${name}" is not supported by this server`);
    if (value === "") continue; // HAPI ignores parameters without a value
    const def = defs.get(name);
    if (!def) throw unknownParam(type, name);
    out.criteria.push(criterion(type, def, modifier, value));
  }
  return out;
}
