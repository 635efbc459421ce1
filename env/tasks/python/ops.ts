// Python operators over Py values: ==, in, len, [], .get, .lower(), str(), repr().
import { numEq, asNumber } from "./numbers.ts";
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

/** repr(float) exactly as CPython (shortest round-trip, fixed notation for 1e-4 <= |x| < 1e16). */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mant, expStr] = Math.abs(x).toExponential().split("e") as [string, string];
  const exp = Number(expStr);
  const digits = mant.replace(".", "");
  const sign = x < 0 ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp >= digits.length - 1) return `${sign}${digits}${"0".repeat(exp - digits.length + 1)}.0`;
    if (exp >= 0) return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
    return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
}

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** repr(str) as CPython: quote choice, backslash escapes, non-printables as \x/\u/\U. */
export function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === quote || ch === "\\") out += `\\${ch}`;
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    else if (cp < 0x7f) out += ch;
    else if (ch !== " " && NON_PRINTABLE.test(ch)) {
      if (cp <= 0xff) out += `\\x${cp.toString(16).padStart(2, "0")}`;
      else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, "0")}`;
      else out += `\\U${cp.toString(16).padStart(8, "0")}`;
    } else out += ch;
  }
  return out + quote;
}

export function repr(v: Py): string {
  if (v === null) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") return floatRepr(v);
  if (typeof v === "string") return strRepr(v);
  if (Array.isArray(v)) return `[${v.map(repr).join(", ")}]`;
  if (v instanceof PyDict) return `{${[...v.map].map(([k, x]) => `${repr(k)}: ${repr(x)}`).join(", ")}}`;
  if (v instanceof PyTuple) return v.items.length === 1 ? `(${repr(v.items[0]!)},)` : `(${v.items.map(repr).join(", ")})`;
  if (v instanceof PySet) return v.items.length === 0 ? "set()" : `{${v.items.map(repr).join(", ")}}`;
  if (v instanceof PyComplex) {
    const im = `${floatRepr(v.im).replace(/\.0$/, "")}j`;
    return v.re === 0 && !Object.is(v.re, -0) ? im : `(${floatRepr(v.re).replace(/\.0$/, "")}${v.im >= 0 || Number.isNaN(v.im) ? "+" : ""}${im})`;
  }
  return `b'${v.bytes.map((b) => (b >= 0x20 && b < 0x7f && b !== 0x27 && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`)).join("")}'`;
}

/** str(v): strings as themselves, everything else as repr. */
export function pyStr(v: Py): string {
  return typeof v === "string" ? v : repr(v);
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
