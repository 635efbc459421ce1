// Python operators over Py values: ==, in, len, [], .get, .lower(), truthiness.
import { numEq, asNumber } from "./numbers.ts";
import { repr } from "./repr.ts";
import { type Py, type PyKey, PyBytes, PyComplex, PyDict, PyError, PySet, PyTuple, typeName } from "./values.ts";

/** Python `==`. */
export function pyEq(a: Py, b: Py): boolean {
  if (asNumber(a) !== undefined || asNumber(b) !== undefined) return numEq(a, b);
  if (a === null || b === null) return a === b;
  if (typeof a === "string" || typeof b === "string") return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => x === b[i] || pyEq(x, b[i]!));
  }
  if (a instanceof PyTuple || b instanceof PyTuple) {
    if (!(a instanceof PyTuple) || !(b instanceof PyTuple) || a.items.length !== b.items.length) return false;
    return a.items.every((x, i) => x === b.items[i] || pyEq(x, b.items[i]!));
  }
  if (a instanceof PyDict || b instanceof PyDict) {
    if (!(a instanceof PyDict) || !(b instanceof PyDict) || a.map.size !== b.map.size) return false;
    for (const [k, v] of a.map) {
      const key = findKey(b, k);
      if (key === NOT_FOUND) return false;
      const w = b.map.get(key as PyKey)!;
      if (!(v === w || pyEq(v, w))) return false;
    }
    return true;
  }
  if (a instanceof PySet || b instanceof PySet) {
    if (!(a instanceof PySet) || !(b instanceof PySet) || a.items.length !== b.items.length) return false;
    return a.items.every((x) => b.items.some((y) => pyEq(x, y)));
  }
  if (a instanceof PyComplex && b instanceof PyComplex) return a.re === b.re && a.im === b.im;
  if (a instanceof PyBytes && b instanceof PyBytes) return a.bytes.length === b.bytes.length && a.bytes.every((x, i) => x === b.bytes[i]);
  return false;
}

const NOT_FOUND = Symbol("not found");

/** Dict key lookup with Python hashing equivalence (1, 1.0 and True are the same key). */
function findKey(d: PyDict, key: Py): PyKey | typeof NOT_FOUND {
  if (key === null || typeof key === "string") return d.map.has(key) ? key : NOT_FOUND;
  if (asNumber(key) !== undefined) {
    for (const k of d.map.keys()) if (asNumber(k) !== undefined && numEq(k, key)) return k;
    return NOT_FOUND;
  }
  if (key instanceof PyTuple) return NOT_FOUND; // hashable, but JSON/literal dict keys here are scalars
  throw new PyError("TypeError", `unhashable type: '${typeName(key)}'`);
}

/** `x in container`. */
export function pyIn(x: Py, container: Py): boolean {
  if (typeof container === "string") {
    if (typeof x !== "string") throw new PyError("TypeError", `'in <string>' requires string as left operand, not ${typeName(x)}`);
    return container.includes(x);
  }
  if (Array.isArray(container)) return container.some((e) => e === x || pyEq(e, x));
  if (container instanceof PyTuple || container instanceof PySet) return container.items.some((e) => e === x || pyEq(e, x));
  if (container instanceof PyDict) return findKey(container, x) !== NOT_FOUND;
  throw new PyError("TypeError", `argument of type '${typeName(container)}' is not iterable`);
}

export function pyLen(v: Py): number {
  if (typeof v === "string") return [...v].length;
  if (Array.isArray(v)) return v.length;
  if (v instanceof PyDict) return v.map.size;
  if (v instanceof PyTuple || v instanceof PySet) return v.items.length;
  if (v instanceof PyBytes) return v.bytes.length;
  throw new PyError("TypeError", `object of type '${typeName(v)}' has no len()`);
}

/** `v[key]`: dict by key (KeyError), list/str/tuple by int index (IndexError), anything else TypeError. */
export function getItem(v: Py, key: Py): Py {
  if (v instanceof PyDict) {
    const k = findKey(v, key);
    if (k === NOT_FOUND) throw new PyError("KeyError", repr(key));
    return v.map.get(k as PyKey)!;
  }
  const seq = Array.isArray(v) ? v : v instanceof PyTuple ? v.items : typeof v === "string" ? [...v] : undefined;
  if (seq) {
    const n = asNumber(key);
    if (typeof n !== "bigint")
      throw new PyError("TypeError", `${typeName(v)} indices must be integers or slices, not ${typeName(key)}`);
    let i = Number(n);
    if (i < 0) i += seq.length;
    if (i < 0 || i >= seq.length) throw new PyError("IndexError", `${typeName(v)} index out of range`);
    return seq[i]!;
  }
  throw new PyError("TypeError", `'${typeName(v)}' object is not subscriptable`);
}

/** Chained indexing: at(payload, "a", 0n, "b") == payload['a'][0]['b']. */
export function at(v: Py, ...keys: Py[]): Py {
  let cur = v;
  for (const k of keys) cur = getItem(cur, k);
  return cur;
}

/** `d.get(key, default)`: AttributeError on non-dicts. */
export function pyGet(d: Py, key: string, dflt: Py = null): Py {
  if (!(d instanceof PyDict)) throw new PyError("AttributeError", `'${typeName(d)}' object has no attribute 'get'`);
  return d.map.has(key) ? d.map.get(key)! : dflt;
}

export function pyLower(v: Py): string {
  if (typeof v !== "string") throw new PyError("AttributeError", `'${typeName(v)}' object has no attribute 'lower'`);
  return v.toLowerCase();
}

/** Python truthiness. */
export function truthy(v: Py): boolean {
  if (v === null || v === false) return false;
  if (v === true) return true;
  if (typeof v === "bigint") return v !== 0n;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof PyDict) return v.map.size > 0;
  if (v instanceof PyTuple || v instanceof PySet) return v.items.length > 0;
  if (v instanceof PyComplex) return v.re !== 0 || v.im !== 0;
  return v.bytes.length > 0;
}
