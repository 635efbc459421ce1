// Python's int and float arithmetic as CPython computes it: correctly rounded int / int, floor division
// and modulo with Python's signs, float ** with CPython's special cases and errors, shifts, bitwise ops.
// ehrgym bounds the size of an int (LIMITS.intBits): a bigger one raises MemoryError.
import { bitLength, floatRatio } from "./decimal.ts";
import { crPow } from "./libm.ts";
import { intToFloat } from "./numbers.ts";
import { PyError } from "./values.ts";

export const LIMITS = {
  /** Largest int, in bits (about 315,000 decimal digits). */
  intBits: 1 << 20,
  /** Longest str, list, tuple or bytes. */
  items: 10_000_000,
};

export const memoryError = (what: string) => new PyError("MemoryError", `${what} exceeds ehrgym's bound`);

export function checkInt(i: bigint): bigint {
  if ((i > 0n ? i : -i) >> BigInt(LIMITS.intBits) !== 0n) throw memoryError("int");
  return i;
}

const zeroDiv = (msg: string) => new PyError("ZeroDivisionError", msg);

export const floatOf = (v: bigint | number): number => (typeof v === "bigint" ? intToFloat(v) : v);

/** int / int, correctly rounded (CPython does not go through float(a) / float(b)). */
export function intTrueDiv(a: bigint, b: bigint): number {
  if (b === 0n) throw zeroDiv("division by zero");
  const LIM = 1n << 53n;
  if (-LIM < a && a < LIM && -LIM < b && b < LIM) return Number(a) / Number(b);
  const neg = a < 0n !== b < 0n;
  const x = a < 0n ? -a : a;
  const y = b < 0n ? -b : b;
  if (x === 0n) return neg ? -0 : 0;
  const e = bitLength(x) - bitLength(y);
  if (e > 1025) throw new PyError("OverflowError", "integer division result too large for a float");
  if (e < -1080) return neg ? -0 : 0;
  // A quotient of at least 64 bits, its last bit sticky, rounds once in Number().
  const shift = 64 - e;
  let q: bigint;
  let r: bigint;
  if (shift >= 0) {
    q = (x << BigInt(shift)) / y;
    r = (x << BigInt(shift)) - q * y;
  } else {
    q = x / (y << BigInt(-shift));
    r = x - q * (y << BigInt(-shift));
  }
  if (r !== 0n) q |= 1n;
  const bits = bitLength(q);
  const resultExp = bits - shift; // value in [2^(resultExp-1), 2^resultExp)
  let v: number;
  if (resultExp < -1021) {
    // Subnormal: round at the subnormal precision directly.
    const drop = -1074 + shift;
    const p = 1n << BigInt(drop);
    let m = q >> BigInt(drop);
    const rem = q - (m << BigInt(drop));
    const half = p >> 1n;
    if (rem > half || (rem === half && (m & 1n) === 1n)) m += 1n;
    v = Number(m) * 2 ** -1074;
  } else {
    v = Number(q) * 2 ** -Math.min(shift, 1000) * 2 ** -(shift - Math.min(shift, 1000));
  }
  if (!Number.isFinite(v)) throw new PyError("OverflowError", "integer division result too large for a float");
  return neg ? -v : v;
}

export function intFloorDiv(a: bigint, b: bigint): bigint {
  if (b === 0n) throw zeroDiv("integer division or modulo by zero");
  const q = a / b;
  return (a % b !== 0n && a < 0n !== b < 0n) ? q - 1n : q;
}

export function intMod(a: bigint, b: bigint): bigint {
  if (b === 0n) throw zeroDiv("integer division or modulo by zero");
  const r = a % b;
  return r !== 0n && r < 0n !== b < 0n ? r + b : r;
}

/** CPython's float divmod: [floor quotient, remainder with the divisor's sign]. */
export function floatDivmod(vx: number, wx: number, what: string): [number, number] {
  if (wx === 0) throw zeroDiv(what);
  let mod = vx % wx;
  let div = (vx - mod) / wx;
  // C's `if (mod)`: NaN counts as true.
  if (mod !== 0) {
    if (wx < 0 !== mod < 0) {
      mod += wx;
      div -= 1;
    }
  } else mod = wx < 0 ? -0 : 0;
  let floordiv: number;
  if (div !== 0) {
    floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1;
  } else floordiv = vx / wx < 0 || Object.is(vx / wx, -0) ? -0 : 0;
  return [floordiv, mod];
}

export function intPow(a: bigint, b: bigint): bigint | number {
  if (b < 0n) return floatPow(floatOf(a), floatOf(b));
  if (a === 0n || a === 1n) return b === 0n ? 1n : a;
  if (a === -1n) return b % 2n === 0n ? 1n : -1n;
  if (BigInt(bitLength(a < 0n ? -a : a) - 1) * b > BigInt(LIMITS.intBits)) throw memoryError("int");
  return a ** b;
}

const isOddInt = (y: number) => Number.isInteger(y) && Math.abs(y % 2) === 1;

/** float ** float with CPython's special cases (ZeroDivisionError, OverflowError; complex results unsupported). */
export function floatPow(x: number, y: number): number {
  if (y === 0) return 1;
  if (Number.isNaN(x)) return x;
  if (Number.isNaN(y)) return x === 1 ? 1 : y;
  if (!Number.isFinite(y)) {
    const ax = Math.abs(x);
    if (ax === 1) return 1;
    return ax > 1 === y > 0 ? Infinity : 0;
  }
  if (!Number.isFinite(x)) {
    const odd = isOddInt(y);
    if (y > 0) return odd ? x : Math.abs(x);
    return odd ? (x < 0 ? -0 : 0) : 0;
  }
  if (x === 0) {
    if (y < 0) throw zeroDiv("0.0 cannot be raised to a negative power");
    return isOddInt(y) ? x : 0;
  }
  let negate = false;
  let base = x;
  if (x < 0) {
    if (!Number.isInteger(y)) throw new PyError("ValueError", "ehrgym: a negative number to a fractional power is complex, which the calculator does not support");
    base = -x;
    negate = isOddInt(y);
  }
  if (base === 1) return negate ? -1 : 1;
  const r = crPow(base, y);
  if (!Number.isFinite(r)) throw new PyError("OverflowError", "(34, 'Numerical result out of range')");
  return negate ? -r : r;
}

export function shift(a: bigint, b: bigint, left: boolean): bigint {
  if (b < 0n) throw new PyError("ValueError", "negative shift count");
  if (!left) return b > 1_000_000_000n ? (a < 0n ? -1n : 0n) : a >> b;
  if (a === 0n) return 0n;
  if (BigInt(bitLength(a < 0n ? -a : a)) + b > BigInt(LIMITS.intBits)) throw memoryError("int");
  return a << b;
}

/** float.as_integer_ratio() with its errors. */
export function asIntegerRatio(f: number): [bigint, bigint] {
  if (Number.isNaN(f)) throw new PyError("ValueError", "cannot convert NaN to integer ratio");
  if (!Number.isFinite(f)) throw new PyError("OverflowError", "cannot convert Infinity to integer ratio");
  const [n, d] = floatRatio(Math.abs(f));
  return [f < 0 ? -n : n, d];
}

/** int(float) / math.trunc: exact, with CPython's errors for nan and inf. */
export function floatToInt(f: number): bigint {
  if (Number.isNaN(f)) throw new PyError("ValueError", "cannot convert float NaN to integer");
  if (!Number.isFinite(f)) throw new PyError("OverflowError", "cannot convert float infinity to integer");
  return BigInt(Math.trunc(f));
}
