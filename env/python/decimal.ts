// Python's decimal.Decimal under the default context (28 digits, ROUND_HALF_EVEN, Emin -999999,
// Emax 999999; InvalidOperation, DivisionByZero and Overflow trapped, so they raise). A value keeps its
// coefficient and exponent as written: Decimal('1.20') prints 1.20, Decimal('1E+3') prints 1E+3.
import { PyError } from "./values.ts";

export const PREC = 28;
const EMAX = 999_999;
const EMIN = -999_999;
const ETINY = EMIN - PREC + 1;

export const ROUNDINGS = ["ROUND_DOWN", "ROUND_HALF_UP", "ROUND_HALF_EVEN", "ROUND_CEILING", "ROUND_FLOOR", "ROUND_UP", "ROUND_HALF_DOWN", "ROUND_05UP"] as const;
export type Rounding = (typeof ROUNDINGS)[number];

type Special = "" | "NaN" | "sNaN" | "Inf";

export class Decimal {
  constructor(
    /** 1 when negative (zeros and NaNs carry a sign too). */
    readonly sign: 0 | 1,
    /** The coefficient (for a NaN: its payload). */
    readonly coef: bigint,
    readonly exp: number,
    readonly special: Special = "",
  ) {}

  get isNaN(): boolean {
    return this.special === "NaN" || this.special === "sNaN";
  }
  get isInf(): boolean {
    return this.special === "Inf";
  }
  get isZero(): boolean {
    return this.special === "" && this.coef === 0n;
  }
  /** The exponent of the most significant digit. */
  get adjusted(): number {
    return this.special ? 0 : this.exp + digits(this.coef) - 1;
  }

  toString(): string {
    const sign = this.sign ? "-" : "";
    if (this.special === "Inf") return `${sign}Infinity`;
    if (this.isNaN) return `${sign}${this.special}${this.coef ? this.coef : ""}`;
    const ds = this.coef.toString();
    const adj = this.exp + ds.length - 1;
    if (this.exp <= 0 && adj >= -6) {
      if (this.exp === 0) return sign + ds;
      const point = ds.length + this.exp;
      return point > 0 ? `${sign}${ds.slice(0, point)}.${ds.slice(point)}` : `${sign}0.${"0".repeat(-point)}${ds}`;
    }
    const mant = ds.length > 1 ? `${ds[0]}.${ds.slice(1)}` : ds;
    return `${sign}${mant}E${adj >= 0 ? "+" : ""}${adj}`;
  }
  repr(): string {
    return `Decimal('${this.toString()}')`;
  }
}

export const signal = (name: "InvalidOperation" | "DivisionByZero" | "Overflow", condition: string = name) =>
  new PyError(name, `[<class 'decimal.${condition}'>]`);

const POW10: bigint[] = [1n];
export function pow10(n: number): bigint {
  if (n < 400) {
    while (POW10.length <= n) POW10.push(POW10[POW10.length - 1]! * 10n);
    return POW10[n]!;
  }
  return 10n ** BigInt(n);
}

export function digits(c: bigint): number {
  if (c < 0n) c = -c;
  if (c < 10n) return 1;
  return c.toString().length;
}

const ZERO = new Decimal(0, 0n, 0);
const NAN = new Decimal(0, 0n, 0, "NaN");

// ---- construction ----

const DEC_STRING = /^([+-])?(?:(\d+(?:_\d+)*)?(?:\.(\d+(?:_\d+)*)?)?(?:e([+-]?\d+(?:_\d+)*))?|(inf|infinity)|(s?nan)(\d*))$/i;

