// Python's math module (3.11) as an expression reaches it: its functions with CPython's argument
// conversions and errors (ValueError "math domain error", OverflowError "math range error"), its
// integer functions exact on ints of any size, fsum and hypot correctly rounded, and its constants.
import { LIMITS, floatOf, floatToInt, intTrueDiv, memoryError } from "./arith.ts";
import { Decimal, bitLength, decimalToFloat, decimalToInt, floatRatio, isqrt } from "./decimal.ts";
import { type Kwargs, type NativeFn, type Val, PyBuiltin, PyModule, PyTuple, typeOf } from "./objects.ts";
import { crAcosh, crAsin, crAsinh, crAtan, crAtan2, crAtanh, crCbrt, crExp, crExp2, crExpm1, crHyper, crLog, crLog1p, glibcLog10, crPow, crTrig } from "./libm.ts";
import { PyError } from "./values.ts";

const domain = () => new PyError("ValueError", "math domain error");
const range = () => new PyError("OverflowError", "math range error");

/** PyFloat_AsDouble: int, bool, float and Decimal (its __float__); anything else TypeError. */
export function toFloat(v: Val): number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return floatOf(v);
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v instanceof Decimal) return decimalToFloat(v);
  throw new PyError("TypeError", `must be real number, not ${typeOf(v)}`);
}

/** An integer argument (__index__): int or bool. */
export function toIndex(v: Val): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "boolean") return v ? 1n : 0n;
  throw new PyError("TypeError", `'${typeOf(v)}' object cannot be interpreted as an integer`);
}

function args(name: string, a: Val[], kw: Kwargs, min: number, max = min): Val[] {
  if (kw.size) throw new PyError("TypeError", `math.${name}() takes no keyword arguments`);
  if (a.length < min || a.length > max) {
    const want = min === max ? `exactly ${min} argument${min === 1 ? "" : "s"}` : `at least ${min} argument${min === 1 ? "" : "s"}`;
    throw new PyError("TypeError", min === max && min === 1 ? `math.${name}() takes exactly one argument (${a.length} given)` : `${name} expected ${want}, got ${a.length}`);
  }
  return a;
}

/** math_1: a libm function of one float, with CPython's reading of its NaN and infinite results. */
function unary(name: string, f: (x: number) => number, canOverflow = false): [string, NativeFn] {
  return [
    name,
    (a, kw) => {
      const x = toFloat(args(name, a, kw, 1)[0]!);
      const r = f(x);
      if (Number.isNaN(r) && !Number.isNaN(x)) throw domain();
      if (!Number.isFinite(r) && !Number.isNaN(r) && Number.isFinite(x)) throw canOverflow ? range() : domain();
      return r;
    },
  ];
}

const LN = (x: number) => crLog(x);
const LOG2 = (x: number) => crLog(x, 2);
const LOG10 = glibcLog10;

/** log/log2/log10 take ints of any size: past the float range, through frexp. */
function logOf(v: Val, f: (x: number) => number): number {
  if (typeof v === "bigint" || typeof v === "boolean") {
    const i = typeof v === "boolean" ? (v ? 1n : 0n) : v;
    if (i <= 0n) throw domain();
    const x = Number(i);
    if (Number.isFinite(x)) return logOf(x, f);
    const e = bitLength(i);
    const mant = Number(i >> BigInt(e - 60)) / 2 ** 60; // in [0.5, 1)
    return f(mant) + f(2) * e;
  }
  const x = toFloat(v);
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x <= 0) throw domain();
  return f(x);
}

function log(a: Val[], kw: Kwargs): Val {
  args("log", a, kw, 1, 2);
  const num = logOf(a[0]!, LN);
  if (a.length === 1) return num;
  const den = logOf(a[1]!, LN);
  if (den === 0) throw new PyError("ZeroDivisionError", "float division by zero");
  return num / den;
}

function floorCeil(name: "floor" | "ceil"): NativeFn {
  return (a, kw) => {
    const v = args(name, a, kw, 1)[0]!;
    if (typeof v === "bigint") return v;
    if (typeof v === "boolean") return v ? 1n : 0n;
    if (v instanceof Decimal) return decimalToInt(v, name);
    const x = toFloat(v);
    return floatToInt(name === "floor" ? Math.floor(x) : Math.ceil(x));
  };
}

