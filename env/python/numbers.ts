// Python numeric semantics: bool is an int, int is arbitrary precision, int/float compare exactly.
import { pyStrip } from "./strings.ts";
import { type Py, PyError, typeName } from "./values.ts";

export type PyNum = bigint | number;

/** bool -> int; int/float pass; anything else -> undefined. */
export function asNumber(v: Py): PyNum | undefined {
  if (typeof v === "boolean") return v ? 1n : 0n;
  if (typeof v === "bigint" || typeof v === "number") return v;
  return undefined;
}

export function isNumber(v: Py): boolean {
  return asNumber(v) !== undefined;
}

/** float(int): correctly rounded; OverflowError when out of range (as Python). */
export function intToFloat(i: bigint): number {
  const f = Number(i);
  if (!Number.isFinite(f)) throw new PyError("OverflowError", "int too large to convert to float");
  return f;
}

/** Exact comparison of an int and a float: -1, 0, 1, or NaN when unordered. */
function cmpIntFloat(i: bigint, f: number): number {
  if (Number.isNaN(f)) return NaN;
  if (f === Infinity) return -1;
  if (f === -Infinity) return 1;
  const fl = Math.floor(f);
  const fi = BigInt(fl);
  if (i < fi) return -1;
  if (i > fi) return 1;
  return f === fl ? 0 : -1; // i == floor(f) and f has a fraction -> i < f
}

/** Numeric three-way comparison (NaN when unordered). Throws TypeError for non-numbers. */
export function numCmp(a: Py, b: Py, op = "<"): number {
  const x = asNumber(a);
  const y = asNumber(b);
  if (x === undefined || y === undefined)
    throw new PyError("TypeError", `'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
  if (typeof x === "bigint" && typeof y === "bigint") return x < y ? -1 : x > y ? 1 : 0;
  if (typeof x === "number" && typeof y === "number") return x < y ? -1 : x > y ? 1 : x === y ? 0 : NaN;
  if (typeof x === "bigint") return cmpIntFloat(x, y as number);
  const r = cmpIntFloat(y as bigint, x);
  return Number.isNaN(r) ? NaN : -r;
}

export const lt = (a: Py, b: Py): boolean => numCmp(a, b, "<") < 0;
export const le = (a: Py, b: Py): boolean => numCmp(a, b, "<=") <= 0;
export const gt = (a: Py, b: Py): boolean => numCmp(a, b, ">") > 0;
export const ge = (a: Py, b: Py): boolean => numCmp(a, b, ">=") >= 0;

/** Python numeric equality (1 == 1.0, True == 1, NaN != NaN); false for non-numbers. */
export function numEq(a: Py, b: Py): boolean {
  if (asNumber(a) === undefined || asNumber(b) === undefined) return false;
  return numCmp(a, b) === 0;
}

function binary(a: Py, b: Py, op: string): [PyNum, PyNum] {
  const x = asNumber(a);
  const y = asNumber(b);
  if (x === undefined || y === undefined)
    throw new PyError("TypeError", `unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
  return [x, y];
}

export function sub(a: Py, b: Py): PyNum {
  const [x, y] = binary(a, b, "-");
  if (typeof x === "bigint" && typeof y === "bigint") return x - y;
  return (typeof x === "bigint" ? intToFloat(x) : x) - (typeof y === "bigint" ? intToFloat(y) : y);
}

export function pyAbs(a: Py): PyNum {
  const x = asNumber(a);
  if (x === undefined) throw new PyError("TypeError", `bad operand type for abs(): '${typeName(a)}'`);
  if (typeof x === "bigint") return x < 0n ? -x : x;
  return Math.abs(x);
}

/** Python float(x) for numbers and strings (str accepts whitespace, underscores between digits, inf/nan). */
export function pyFloat(v: Py): number {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "bigint") return intToFloat(v);
  if (typeof v === "number") return v;
  if (typeof v === "string") {
    const s = pyStrip(v);
    const m = /^([+-]?)(?:(inf|infinity|nan)|((?:\d(?:_?\d)*)?(?:\.(?:\d(?:_?\d)*)?)?(?:[eE][+-]?\d(?:_?\d)*)?))$/i.exec(s);
    if (m) {
      const sign = m[1] === "-" ? -1 : 1;
      if (m[2]) return m[2].toLowerCase() === "nan" ? NaN : sign * Infinity;
      const body = (m[3] ?? "").replace(/_/g, "");
      if (/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(body)) return sign * Number(body);
    }
    throw new PyError("ValueError", `could not convert string to float: ${JSON.stringify(v)}`);
  }
  throw new PyError("TypeError", `float() argument must be a string or a real number, not '${typeName(v)}'`);
}

export function add(a: Py, b: Py): PyNum {
  const [x, y] = binary(a, b, "+");
  if (typeof x === "bigint" && typeof y === "bigint") return x + y;
  return (typeof x === "bigint" ? intToFloat(x) : x) + (typeof y === "bigint" ? intToFloat(y) : y);
}