export function decimalFromString(s: string): Decimal {
  const m = DEC_STRING.exec(s.trim().replace(/[\u00a0\u2000-\u200a\u3000]/g, ""));
  if (!m || (m[5] === undefined && m[6] === undefined && m[2] === undefined && m[3] === undefined))
    throw signal("InvalidOperation", "ConversionSyntax");
  const sign = m[1] === "-" ? 1 : 0;
  if (m[5]) return new Decimal(sign, 0n, 0, "Inf");
  if (m[6]) {
    const payload = m[7] ? BigInt(m[7]) : 0n;
    if (m[7] && digits(payload) > PREC) throw signal("InvalidOperation", "ConversionSyntax");
    return new Decimal(sign, payload, 0, m[6].toLowerCase() === "nan" ? "NaN" : "sNaN");
  }
  if (s.includes("_") && /_(?!\d)|(?<!\d)_/.test(s.trim())) throw signal("InvalidOperation", "ConversionSyntax");
  const intPart = (m[2] ?? "").replace(/_/g, "");
  const frac = (m[3] ?? "").replace(/_/g, "");
  const e = m[4] ? Number(m[4].replace(/_/g, "")) : 0;
  // Exponents past any representable value are clamped by CPython's parser into an error or an overflow.
  if (!Number.isSafeInteger(e)) throw signal("InvalidOperation", "ConversionSyntax");
  return new Decimal(sign, BigInt(intPart + frac || "0"), e - frac.length);
}

export function decimalFromInt(i: bigint): Decimal {
  return new Decimal(i < 0n ? 1 : 0, i < 0n ? -i : i, 0);
}

/** The exact value of a float, as Decimal.from_float. */
export function decimalFromFloat(f: number): Decimal {
  const sign = f < 0 || Object.is(f, -0) ? 1 : 0;
  if (Number.isNaN(f)) return NAN;
  if (!Number.isFinite(f)) return new Decimal(sign, 0n, 0, "Inf");
  const [n, d] = floatRatio(Math.abs(f));
  const k = bitLength(d) - 1;
  return new Decimal(sign, n * 5n ** BigInt(k), -k);
}

export function bitLength(x: bigint): number {
  return x === 0n ? 0 : x.toString(2).length;
}

/** float.as_integer_ratio() of a finite non-negative float, reduced. */
export function floatRatio(f: number): [bigint, bigint] {
  if (f === 0) return [0n, 1n];
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, f);
  const hi = buf.getUint32(0);
  const lo = buf.getUint32(4);
  const bexp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (bexp === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = bexp - 1075;
  }
  while (e < 0 && (mant & 1n) === 0n) {
    mant >>= 1n;
    e++;
  }
  return e >= 0 ? [mant << BigInt(e), 1n] : [mant, 1n << BigInt(-e)];
}

export function decimalToFloat(d: Decimal): number {
  if (d.special === "sNaN") throw new PyError("ValueError", "cannot convert signaling NaN to float");
  if (d.isNaN) return d.sign ? -NaN : NaN;
  if (d.isInf) return d.sign ? -Infinity : Infinity;
  if (d.coef === 0n) return d.sign ? -0 : 0;
  const v = Number(`${d.coef}e${d.exp}`);
  return d.sign ? -v : v;
}

/** The integral part, truncated toward zero (int(d)); `mode` rounds otherwise (floor/ceil). */
export function decimalToInt(d: Decimal, mode: "trunc" | "floor" | "ceil" = "trunc"): bigint {
  if (d.isNaN) throw new PyError("ValueError", "cannot convert NaN to integer");
  if (d.isInf) throw new PyError("OverflowError", "cannot convert Infinity to integer");
  // ehrgym's int bound (2**20 bits, ~315,000 digits).
  if (d.adjusted > 315_000) throw new PyError("MemoryError", "int exceeds ehrgym's bound");
  let v: bigint;
  let exact = true;
  if (d.exp >= 0) v = d.coef * pow10(d.exp);
  else {
    const p = pow10(-d.exp);
    v = d.coef / p;
    exact = v * p === d.coef;
  }
  if (d.sign) v = -v;
  if (!exact && mode === "floor" && d.sign) v -= 1n;
  if (!exact && mode === "ceil" && !d.sign) v += 1n;
  return v;
}

// ---- rounding ----

