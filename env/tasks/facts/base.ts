// Reading the base data the way the official graders do (a patient's resources filtered by a
// code token, at most 5000, in id order), as Python values so that every access raises where
// the official Python would.
import { FhirError, type FhirReader, type FhirResource } from "../../fhir/index.ts";
import { at, fromIsoformat, fromJs, getItem, pyGet, truthy, type Py, type PyDatetime, PyDict, PyError, typeName } from "../../python/index.ts";

export const MAX_COUNT = 5000;

export interface FetchOptions {
  /** Token values of `code` (any coding's code matches one of them). */
  codes?: readonly string[];
  /** Token value of `status`. */
  status?: string;
}

/** `GET {type}?patient={mrn}&code=..&status=..&_count=5000` as the list of entry resources (id order). */
export function fetchResources(reader: FhirReader, type: string, mrn: string, opts: FetchOptions = {}): PyDict[] {
  return onBase(reader, `fetch|${type}|${mrn}|${opts.codes?.join(",") ?? ""}|${opts.status ?? ""}`, () => fetchUncached(reader, type, mrn, opts));
}

/**
 * `compute()`, kept per (reader, key) when the reader is an immutable base store (one that opens
 * overlays): it answers the same query the same way, and RL groups grade the same task many times
 * (a v2 heart-rate average parses every heart-rate time of the patient). Overlays and other readers
 * are never cached, nor is a computation that throws. What is returned is shared: read-only.
 */
export function onBase<T>(reader: FhirReader, key: string, compute: () => T): T {
  const immutable = typeof (reader as { newOverlay?: unknown }).newOverlay === "function";
  if (!immutable) return compute();
  let cache = CACHE.get(reader);
  if (cache?.has(key)) return cache.get(key) as T;
  const result = compute();
  if (!cache) CACHE.set(reader, (cache = new Map()));
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, result);
  return result;
}

/** A fact of the base data: `fn` reads only `reader` and its arguments (strings, datetimes), and is kept per immutable store (see onBase). */
export function baseFact<A extends (string | PyDatetime | undefined)[], R>(fn: (reader: FhirReader, ...args: A) => R): (reader: FhirReader, ...args: A) => R {
  const name = fn.name;
  return (reader, ...args) => onBase(reader, `${name}|${args.map(argKey).join("|")}`, () => fn(reader, ...args));
}

function argKey(a: string | PyDatetime | undefined): string {
  if (a === undefined) return "-";
  if (typeof a === "string") return JSON.stringify(a);
  return `${a.us}/${a.aware}/${a.date.y}-${a.date.m}-${a.date.d}`;
}

const CACHE = new WeakMap<FhirReader, Map<string, unknown>>();
const CACHE_LIMIT = 20_000;

function fetchUncached(reader: FhirReader, type: string, mrn: string, opts: FetchOptions): PyDict[] {
  const params = [`patient=${encodeURIComponent(mrn)}`];
  if (opts.codes) params.push(`code=${opts.codes.map(encodeURIComponent).join(",")}`);
  if (opts.status !== undefined) params.push(`status=${encodeURIComponent(opts.status)}`);
  params.push(`_count=${MAX_COUNT}`);
  let hits: FhirResource[];
  try {
    hits = reader.search(type, params.join("&")).resources;
  } catch (e) {
    // The official grader's GET would fail and its JSON handling raise: a failed grade, not a crash.
    if (e instanceof FhirError) throw new PyError("HTTPError", `${e.status} on ${type}?${params.join("&")}: ${e.diagnostics}`);
    throw e;
  }
  return hits.slice(0, MAX_COUNT).map((res) => fromJs(res) as PyDict);
}

/** datetime.fromisoformat(x) where x must be a str (TypeError otherwise). */
export function parseTime(v: Py): PyDatetime {
  if (typeof v !== "string") throw new PyError("TypeError", `fromisoformat: argument must be str, not ${typeName(v)}`);
  return fromIsoformat(v);
}

export const CUTOFF = fromIsoformat("2025-01-01T00:00:00+00:00");

/** before_cutoff(res): res["meta"].get("lastUpdated") is None or <= 2025-01-01 (strict meta access). */
export function beforeCutoff(res: Py, tolerantMeta = false): boolean {
  const meta = tolerantMeta ? pyGet(res, "meta", new PyDict()) : getItem(res, "meta");
  const ts = pyGet(meta, "lastUpdated");
  if (ts === null) return true;
  const t = parseTime(ts);
  if (t.aware !== CUTOFF.aware) throw new PyError("TypeError", "can't compare offset-naive and offset-aware datetimes");
  return t.us <= CUTOFF.us;
}

/** Python `a or b or c` over optional string fields: the first truthy one (or the last value). */
export function performedTime(res: Py): Py {
  const dt = pyGet(res, "performedDateTime");
  if (truthy(dt)) return dt;
  const end = pyGet(pyGet(res, "performedPeriod", new PyDict()), "end");
  if (truthy(end)) return end;
  return pyGet(pyGet(res, "performedPeriod", new PyDict()), "start");
}

export { at };