function trunc(a: Val[], kw: Kwargs): Val {
  const v = args("trunc", a, kw, 1)[0]!;
  if (typeof v === "bigint") return v;
  if (typeof v === "boolean") return v ? 1n : 0n;
  if (v instanceof Decimal) return decimalToInt(v);
  if (typeof v === "number") return floatToInt(v);
  throw new PyError("TypeError", `type ${typeOf(v)} doesn't define __trunc__ method`);
}

function pow(a: Val[], kw: Kwargs): Val {
  const [xv, yv] = args("pow", a, kw, 2);
  const x = toFloat(xv!);
  const y = toFloat(yv!);
  if (!Number.isFinite(x) || !Number.isFinite(y)) {
    if (Number.isNaN(x)) return y === 0 ? 1 : x;
    if (Number.isNaN(y)) return x === 1 ? 1 : y;
    if (!Number.isFinite(x)) {
      const odd = Number.isFinite(y) && Math.abs(y % 2) === 1;
      if (y > 0) return odd ? x : Math.abs(x);
      if (y === 0) return 1;
      return odd ? (x < 0 ? -0 : 0) : 0;
    }
    if (Math.abs(x) === 1) return 1;
    if (y > 0 && Math.abs(x) > 1) return y;
    if (y < 0 && Math.abs(x) < 1) return -y;
    return 0;
  }
  if (x === 1 || y === 0) return 1;
  let r: number;
  if (x === 0) r = y < 0 ? Infinity : Math.abs(y % 2) === 1 ? x : 0;
  else if (x < 0) r = Number.isInteger(y) ? (Math.abs(y % 2) === 1 ? -1 : 1) * crPow(-x, y) : NaN;
  else r = crPow(x, y);
  if (Number.isNaN(r)) throw domain();
  if (!Number.isFinite(r)) throw x === 0 ? domain() : range();
  return r;
}

function factorial(a: Val[], kw: Kwargs): Val {
  const v = args("factorial", a, kw, 1)[0]!;
  if (typeof v === "number") throw new PyError("TypeError", "'float' object cannot be interpreted as an integer");
  const n = toIndex(v);
  if (n < 0n) throw new PyError("ValueError", "factorial() not defined for negative values");
  if (n > 9223372036854775807n) throw new PyError("OverflowError", "factorial() argument should not exceed 9223372036854775807");
  const k = Number(n);
  // log2(n!) ~ n log2 n - n log2 e: refuse what would pass the int bound before computing it.
  if (k > 2 && k * Math.log2(k) - k * Math.LOG2E > LIMITS.intBits) throw memoryError("int");
  return product(1n, n);
}

/** lo * (lo+1) * ... * hi by halves (fast for big ranges). */
function product(lo: bigint, hi: bigint): bigint {
  if (hi < lo) return 1n;
  if (hi - lo < 16n) {
    let r = 1n;
    for (let i = lo; i <= hi; i++) r *= i;
    return r;
  }
  const mid = (lo + hi) / 2n;
  return product(lo, mid) * product(mid + 1n, hi);
}

function gcd2(x: bigint, y: bigint): bigint {
  x = x < 0n ? -x : x;
  y = y < 0n ? -y : y;
  while (y) [x, y] = [y, x % y];
  return x;
}