/** Drop the last `n` digits of c (n > 0) under `mode`; `sticky` says nonzero digits were dropped before. */
function roundDigits(c: bigint, n: number, sign: 0 | 1, mode: Rounding): bigint {
  const p = pow10(n);
  const q = c / p;
  const r = c - q * p;
  if (r === 0n) return q;
  const half = p / 2n;
  let up: boolean;
  switch (mode) {
    case "ROUND_DOWN":
      up = false;
      break;
    case "ROUND_UP":
      up = true;
      break;
    case "ROUND_CEILING":
      up = sign === 0;
      break;
    case "ROUND_FLOOR":
      up = sign === 1;
      break;
    case "ROUND_HALF_UP":
      up = r >= half;
      break;
    case "ROUND_HALF_DOWN":
      up = r > half;
      break;
    case "ROUND_HALF_EVEN":
      up = r > half || (r === half && (q & 1n) === 1n);
      break;
    case "ROUND_05UP":
      up = q % 10n === 0n || q % 10n === 5n;
      break;
  }
  return up ? q + 1n : q;
}

/** Applies the context: precision, then the exponent limits (overflow raises; subnormals round at Etiny). */
export function finish(sign: 0 | 1, coef: bigint, exp: number, mode: Rounding = "ROUND_HALF_EVEN"): Decimal {
  if (coef === 0n) {
    // A zero's exponent is clamped into [Etiny, Emax] (clamp=0).
    return new Decimal(sign, 0n, Math.min(Math.max(exp, ETINY), EMAX));
  }
  let n = digits(coef);
  if (n > PREC) {
    coef = roundDigits(coef, n - PREC, sign, mode);
    exp += n - PREC;
    if (coef === pow10(PREC)) {
      coef /= 10n;
      exp++;
    }
    n = PREC;
  }
  if (exp + n - 1 > EMAX) throw signal("Overflow");
  if (exp < ETINY) {
    coef = roundDigits(coef, ETINY - exp, sign, mode);
    exp = ETINY;
  }
  return new Decimal(sign, coef, exp);
}

// ---- arithmetic ----

function nanResult(a: Decimal, b?: Decimal): Decimal | undefined {
  if (a.special === "sNaN" || b?.special === "sNaN") throw signal("InvalidOperation");
  if (a.isNaN) return new Decimal(a.sign, a.coef, 0, "NaN");
  if (b?.isNaN) return new Decimal(b.sign, b.coef, 0, "NaN");
  return undefined;
}

const inf = (sign: 0 | 1) => new Decimal(sign, 0n, 0, "Inf");

export function decAdd(a: Decimal, b: Decimal, negateB = false): Decimal {
  const bs = (negateB ? b.sign ^ 1 : b.sign) as 0 | 1;
  const nan = nanResult(a, b);
  if (nan) return nan;
  if (a.isInf || b.isInf) {
    if (a.isInf && b.isInf && a.sign !== bs) throw signal("InvalidOperation");
    return a.isInf ? inf(a.sign) : inf(bs);
  }
  let [ac, ae, bc, be] = [a.coef, a.exp, b.coef, b.exp];
  // A zero operand only lowers the exponent, and past PREC digits that is rounding off zeros.
  if ((ac === 0n) !== (bc === 0n)) {
    const [c, e, sg] = ac === 0n ? [bc, be, bs] : [ac, ae, a.sign];
    const pad = Math.min(e - Math.min(ae, be), Math.max(0, PREC - digits(c)));
    return finish(sg, c * pow10(pad), e - pad);
  }
  // Far-apart operands: the smaller one only decides the rounding, so it shrinks to one sticky digit
  // just below the larger one's digits (padded to PREC + 3), which keeps both coefficients small.
  if (ac !== 0n && bc !== 0n) {
    const aAdj = ae + digits(ac) - 1;
    const bAdj = be + digits(bc) - 1;
    const squeeze = (c: bigint, e: number): [bigint, number] => {
      const pad = Math.max(0, PREC + 3 - digits(c));
      return [c * pow10(pad), e - pad];
    };
    if (aAdj - bAdj > PREC + 3) {
      [ac, ae] = squeeze(ac, ae);
      if (be < ae - 1) [bc, be] = [1n, ae - 1];
    } else if (bAdj - aAdj > PREC + 3) {
      [bc, be] = squeeze(bc, be);
      if (ae < be - 1) [ac, ae] = [1n, be - 1];
    }
  }
  const e = Math.min(ae, be);
  const x = (a.sign ? -ac : ac) * pow10(ae - e);
  const y = (bs ? -bc : bc) * pow10(be - e);
  const s = x + y;
  if (s === 0n) return finish(a.sign === 1 && bs === 1 ? 1 : 0, 0n, e);
  return finish(s < 0n ? 1 : 0, s < 0n ? -s : s, e);
}

