// The libm functions Python's float and math module call (pow, exp, exp2, log, log2, log10, sin, cos,
// tan, atan, asin, acos, atan2), correctly rounded: computed with about 40 significant digits in BigInt
// fixed point, then rounded once. glibc's are correctly rounded for these in all but rare cases, while
// V8's Math.pow/exp/sin... are not (25 ** -2 is 0.0015999999999999999 in V8, 0.0016 in CPython).
import { bitLength, decimalFromFloat, expOfFixed, fixedExp, fixedLn, floatRatio, isqrt, ln10, pow10 } from "./decimal.ts";
import { intTrueDiv } from "./arith.ts";

/** Significant digits of the intermediate results. */
const G = 40;

/** x * 10^w as a fixed-point integer (truncated). */
function fixedOf(x: number, w: number): bigint {
  const d = decimalFromFloat(Math.abs(x));
  const shift = d.exp + w;
  const v = shift >= 0 ? d.coef * pow10(shift) : d.coef / pow10(-shift);
  return x < 0 ? -v : v;
}

/** v / 10^w rounded once to the nearest float (JS number parsing is correctly rounded). */
const toFloat = (v: bigint, w: number): number => Number(`${v}e-${w}`);

/** Decimal digits before the point of |x| (0 for |x| < 1); how many digits below 1 its leading one sits. */
const intDigits = (x: number) => Math.max(0, Math.ceil(Math.log10(Math.abs(x) + 1)));
const leadingZeros = (x: number) => (x === 0 ? 0 : Math.max(0, -Math.floor(Math.log10(Math.abs(x)))));

export function crExp(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x > 710) return Infinity;
  if (x < -746) return 0;
  if (x === 0) return 1;
  const w = G + leadingZeros(x);
  const { coef, exp } = expOfFixed(fixedOf(x, w), w);
  return Number(`${coef}e${exp}`);
}

export function crExp2(x: number): number {
  if (Number.isNaN(x)) return x;
  if (x > 1025) return Infinity;
  if (x < -1080) return 0;
  if (Number.isInteger(x)) return 2 ** x;
  const w = G + leadingZeros(x) + 4;
  const ln2 = fixedLn(2n, 0, w);
  const { coef, exp } = expOfFixed((fixedOf(x, w) * ln2) / pow10(w), w);
  return Number(`${coef}e${exp}`);
}

/** ln(x) for finite x > 0, in fixed point with w digits. */
function lnFixed(x: number, w: number): bigint {
  const d = decimalFromFloat(x);
  return fixedLn(d.coef, d.exp, w);
}

/** log(x) / log(base) for base e, 2 or 10; x finite and > 0. */
export function crLog(x: number, base: "e" | 2 | 10 = "e"): number {
  if (x === 1) return 0;
  if (base === 2 && Number.isInteger(Math.log2(x)) && 2 ** Math.log2(x) === x) return Math.log2(x);
  // Near 1 the result is small: digits past the point keep G significant ones.
  const near = leadingZeros(Math.log(x)) + 2;
  const w = G + near;
  const l = lnFixed(x, w);
  if (base === "e") return toFloat(l, w);
  const lb = base === 2 ? fixedLn(2n, 0, w) : ln10(w);
  return toFloat((l * pow10(w)) / lb, w);
}

/** log10 as glibc computes it (fdlibm's e_log10: not correctly rounded, so reproduced step by step
 *  over the correctly rounded log). */
export function glibcLog10(x: number): number {
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  let hx = buf.getInt32(0);
  let k = 0;
  if (hx < 0x00100000) {
    k -= 54;
    x *= 18014398509481984;
    buf.setFloat64(0, x);
    hx = buf.getInt32(0);
  }
  k += (hx >> 20) - 1023;
  const i = k < 0 ? 1 : 0;
  hx = (hx & 0x000fffff) | ((0x3ff - i) << 20);
  const y = k + i;
  buf.setInt32(0, hx);
  const m = buf.getFloat64(0);
  const z = y * 3.69423907715893078616e-13 + 4.34294481903251816668e-1 * crLog(m);
  return z + y * 3.01029995663611771306e-1;
}

