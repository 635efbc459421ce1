// Check recording: every grader explains its verdict as a list of named checks.
import * as py from "../python/index.ts";
import type { Check, GradeResult } from "./types.ts";

export class Checks {
  readonly list: Check[] = [];

  add(name: string, ok: boolean, detail: string): boolean {
    this.list.push({ name, ok, detail });
    return ok;
  }

  /** Evaluate one Python-style assertion; a raised PyError is a failed check naming the error. */
  assert(name: string, fn: () => boolean, detail: string | (() => string) = ""): boolean {
    try {
      const ok = fn();
      return this.add(name, ok, typeof detail === "function" ? safe(detail) : detail);
    } catch (e) {
      if (e instanceof py.PyError) return this.add(name, false, `raises ${e.message}`);
      throw e;
    }
  }

  /** The result for a verdict; a false verdict always carries at least one failed check. */
  result(verdict: boolean): GradeResult {
    if (!verdict && this.list.every((c) => c.ok)) this.add("verdict", false, "the official grader returns False here");
    if (verdict && this.list.some((c) => !c.ok)) throw new Error("grader bug: true verdict with a failed check");
    const passed = this.list.filter((c) => c.ok).length;
    return { reward: verdict ? 1 : 0, checks: this.list, partialCredit: this.list.length ? passed / this.list.length : verdict ? 1 : 0 };
  }
}

function safe(f: () => string): string {
  try {
    return f();
  } catch {
    return "";
  }
}

/** Short rendering of a Python value for details. */
export function show(v: py.Py | undefined): string {
  if (v === undefined) return "(missing)";
  const r = py.repr(v);
  return r.length > 200 ? `${r.slice(0, 197)}...` : r;
}

/** `x in {"A", "B"}` on a set of strings: unhashable values (list/dict/set) raise TypeError. */
export function inStrSet(v: py.Py, items: readonly string[]): boolean {
  if (Array.isArray(v) || v instanceof py.PyDict || v instanceof py.PySet) throw new py.PyError("TypeError", `unhashable type: '${py.typeName(v)}'`);
  return typeof v === "string" && items.includes(v);
}

/** Iterating a value as Python `for x in v` does (dict -> keys, str -> chars). */
export function pyIter(v: py.Py): py.Py[] {
  if (Array.isArray(v)) return v;
  if (typeof v === "string") return [...v];
  if (v instanceof py.PyDict) return [...v.map.keys()];
  if (v instanceof py.PyTuple || v instanceof py.PySet) return v.items;
  throw new py.PyError("TypeError", `'${py.typeName(v)}' object is not iterable`);
}