export function decMul(a: Decimal, b: Decimal): Decimal {
  const nan = nanResult(a, b);
  if (nan) return nan;
  const sign = (a.sign ^ b.sign) as 0 | 1;
  if (a.isInf || b.isInf) {
    if (a.isZero || b.isZero) throw signal("InvalidOperation");
    return inf(sign);
  }
  return finish(sign, a.coef * b.coef, a.exp + b.exp);
}

export function decDiv(a: Decimal, b: Decimal): Decimal {
  const nan = nanResult(a, b);
  if (nan) return nan;
  const sign = (a.sign ^ b.sign) as 0 | 1;
  if (a.isInf) {
    if (b.isInf) throw signal("InvalidOperation");
    return inf(sign);
  }
  if (b.isInf) return finish(sign, 0n, ETINY);
  if (b.isZero) throw a.isZero ? signal("InvalidOperation", "DivisionUndefined") : signal("DivisionByZero");
  const ideal = a.exp - b.exp;
  if (a.isZero) return finish(sign, 0n, ideal);
  const shift = digits(b.coef) - digits(a.coef) + PREC + 1;
  const num = shift > 0 ? a.coef * pow10(shift) : a.coef;
  const den = shift < 0 ? b.coef * pow10(-shift) : b.coef;
  let q = num / den;
  const r = num - q * den;
  let exp = ideal - shift;
  if (r !== 0n) return finish(sign, q * 10n + 1n, exp - 1);
  while (exp < ideal && q % 10n === 0n) {
    q /= 10n;
    exp++;
  }
  return finish(sign, q, exp);
}

/** Truncating integer division and its remainder (Python's // and % on Decimals). */
export function decDivmod(a: Decimal, b: Decimal, which: "div" | "mod"): Decimal {
  const nan = nanResult(a, b);
  if (nan) return nan;
  const sign = (a.sign ^ b.sign) as 0 | 1;
  if (a.isInf) {
    if (b.isInf || which === "mod") throw signal("InvalidOperation");
    return inf(sign);
  }
  if (b.isInf) return which === "div" ? new Decimal(sign, 0n, 0) : finish(a.sign, a.coef, a.exp);
  if (b.isZero) {
    if (which === "mod" || a.isZero) throw signal("InvalidOperation", a.isZero ? "DivisionUndefined" : "InvalidOperation");
    throw signal("DivisionByZero");
  }
  if (a.isZero || a.adjusted < b.adjusted) {
    if (which === "div") return new Decimal(sign, 0n, 0);
    const e = Math.min(a.exp, b.exp);
    return finish(a.sign, a.coef * pow10(a.exp - e), e);
  }
  if (a.adjusted - b.adjusted > PREC) throw signal("InvalidOperation", "DivisionImpossible");
  const e = Math.min(a.exp, b.exp);
  const x = a.coef * pow10(a.exp - e);
  const y = b.coef * pow10(b.exp - e);
  const q = x / y;
  if (digits(q) > PREC) throw signal("InvalidOperation", "DivisionImpossible");
  if (which === "div") return new Decimal(sign, q, 0);
  return finish(a.sign, x - q * y, e);
}

/** -x and +x: the context applies (so -Decimal('0') is Decimal('0')). */
export function decPlus(a: Decimal, negate: boolean): Decimal {
  const nan = nanResult(a);
  if (nan) return nan;
  const sign = (negate ? a.sign ^ 1 : a.sign) as 0 | 1;
  if (a.isInf) return inf(sign);
  if (a.isZero) return finish(0, 0n, a.exp);
  return finish(sign, a.coef, a.exp);
}