/** x ** y for finite x > 0 and finite y (the callers handle signs, zeros and the special values). */
export function crPow(x: number, y: number): number {
  if (x === 1 || y === 0) return 1;
  if (y === 1) return x;
  const [n, d] = floatRatio(x);
  // Integral exponents: the exact rational power, rounded once.
  if (Number.isInteger(y) && Math.abs(y) <= 4096 && (bitLength(n) + bitLength(d)) * Math.abs(y) <= 40_000) {
    const k = BigInt(Math.abs(y));
    const num = n ** k;
    const den = d ** k;
    try {
      return y > 0 ? intTrueDiv(num, den) : intTrueDiv(den, num);
    } catch {
      return Infinity;
    }
  }
  const lnx = Math.log(x);
  const approx = y * lnx;
  if (approx > 710) return Infinity;
  if (approx < -746) return 0;
  const w = G + leadingZeros(approx) + intDigits(y) + intDigits(lnx) + 2;
  const L = (lnFixed(x, w) * fixedOf(y, w)) / pow10(w);
  const { coef, exp } = expOfFixed(L, w);
  return Number(`${coef}e${exp}`);
}

// ---- trigonometry ----

const PI = new Map<number, bigint>();
/** pi with w digits (Machin: 16 atan(1/5) - 4 atan(1/239)). */
function piFixed(w: number): bigint {
  let v = PI.get(w);
  if (v === undefined) {
    const ww = w + 10;
    const one = pow10(ww);
    const atanInv = (k: bigint) => {
      let term = one / k;
      let sum = term;
      const k2 = k * k;
      for (let i = 1n; term !== 0n; i++) {
        term /= k2;
        sum += (i % 2n ? -term : term) / (2n * i + 1n);
      }
      return sum;
    };
    v = (16n * atanInv(5n) - 4n * atanInv(239n)) / pow10(10);
    PI.set(w, v);
  }
  return v;
}

/** sin and cos of r (|r| <= ~0.8) in fixed point, by Taylor series. */
function sinCos(r: bigint, w: number): [bigint, bigint] {
  const one = pow10(w);
  const r2 = (r * r) / one;
  let s = r;
  let term = r;
  for (let i = 1n; term !== 0n; i++) {
    term = -(term * r2) / one / ((2n * i) * (2n * i + 1n));
    s += term;
  }
  let c = one;
  term = one;
  for (let i = 1n; term !== 0n; i++) {
    term = -(term * r2) / one / ((2n * i - 1n) * (2n * i));
    c += term;
  }
  return [s, c];
}

/** sin, cos or tan of a finite x: reduced by pi/2 with pi as long as x needs, more digits while the result is tiny. */
export function crTrig(x: number, f: "sin" | "cos" | "tan"): number {
  if (x === 0) return f === "cos" ? 1 : x;
  let extra = leadingZeros(x);
  for (let attempt = 0; attempt < 4; attempt++) {
    const w = G + 5 + extra;
    const big = w + intDigits(x) + 2;
    const X = fixedOf(x, big);
    const halfPi = piFixed(big) / 2n;
    let q = X / halfPi;
    let r = X - q * halfPi;
    if (2n * (r < 0n ? -r : r) > halfPi) {
      const s = r < 0n ? -1n : 1n;
      q += s;
      r -= s * halfPi;
    }
    const rw = r / pow10(big - w);
    const [s, c] = sinCos(rw, w);
    const quad = Number(((q % 4n) + 4n) % 4n);
    let v: bigint;
    if (f === "tan") {
      const [num, den] = quad % 2 === 0 ? [s, c] : [-c, s];
      v = (num * pow10(w)) / den;
    } else {
      const sinV = [s, c, -s, -c][quad]!;
      const cosV = [c, -s, -c, s][quad]!;
      v = f === "sin" ? sinV : cosV;
    }
    // A result with fewer than G significant digits at this w: try again with more.
    if ((v < 0n ? -v : v) >= pow10(w - G)) return toFloat(v, w);
    extra += 20 + attempt * 40;
  }
  return f === "sin" ? Math.sin(x) : f === "cos" ? Math.cos(x) : Math.tan(x);
}