function comb(a: Val[], kw: Kwargs): Val {
  const [nv, kv] = args("comb", a, kw, 2);
  const n = toIndex(nv!);
  let k = toIndex(kv!);
  if (n < 0n) throw new PyError("ValueError", "n must be a non-negative integer");
  if (k < 0n) throw new PyError("ValueError", "k must be a non-negative integer");
  if (k > n) return 0n;
  if (n - k < k) k = n - k;
  if (Number(k) * bitLength(n) > LIMITS.intBits) throw memoryError("int");
  let r = 1n;
  for (let i = 1n; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

function perm(a: Val[], kw: Kwargs): Val {
  const [nv, kv] = args("perm", a, kw, 1, 2);
  const n = toIndex(nv!);
  if (n < 0n) throw new PyError("ValueError", "n must be a non-negative integer");
  if (kv === undefined || kv === null) return factorial([n], new Map());
  const k = toIndex(kv);
  if (k < 0n) throw new PyError("ValueError", "k must be a non-negative integer");
  if (k > n) return 0n;
  if (Number(k) * bitLength(n) > LIMITS.intBits) throw memoryError("int");
  return product(n - k + 1n, n);
}

/** A finite float as an exact integer times 2^-1074. */
function scaled(x: number): bigint {
  const [n, d] = floatRatio(Math.abs(x));
  const v = n << BigInt(1074 - (bitLength(d) - 1));
  return x < 0 ? -v : v;
}
const TWO_1074 = 1n << 1074n;

function fsum(a: Val[], kw: Kwargs, iterate: (v: Val) => Val[]): Val {
  const items = iterate(args("fsum", a, kw, 1)[0]!);
  let exact = 0n;
  let special: number | undefined;
  let infSeen = 0;
  for (const it of items) {
    const x = toFloat(it);
    if (Number.isFinite(x)) exact += scaled(x);
    else if (Number.isNaN(x)) special = NaN;
    else {
      if (infSeen && Math.sign(infSeen) !== Math.sign(x)) throw new PyError("ValueError", "-inf + inf in fsum");
      infSeen = x;
    }
  }
  if (special !== undefined) return special;
  if (infSeen) return infSeen;
  try {
    return intTrueDiv(exact, TWO_1074);
  } catch {
    throw new PyError("OverflowError", "intermediate overflow in fsum");
  }
}

/** sqrt(sum of squares), correctly rounded (CPython's vector_norm is, in all but rare cases). */
function norm(xs: number[]): number {
  let special: number | undefined;
  for (const x of xs) {
    if (!Number.isFinite(x)) special = Number.isNaN(x) && special !== Infinity ? NaN : Infinity;
  }
  if (special !== undefined) return special;
  let s = 0n;
  for (const x of xs) {
    const v = scaled(Math.abs(x));
    s += v * v;
  }
  if (s === 0n) return 0;
  const g = 128n;
  const big = s << (2n * g);
  let r = isqrt(big);
  if (r * r !== big) r |= 1n; // sticky: the root is not exact
  const v = intTrueDiv(r, TWO_1074 << g);
  if (!Number.isFinite(v)) throw range();
  return v;
}

function hypot(a: Val[], kw: Kwargs): Val {
  if (kw.size) throw new PyError("TypeError", "hypot() takes no keyword arguments");
  return norm(a.map(toFloat));
}

function isclose(a: Val[], kw: Kwargs): Val {
  if (a.length !== 2) throw new PyError("TypeError", `isclose() takes exactly 2 positional arguments (${a.length} given)`);
  let rel = 1e-9;
  let abs = 0;
  for (const [k, v] of kw) {
    if (k === "rel_tol") rel = toFloat(v);
    else if (k === "abs_tol") abs = toFloat(v);
    else throw new PyError("TypeError", `isclose() got an unexpected keyword argument '${k}'`);
  }
  const x = toFloat(a[0]!);
  const y = toFloat(a[1]!);
  if (rel < 0 || abs < 0) throw new PyError("ValueError", "tolerances must be non-negative");
  if (x === y) return true;
  if (!Number.isFinite(x) || !Number.isFinite(y)) return false;
  const diff = Math.abs(y - x);
  return diff <= Math.abs(rel * y) || diff <= Math.abs(rel * x) || diff <= abs;
}

function frexp(x: number): [number, number] {
  if (x === 0 || !Number.isFinite(x)) return [x, 0];
  let e = Math.max(-1073, Math.floor(Math.log2(Math.abs(x))) + 1);
  let m = x * 2 ** -e;
  while (Math.abs(m) < 0.5) {
    m *= 2;
    e--;
  }
  while (Math.abs(m) >= 1) {
    m /= 2;
    e++;
  }
  return [m, e];
}

function ldexp(a: Val[], kw: Kwargs): Val {
  const [xv, iv] = args("ldexp", a, kw, 2);
  const x = toFloat(xv!);
  if (typeof iv === "number") throw new PyError("TypeError", "Expected an int as second argument to ldexp.");
  const i = toIndex(iv!);
  if (x === 0 || !Number.isFinite(x)) return x;
  if (i > 10000n) throw range();
  if (i < -10000n) return x < 0 ? -0 : 0;
  const [m, me] = frexp(x);
  const total = me + Number(i);
  if (total > 1024) throw range();
  if (total < -1021) return roundToSubnormal(m, total);
  return m * 2 * 2 ** (total - 1);
}

/** m * 2^e (0.5 <= |m| < 1) rounded once to the float grid, subnormals included. */
function roundToSubnormal(m: number, e: number): number {
  if (e > -1021) return m * 2 ** e;
  const [n, d] = floatRatio(Math.abs(m));
  const num = n;
  const den = d << BigInt(-e);
  const v = intTrueDiv(num, den);
  return m < 0 ? -v : v;
}

function nextafter(a: Val[], kw: Kwargs): Val {
  const [xv, yv] = args("nextafter", a, kw, 2);
  const x = toFloat(xv!);
  const y = toFloat(yv!);
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === y) return y;
  if (x === 0) return y > 0 ? 5e-324 : -5e-324;
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  let bits = buf.getBigUint64(0);
  bits += (y > x) === (x > 0) ? 1n : -1n;
  buf.setBigUint64(0, bits);
  return buf.getFloat64(0);
}

function ulp(x: number): number {
  if (Number.isNaN(x)) return x;
  x = Math.abs(x);
  if (!Number.isFinite(x)) return x;
  const next = nextafter([x, Infinity], new Map()) as number;
  if (!Number.isFinite(next)) return x - (nextafter([x, -Infinity], new Map()) as number);
  return next - x;
}

/** IEEE 754 remainder: x - n*y with n the integer nearest x/y (ties to even). */
function remainder(x: number, y: number): number {
  if (Number.isNaN(x)) return x;
  if (Number.isNaN(y)) return y;
  if (!Number.isFinite(x) || y === 0) throw domain();
  if (!Number.isFinite(y)) return x;
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  let m = ax % ay; // exact
  const half = ay / 2;
  if (m > half || (m === half && ((ax - m) / ay) % 2 === 1)) m -= ay;
  return x < 0 || Object.is(x, -0) ? -m : m;
}

function fmod(x: number, y: number): number {
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (!Number.isFinite(y) && Number.isFinite(x)) return x;
  if (!Number.isFinite(x) || y === 0) throw domain();
  return x % y;
}

export function mathModule(iterate: (v: Val) => Val[], multiply: (a: Val, b: Val) => Val): PyModule {
  const two = (name: string, f: (x: number, y: number) => Val): [string, NativeFn] => [
    name,
    (a, kw) => {
      const [x, y] = args(name, a, kw, 2);
      return f(toFloat(x!), toFloat(y!));
    },
  ];
  const one = (name: string, f: (x: number) => Val): [string, NativeFn] => [name, (a, kw) => f(toFloat(args(name, a, kw, 1)[0]!))];
  const fns: [string, NativeFn][] = [
    unary("sqrt", Math.sqrt),
    unary("exp", crExp, true),
    unary("exp2", crExp2, true),
    unary("expm1", crExpm1, true),
    unary("log1p", crLog1p),
    unary("cbrt", crCbrt),
    unary("sin", (x) => (Number.isFinite(x) ? crTrig(x, "sin") : NaN)),
    unary("cos", (x) => (Number.isFinite(x) ? crTrig(x, "cos") : NaN)),
    unary("tan", (x) => (Number.isFinite(x) ? crTrig(x, "tan") : NaN)),
    unary("asin", (x) => crAsin(x)),
    unary("acos", (x) => crAsin(x, true)),
    unary("atan", crAtan),
    unary("sinh", (x) => crHyper(x, "sinh"), true),
    unary("cosh", (x) => crHyper(x, "cosh"), true),
    unary("tanh", (x) => crHyper(x, "tanh")),
    unary("asinh", crAsinh),
    unary("acosh", crAcosh),
    unary("atanh", crAtanh),
    unary("fabs", Math.abs),
    ["log", log],
    ["log2", (a, kw) => logOf(args("log2", a, kw, 1)[0]!, LOG2)],
    ["log10", (a, kw) => logOf(args("log10", a, kw, 1)[0]!, LOG10)],
    ["pow", pow],
    ["floor", floorCeil("floor")],
    ["ceil", floorCeil("ceil")],
    ["trunc", trunc],
    ["factorial", factorial],
    ["gcd", (a, kw) => args("gcd", a, kw, 0, Infinity).map(toIndex).reduce(gcd2, 0n)],
    [
      "lcm",
      (a, kw) =>
        args("lcm", a, kw, 0, Infinity)
          .map(toIndex)
          .reduce((x, y) => {
            if (x === 0n || y === 0n) return 0n;
            const r = (x / gcd2(x, y)) * y;
            return r < 0n ? -r : r;
          }, 1n),
    ],
    [
      "isqrt",
      (a, kw) => {
        const v = args("isqrt", a, kw, 1)[0]!;
        if (typeof v === "number") throw new PyError("TypeError", "'float' object cannot be interpreted as an integer");
        const n = toIndex(v);
        if (n < 0n) throw new PyError("ValueError", "isqrt() argument must be nonnegative");
        return isqrt(n);
      },
    ],
    ["comb", comb],
    ["perm", perm],
    ["fsum", (a, kw) => fsum(a, kw, iterate)],
    [
      "prod",
      (a, kw) => {
        if (a.length !== 1) throw new PyError("TypeError", `prod() takes exactly 1 positional argument (${a.length} given)`);
        let acc: Val = 1n;
        for (const [k, v] of kw) {
          if (k !== "start") throw new PyError("TypeError", `'${k}' is an invalid keyword argument for prod()`);
          acc = v;
        }
        for (const x of iterate(a[0]!)) acc = multiply(acc, x);
        return acc;
      },
    ],
    ["hypot", hypot],
    [
      "dist",
      (a, kw) => {
        const [p, q] = args("dist", a, kw, 2);
        const ps = iterate(p!).map(toFloat);
        const qs = iterate(q!).map(toFloat);
        if (ps.length !== qs.length) throw new PyError("ValueError", "both points must have the same number of dimensions");
        return norm(ps.map((x, i) => x - qs[i]!));
      },
    ],
    ["isclose", isclose],
    one("isfinite", (x) => Number.isFinite(x)),
    one("isinf", (x) => x === Infinity || x === -Infinity),
    one("isnan", (x) => Number.isNaN(x)),
    two("copysign", (x, y) => {
      return y < 0 || Object.is(y, -0) ? -Math.abs(x) : Math.abs(x);
    }),
    two("fmod", fmod),
    two("atan2", crAtan2),
    two("remainder", remainder),
    ["ldexp", ldexp],
    ["nextafter", nextafter],
    one("ulp", ulp),
    one("modf", (x) => {
      if (!Number.isFinite(x)) return new PyTuple(Number.isNaN(x) ? [x, x] : [x > 0 ? 0 : -0, x]);
      const ip = Math.trunc(x);
      const frac = x - ip;
      return new PyTuple([frac === 0 && (x < 0 || Object.is(x, -0)) ? -0 : frac, ip === 0 && (x < 0 || Object.is(x, -0)) ? -0 : ip]);
    }),
    one("frexp", (x) => {
      const [m, e] = frexp(x);
      return new PyTuple([m, BigInt(e)]);
    }),
    one("degrees", (x) => x * (180 / Math.PI)),
    one("radians", (x) => x * (Math.PI / 180)),
  ];
  const members = new Map<string, Val>([
    ["pi", Math.PI],
    ["e", Math.E],
    ["tau", 2 * Math.PI],
    ["inf", Infinity],
    ["nan", NaN],
  ]);
  for (const [name, fn] of fns) members.set(name, new PyBuiltin(name, fn));
  return new PyModule("math", members, "<module 'math' (built-in)>");
}