export function decCompare(a: Decimal, b: Decimal): number {
  if (a.isNaN || b.isNaN) return NaN;
  if (a.isInf || b.isInf) {
    const va = a.isInf ? (a.sign ? -1 : 1) : 0;
    const vb = b.isInf ? (b.sign ? -1 : 1) : 0;
    if (va !== vb) return va < vb ? -1 : 1;
    if (a.isInf) return 0;
  }
  if (a.isZero && b.isZero) return 0;
  const sa = a.isZero ? 0 : a.sign ? -1 : 1;
  const sb = b.isZero ? 0 : b.sign ? -1 : 1;
  if (sa !== sb) return sa < sb ? -1 : 1;
  const adjA = a.adjusted;
  const adjB = b.adjusted;
  let c: number;
  if (adjA !== adjB) c = adjA < adjB ? -1 : 1;
  else {
    const e = Math.min(a.exp, b.exp);
    const x = a.coef * pow10(a.exp - e);
    const y = b.coef * pow10(b.exp - e);
    c = x < y ? -1 : x > y ? 1 : 0;
  }
  return sa < 0 ? -c : c;
}

function isIntegral(d: Decimal): boolean {
  if (d.special) return false;
  if (d.exp >= 0 || d.coef === 0n) return true;
  return d.coef % pow10(-d.exp) === 0n;
}

/** x ** y. Integral powers are exact before the one rounding; others go through exp(y * ln x). */
export function decPow(a: Decimal, b: Decimal): Decimal {
  const nan = nanResult(a, b);
  if (nan) return nan;
  const bInt = isIntegral(b);
  if (a.isZero && b.isZero) throw signal("InvalidOperation");
  if (a.sign && !a.isZero && !bInt) throw signal("InvalidOperation");
  const n = bInt ? decimalToInt(b) : 0n;
  const sign = (a.sign && bInt && (n & 1n) === 1n ? 1 : 0) as 0 | 1;
  if (b.isInf) {
    if (a.isZero) return b.sign ? inf(0) : new Decimal(0, 0n, 0);
    const cmp1 = decCompare(new Decimal(0, a.coef, a.exp, a.special), new Decimal(0, 1n, 0));
    if (a.sign) throw signal("InvalidOperation");
    if (cmp1 === 0) return finish(0, pow10(PREC - 1), 1 - PREC);
    return (cmp1 > 0) === (b.sign === 0) ? inf(0) : new Decimal(0, 0n, 0);
  }
  if (a.isInf) {
    if (b.isZero) return new Decimal(0, 1n, 0);
    return b.sign ? new Decimal(sign, 0n, 0) : inf(sign);
  }
  if (a.isZero) return b.sign ? inf(sign) : new Decimal(sign, 0n, 0);
  if (bInt) return intPow(a, n, sign);
  return lnExpPow(a, b);
}

function intPow(a: Decimal, n: bigint, sign: 0 | 1): Decimal {
  if (n === 0n) return new Decimal(0, 1n, 0);
  const neg = n < 0n;
  const m = neg ? -n : n;
  const estDigits = Number(m) * digits(a.coef);
  // Exact when it stays small; otherwise a working precision of PREC + the exponent's digits + guard.
  if (!neg && estDigits <= 4000) return finish(sign, a.coef ** m, a.exp * Number(m));
  const adjEstimate = (a.adjusted + 0.5) * Number(m);
  if (!neg && adjEstimate > EMAX + 10) throw signal("Overflow");
  if (neg && estDigits <= 4000) {
    const den = new Decimal(0, a.coef ** m, a.exp * Number(m));
    return decDiv(new Decimal(sign, 1n, 0), den);
  }
  const wp = PREC + m.toString().length + 12;
  let result = { c: 1n, e: 0 };
  let base = { c: a.coef, e: a.exp };
  const trim = (x: { c: bigint; e: number }) => {
    const d = digits(x.c) - wp;
    if (d > 0) {
      const p = pow10(d);
      const q = x.c / p;
      return { c: q * 10n + (q * p === x.c ? 0n : 1n), e: x.e + d - 1 };
    }
    return x;
  };
  let k = m;
  while (k > 0n) {
    if (k & 1n) result = trim({ c: result.c * base.c, e: result.e + base.e });
    k >>= 1n;
    if (k > 0n) base = trim({ c: base.c * base.c, e: base.e + base.e });
    if (Math.abs(result.e) > 4 * EMAX || Math.abs(base.e) > 4 * EMAX) break;
  }
  if (result.e + digits(result.c) - 1 > EMAX + 1 && !neg) throw signal("Overflow");
  const r = new Decimal(0, result.c, result.e);
  return neg ? decDiv(new Decimal(sign, 1n, 0), r) : finish(sign, r.coef, r.exp);
}