/** atan of a fixed-point t (any size) with w digits. */
function atanFixed(t: bigint, w: number): bigint {
  const one = pow10(w);
  const neg = t < 0n;
  let a = neg ? -t : t;
  let offset = 0n;
  if (a > one) {
    // atan(a) = pi/2 - atan(1/a)
    offset = piFixed(w) / 2n;
    a = (one * one) / a;
  }
  // atan(a) = 2 atan(a / (1 + sqrt(1 + a^2))) until a is small.
  let doublings = 0n;
  while (a > one / 100n) {
    const root = isqrt(one * one + a * a);
    a = (a * one) / (one + root);
    doublings++;
  }
  const a2 = (a * a) / one;
  let sum = a;
  let term = a;
  for (let i = 1n; term !== 0n; i++) {
    term = -(term * a2) / one;
    sum += term / (2n * i + 1n);
  }
  let v = sum << doublings;
  if (offset) v = offset - v;
  return neg ? -v : v;
}

export function crAtan(x: number): number {
  if (Number.isNaN(x)) return x;
  if (!Number.isFinite(x)) return x > 0 ? Math.PI / 2 : -Math.PI / 2;
  if (x === 0) return x;
  if (Math.abs(x) < 1e-9) return Math.atan(x); // atan(x) = x - x^3/3: the float is x's neighbour at most
  const w = G + leadingZeros(x) + 4;
  return toFloat(atanFixed(fixedOf(x, w), w), w);
}

/** asin (or acos) of x in [-1, 1]. */
export function crAsin(x: number, acos = false): number {
  if (Number.isNaN(x) || Math.abs(x) > 1) return NaN;
  const w = G + 10 + leadingZeros(x) + (acos ? leadingZeros(1 - Math.abs(x)) : 0);
  const one = pow10(w);
  const X = fixedOf(x, w);
  if (!acos) {
    if (x === 0) return x;
    if (Math.abs(x) < 1e-9) return Math.asin(x);
    const root = isqrt(one * one - X * X);
    if (root === 0n) return x > 0 ? Math.PI / 2 : -Math.PI / 2;
    return toFloat(atanFixed((X * one) / root, w), w);
  }
  // acos(x) = 2 atan(sqrt((1 - x) / (1 + x))): no cancellation near 1.
  if (x === 1) return 0;
  if (x === -1) return Math.PI;
  const ratio = ((one - X) * one) / (one + X);
  return toFloat(2n * atanFixed(isqrt(ratio * one), w), w);
}

export function crAtan2(y: number, x: number): number {
  if (Number.isNaN(x) || Number.isNaN(y) || !Number.isFinite(x) || !Number.isFinite(y) || x === 0 || y === 0) return Math.atan2(y, x);
  const ratio = Math.abs(y / x);
  if (!Number.isFinite(ratio) || ratio === 0 || ratio > 1e300 || ratio < 1e-300) return Math.atan2(y, x);
  const w = G + 6 + leadingZeros(ratio);
  const [ny, dy] = floatRatio(Math.abs(y));
  const [nx, dx] = floatRatio(Math.abs(x));
  const t = ((ny * dx * pow10(w)) / (dy * nx)) * (y < 0 !== x < 0 ? -1n : 1n);
  let v = atanFixed(t, w);
  if (x < 0) v += (y < 0 ? -1n : 1n) * piFixed(w);
  return toFloat(v, w);
}

// ---- hyperbolic functions, expm1, log1p, cbrt ----

/** exp(x) in fixed point with w digits (|x| moderate). */
const expW = (x: number, w: number): bigint => fixedExp({ v: fixedOf(x, w), w });

export function crHyper(x: number, f: "sinh" | "cosh" | "tanh"): number {
  if (Number.isNaN(x)) return x;
  if (x === 0) return f === "cosh" ? 1 : x;
  const ax = Math.abs(x);
  const sign = x < 0 ? -1 : 1;
  if (f === "tanh" && ax > 20) return sign;
  if (ax > 25) {
    if (ax > 711) return f === "tanh" ? sign : sign === -1 && f === "sinh" ? -Infinity : Infinity;
    // e^|x| / 2: e^-|x| is below the last digit.
    const w = G;
    const { coef, exp } = expOfFixed(fixedOf(ax, w), w);
    const v = Number(`${coef * 5n}e${exp - 1}`);
    return f === "sinh" ? sign * v : v;
  }
  const w = G + leadingZeros(x) + 12;
  const one = pow10(w);
  const e = expW(ax, w);
  const einv = (one * one) / e;
  if (f === "cosh") return toFloat((e + einv) / 2n, w);
  if (f === "sinh") return sign * toFloat((e - einv) / 2n, w);
  return sign * toFloat(((e - einv) * one) / (e + einv), w);
}