// ---- square root, exp, ln (correctly rounded: computed with guard digits until the rounding is sure) ----

export function decSqrt(a: Decimal): Decimal {
  const nan = nanResult(a);
  if (nan) return nan;
  if (a.isZero) return new Decimal(a.sign, 0n, Math.floor(a.exp / 2));
  if (a.sign) throw signal("InvalidOperation");
  if (a.isInf) return inf(0);
  const ideal = Math.floor(a.exp / 2);
  let c = a.coef;
  let e = a.exp;
  if (e & 1) {
    c *= 10n;
    e -= 1;
  }
  // Enough digits that the root has at least PREC + 1.
  const s = Math.max(0, PREC + 1 - Math.floor((digits(c) + 1) / 2));
  const radicand = c * pow10(2 * s);
  let r = isqrt(radicand);
  let exp = e / 2 - s;
  if (r * r !== radicand) return finish(0, r * 10n + 1n, exp - 1);
  while (exp < ideal && r % 10n === 0n) {
    r /= 10n;
    exp++;
  }
  return finish(0, r, exp);
}

export function isqrt(n: bigint): bigint {
  if (n < 0n) throw new PyError("ValueError", "isqrt() argument must be nonnegative");
  if (n < 2n) return n;
  // Newton's iteration from above converges to floor(sqrt(n)); start just above the float estimate.
  const f = Number(n);
  let x = Number.isFinite(f) ? BigInt(Math.ceil(Math.sqrt(f) * (1 + 2 ** -40))) + 1n : 1n << BigInt(Math.ceil(bitLength(n) / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/** Fixed point with `w` decimal digits: value = v / 10^w. */
type Fixed = { v: bigint; w: number };

export function fixedExp(x: Fixed): bigint {
  // exp(x) = exp(x / 2^k)^(2^k); Taylor series on the reduced argument, with 10 guard digits
  // for what the squarings lose.
  const one = pow10(x.w + 10);
  let k = 0;
  let r = x.v * pow10(10);
  const limit = one / 1000n;
  while ((r < 0n ? -r : r) > limit) {
    r /= 2n;
    k++;
  }
  let term = one;
  let sum = one;
  for (let i = 1n; term !== 0n; i++) {
    term = (term * r) / (one * i);
    sum += term;
  }
  for (let i = 0; i < k; i++) sum = (sum * sum) / one;
  return sum / pow10(10);
}

export function fixedLn(c: bigint, e: number, w: number): bigint {
  // ln(c * 10^e) = ln(m) + (e + digits - 1) * ln(10), m in [1, 10); Newton on exp for ln(m).
  const nd = digits(c);
  // m = c / 10^(nd - 1) in fixed point with w digits.
  const shift = w - (nd - 1);
  const m = shift >= 0 ? c * pow10(shift) : c / pow10(-shift);
  const k = BigInt(e + nd - 1);
  const lnM = newtonLn(m, w);
  return k === 0n ? lnM : lnM + k * ln10(w);
}

function newtonLn(m: bigint, w: number): bigint {
  const one = pow10(w);
  // The float guess from m's leading digits (m itself may pass the float range).
  const lead = Number(m / pow10(Math.max(0, w - 15))) / 10 ** Math.min(w, 15);
  let y = BigInt(Math.round(Math.log(lead) * 1e15)) * (w >= 15 ? pow10(w - 15) : 1n);
  for (let i = 0; i < 200; i++) {
    const ey = fixedExp({ v: y, w });
    const delta = (2n * (m - ey) * one) / (m + ey);
    y += delta;
    if (delta === 0n || delta === 1n || delta === -1n) break;
  }
  return y;
}

const LN10 = new Map<number, bigint>();
export function ln10(w: number): bigint {
  let v = LN10.get(w);
  if (v === undefined) {
    v = newtonLn(10n * pow10(w), w);
    LN10.set(w, v);
  }
  return v;
}

/** An approximation coef * 10^exp (error below a few units of coef's last digit) rounded to PREC digits,
 *  or undefined when it lies too close to a rounding boundary to decide. */
function roundApprox(coef: bigint, exp: number, guard: number): Decimal | undefined {
  const sign = coef < 0n ? 1 : 0;
  const a = coef < 0n ? -coef : coef;
  const drop = digits(a) - PREC;
  if (drop <= guard - 2) return undefined;
  const p = pow10(drop);
  const r = a % p;
  const half = p / 2n;
  const slack = 1000n;
  if ((r - half < slack && half - r < slack) || r < slack || p - r < slack) return undefined;
  return finish(sign as 0 | 1, a, exp);
}

/** Ziv's loop: more guard digits until the rounding is sure. `compute(w)` approximates with w digits. */
function correctlyRounded(compute: (w: number) => { coef: bigint; exp: number }): Decimal {
  let last = { coef: 0n, exp: 0 };
  for (let guard = 12; guard <= 48; guard *= 2) {
    last = compute(PREC + guard);
    const d = roundApprox(last.coef, last.exp, guard);
    if (d) return d;
  }
  // Still at a boundary with 48 guard digits: the result is exact there (4 ** 0.5), so round the approximation.
  const neg = last.coef < 0n;
  return finish(neg ? 1 : 0, neg ? -last.coef : last.coef, last.exp);
}

/** exp(L) for L in fixed point (w digits): exp(r) * 10^k with L = k ln 10 + r, so any magnitude costs the same. */
export function expOfFixed(L: bigint, w: number): { coef: bigint; exp: number } {
  const l10 = ln10(w);
  let k = L / l10;
  const r = L - k * l10;
  if (r < 0n) k -= 1n;
  const rr = r < 0n ? r + l10 : r;
  return { coef: fixedExp({ v: rr, w }), exp: Number(k) - w };
}

function toFixed(a: Decimal, w: number): bigint {
  const shift = a.exp + w;
  const v = shift >= 0 ? a.coef * pow10(shift) : a.coef / pow10(-shift);
  return a.sign ? -v : v;
}

const EXP_OVERFLOW = 2302587;
const EXP_UNDERFLOW = -2302650;

export function decExp(a: Decimal): Decimal {
  const nan = nanResult(a);
  if (nan) return nan;
  if (a.isInf) return a.sign ? new Decimal(0, 0n, 0) : inf(0);
  if (a.isZero) return new Decimal(0, 1n, 0);
  const x = decimalToFloat(a);
  if (x > EXP_OVERFLOW) throw signal("Overflow");
  if (x < EXP_UNDERFLOW) return finish(0, 0n, ETINY);
  // Tiny arguments: exp(x) = 1 + x + ..., their digits need room past the point.
  const near = Math.max(0, -a.adjusted);
  return correctlyRounded((w) => expOfFixed(toFixed(a, w + near), w + near));
}

export function decLn(a: Decimal): Decimal {
  const nan = nanResult(a);
  if (nan) return nan;
  if (a.isZero) return inf(1);
  if (a.sign) throw signal("InvalidOperation");
  if (a.isInf) return inf(0);
  if (a.coef === 1n && a.exp === 0) return new Decimal(0, 0n, 0);
  // Near 1, ln is small: more digits after the point keep PREC significant ones.
  const near = lnNear(a);
  return correctlyRounded((w) => ({ coef: fixedLn(a.coef, a.exp, w + near), exp: -(w + near) }));
}

function lnNear(a: Decimal): number {
  const f = Math.abs(Math.log(decimalToFloat(a)));
  if (f === 0 || !Number.isFinite(f)) {
    // |x - 1| below float resolution: count the zeros after 1.000...
    const d = decAdd(a, new Decimal(0, 1n, 0), true);
    return d.isZero ? 0 : Math.max(0, -d.adjusted) + 2;
  }
  return Math.max(0, -Math.floor(Math.log10(f)));
}

export function decLog10(a: Decimal): Decimal {
  const nan = nanResult(a);
  if (nan) return nan;
  if (a.isZero) return inf(1);
  if (a.sign) throw signal("InvalidOperation");
  if (a.isInf) return inf(0);
  // Exact powers of ten give an exact integer.
  const s = a.coef.toString();
  if (/^10*$/.test(s)) return decimalFromInt(BigInt(a.exp + s.length - 1));
  const near = lnNear(a);
  return correctlyRounded((w) => {
    const ww = w + near + 2;
    return { coef: (fixedLn(a.coef, a.exp, ww) * pow10(ww)) / ln10(ww), exp: -ww };
  });
}

/** ln(a) as a float, for any exponent (a > 0, finite). */
function lnApprox(a: Decimal): number {
  const ds = a.coef.toString();
  return Math.log(Number(`0.${ds.slice(0, 17)}`)) + (a.exp + ds.length) * Math.LN10;
}

function lnExpPow(a: Decimal, b: Decimal): Decimal {
  // x ** y = exp(y * ln x): ln x needs as many more digits as y has before its point.
  const approx = decimalToFloat(b) * lnApprox(a);
  if (approx > EXP_OVERFLOW) throw signal("Overflow");
  if (approx < EXP_UNDERFLOW) return finish(0, 0n, ETINY);
  const bMag = Math.max(0, b.adjusted + 1);
  return correctlyRounded((w) => {
    const ww = w + bMag + 2;
    const L = (fixedLn(a.coef, a.exp, ww) * toFixed(b, ww)) / pow10(ww);
    return expOfFixed(L, ww);
  });
}

// ---- methods ----

export function decQuantize(a: Decimal, q: Decimal, mode: Rounding = "ROUND_HALF_EVEN"): Decimal {
  const nan = nanResult(a, q);
  if (nan) return nan;
  if (a.isInf || q.isInf) {
    if (a.isInf && q.isInf) return inf(a.sign);
    throw signal("InvalidOperation");
  }
  const e = q.exp;
  if (e > EMAX || e < ETINY) throw signal("InvalidOperation");
  if (!a.isZero && a.adjusted - e + 1 > PREC) throw signal("InvalidOperation");
  let c: bigint;
  if (e <= a.exp) c = a.coef * pow10(a.exp - e);
  else c = roundDigits(a.coef, e - a.exp, a.sign, mode);
  if (digits(c) > PREC) throw signal("InvalidOperation");
  if (c !== 0n && e + digits(c) - 1 > EMAX) throw signal("InvalidOperation");
  return new Decimal(a.sign, c, e);
}

export function decToIntegral(a: Decimal, mode: Rounding = "ROUND_HALF_EVEN"): Decimal {
  const nan = nanResult(a);
  if (nan) return nan;
  if (a.isInf || a.exp >= 0) return a;
  return new Decimal(a.sign, roundDigits(a.coef, -a.exp, a.sign, mode), 0);
}

export function decNormalize(a: Decimal): Decimal {
  const nan = nanResult(a);
  if (nan) return nan;
  if (a.isInf) return a;
  const r = finish(a.sign, a.coef, a.exp);
  if (r.isZero) return new Decimal(a.sign, 0n, 0);
  let c = r.coef;
  let e = r.exp;
  while (c % 10n === 0n && e < EMAX) {
    c /= 10n;
    e++;
  }
  return new Decimal(r.sign, c, e);
}

export const DECIMAL_ZERO = ZERO;