export function crExpm1(x: number): number {
  if (Number.isNaN(x) || x === 0) return x;
  if (x > 710) return Infinity;
  if (x < -40) return -1;
  const w = G + leadingZeros(x) + 5;
  if (x <= 2) return toFloat(expW(x, w) - pow10(w), w);
  const { coef, exp } = expOfFixed(fixedOf(x, w), w);
  return Number(`${coef - pow10(-exp)}e${exp}`);
}

export function crLog1p(x: number): number {
  if (Number.isNaN(x) || x === 0 || x === Infinity) return x;
  if (x < -1) return NaN;
  if (x === -1) return -Infinity;
  const d = decimalFromFloat(x);
  const c = d.exp < 0 ? (x < 0 ? -d.coef : d.coef) + pow10(-d.exp) : (x < 0 ? -d.coef : d.coef) * pow10(d.exp) + 1n;
  const e = Math.min(d.exp, 0);
  const w = G + leadingZeros(Math.log1p(x)) + 4;
  return toFloat(fixedLn(c, e, w), w);
}

/** ln of a fixed-point t > 0 (W digits) with w digits. */
const lnOfFixed = (t: bigint, W: number, w: number) => fixedLn(t, -W, w);

export function crAsinh(x: number): number {
  if (Number.isNaN(x) || x === 0 || !Number.isFinite(x)) return x;
  const ax = Math.abs(x);
  const w = G + leadingZeros(x) + 5;
  const W = w + 10;
  const X = fixedOf(ax, W);
  const one = pow10(W);
  const t = X + isqrt(X * X + one * one);
  const v = toFloat(lnOfFixed(t, W, w), w);
  return x < 0 ? -v : v;
}

export function crAcosh(x: number): number {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x < 1) return NaN;
  if (x === 1) return 0;
  const w = G + Math.ceil(leadingZeros(x - 1) / 2) + 5;
  const W = w + leadingZeros(x - 1) + 10;
  const X = fixedOf(x, W);
  const one = pow10(W);
  return toFloat(lnOfFixed(X + isqrt(X * X - one * one), W, w), w);
}

export function crAtanh(x: number): number {
  if (Number.isNaN(x) || x === 0) return x;
  const ax = Math.abs(x);
  if (ax > 1) return NaN;
  if (ax === 1) return x * Infinity;
  const w = G + leadingZeros(x) + 5;
  const W = w + leadingZeros(1 - ax) + 10;
  const [n, d] = floatRatio(ax);
  // (1 + x) / (1 - x) = (d + n) / (d - n), exactly, in fixed point.
  const ratio = ((d + n) * pow10(W)) / (d - n);
  const v = toFloat(lnOfFixed(ratio, W, w) / 2n, w);
  return x < 0 ? -v : v;
}

/** The cube root, correctly rounded (glibc's cbrt is not always: it may differ in the last digit). */
export function crCbrt(x: number): number {
  if (Number.isNaN(x) || x === 0 || !Number.isFinite(x)) return x;
  const [n, d] = floatRatio(Math.abs(x));
  // cbrt(n / d) with d = 2^k: scale so the integer cube root has about 64 bits, then round once.
  const k = bitLength(d) - 1;
  const extra = 3 * 70 - bitLength(n) + k;
  const shiftBits = extra + (((3 - ((extra + k) % 3)) % 3) + 3) % 3;
  const scaled = shiftBits >= 0 ? n << BigInt(shiftBits) : n >> BigInt(-shiftBits);
  const e3 = (shiftBits + k) / 3; // result = icbrt(scaled) / 2^e3
  // Newton's iteration from above converges to the integer cube root.
  const approx = Number(scaled);
  let r = Number.isFinite(approx) ? BigInt(Math.ceil(Math.cbrt(approx) * (1 + 2 ** -40))) + 2n : 1n << BigInt(Math.ceil(bitLength(scaled) / 3) + 1);
  for (;;) {
    const nr = (2n * r + scaled / (r * r)) / 3n;
    if (nr >= r) break;
    r = nr;
  }
  while (r * r * r > scaled) r -= 1n;
  if (r * r * r !== scaled) r = (r << 1n) | 1n;
  else r <<= 1n;
  const v = e3 + 1 >= 0 ? intTrueDiv(r, 1n << BigInt(e3 + 1)) : Number(r << BigInt(-(e3 + 1)));
  return x < 0 ? -v : v;
}
