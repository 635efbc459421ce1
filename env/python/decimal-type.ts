// The `Decimal` class as an expression reaches it: its constructor (str, int, float, Decimal, tuple)
// and its methods and attributes under the default context.
import { bindArgs } from "./datetime-module.ts";
import {
  Decimal,
  ROUNDINGS,
  type Rounding,
  decAdd,
  decCompare,
  decExp,
  decLn,
  decLog10,
  decMul,
  decNormalize,
  decQuantize,
  decSqrt,
  decToIntegral,
  decimalFromFloat,
  decimalFromInt,
  decimalFromString,
  finish,
  pow10,
  signal,
} from "./decimal.ts";
import { type Val, NamedTuple, PyBuiltin, PyList, PyTuple, PyType, typeOf } from "./objects.ts";
import { PyError } from "./values.ts";

function fromTuple(items: Val[]): Decimal {
  if (items.length !== 3) throw new PyError("ValueError", "argument must be a sequence of length 3");
  const [sign, ds, exp] = items;
  if (!(sign === 0n || sign === 1n || sign === false || sign === true)) throw new PyError("ValueError", "sign must be an integer with the value 0 or 1");
  const s = sign === 1n || sign === true ? 1 : 0;
  const digitItems = ds instanceof PyTuple || ds instanceof PyList ? ds.items : undefined;
  if (!digitItems) throw new PyError("ValueError", "coefficient must be a tuple of digits");
  let text = "";
  for (const d of digitItems) {
    if (typeof d !== "bigint" || d < 0n || d > 9n) throw new PyError("ValueError", "coefficient must be a tuple of digits");
    text += d.toString();
  }
  if (exp === "F") return new Decimal(s, 0n, 0, "Inf");
  if (exp === "n" || exp === "N") return new Decimal(s, BigInt(text || "0"), 0, exp === "n" ? "NaN" : "sNaN");
  if (typeof exp !== "bigint") throw new PyError("ValueError", "exponent must be an integer");
  return new Decimal(s, BigInt(text || "0"), Number(exp));
}

export function toDecimal(v: Val): Decimal {
  if (v instanceof Decimal) return v;
  if (typeof v === "string") return decimalFromString(v);
  if (typeof v === "bigint") return decimalFromInt(v);
  if (typeof v === "boolean") return decimalFromInt(v ? 1n : 0n);
  if (typeof v === "number") return decimalFromFloat(v);
  if (v instanceof PyTuple || v instanceof PyList) return fromTuple(v.items);
  throw new PyError("TypeError", `conversion from ${typeOf(v)} to Decimal is not supported`);
}

/** An operand of a Decimal method: Decimal or int (a float is refused). */
function operand(v: Val | undefined): Decimal {
  if (v instanceof Decimal) return v;
  if (typeof v === "bigint" || typeof v === "boolean") return toDecimal(v);
  throw new PyError("TypeError", `conversion from ${typeOf(v ?? null)} to Decimal is not supported`);
}

function rounding(v: Val | undefined): Rounding | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string" && (ROUNDINGS as readonly string[]).includes(v)) return v as Rounding;
  throw new PyError("TypeError", "valid values for rounding are:\n  [ROUND_CEILING, ROUND_FLOOR, ROUND_UP, ROUND_DOWN,\n   ROUND_HALF_UP, ROUND_HALF_DOWN, ROUND_HALF_EVEN,\n   ROUND_05UP]");
}

function contextArg(v: Val | undefined): void {
  if (v !== undefined && v !== null) throw new PyError("TypeError", "optional argument must be a context");
}

export const DECIMAL_TYPE: PyType = new PyType(
  "decimal.Decimal",
  (args, kw) => {
    const [value, context] = bindArgs("Decimal", ["value", "context"], args, kw, 0);
    contextArg(context);
    return value === undefined ? new Decimal(0, 0n, 0) : toDecimal(value);
  },
  (name) => {
    if (name === "from_float") {
      return new PyBuiltin("from_float", (args, kw) => {
        const [f] = bindArgs("from_float", ["f"], args, kw, 1);
        if (typeof f === "number" || typeof f === "bigint" || typeof f === "boolean") return toDecimal(f);
        throw new PyError("TypeError", `argument must be int or float`);
      }, DECIMAL_TYPE);
    }
    return undefined;
  },
);

const m = (self: Decimal, name: string, fn: (args: Val[], kw: Map<string, Val>) => Val) => new PyBuiltin(name, fn, self);

/** A method taking only an optional context: `fn` on the value. */
const unaryMethod = (self: Decimal, name: string, fn: (d: Decimal) => Val) =>
  m(self, name, (args, kw) => {
    const [ctx] = bindArgs(name, ["context"], args, kw, 0);
    contextArg(ctx);
    return fn(self);
  });

function compareTotal(a: Decimal, b: Decimal): Decimal {
  const c = decCompare(a, b);
  if (Number.isNaN(c)) {
    if (a.special === "sNaN" || b.special === "sNaN") throw signal("InvalidOperation");
    return new Decimal(0, 0n, 0, "NaN");
  }
  return c === 0 ? new Decimal(0, 0n, 0) : new Decimal(c < 0 ? 1 : 0, 1n, 0);
}

function minMax(a: Decimal, b: Decimal, max: boolean): Decimal {
  if (a.special === "sNaN" || b.special === "sNaN") throw signal("InvalidOperation");
  if (a.isNaN && !b.isNaN) return finish(b.sign, b.coef, b.exp);
  if (b.isNaN && !a.isNaN) return finish(a.sign, a.coef, a.exp);
  if (a.isNaN) return a;
  let c = decCompare(a, b);
  if (c === 0) {
    // Equal values: the sign, then the exponent decide (the total ordering).
    if (a.sign !== b.sign) c = a.sign ? -1 : 1;
    else c = (a.exp < b.exp ? -1 : a.exp > b.exp ? 1 : 0) * (a.sign ? -1 : 1);
  }
  const r = (c >= 0) === max ? a : b;
  return r.isInf ? r : finish(r.sign, r.coef, r.exp);
}

export function decimalAttr(d: Decimal, name: string): Val | undefined {
  switch (name) {
    case "real":
      return d;
    case "imag":
      return new Decimal(0, 0n, 0);
    case "conjugate":
      return m(d, name, () => d);
    case "sqrt":
      return unaryMethod(d, name, decSqrt);
    case "exp":
      return unaryMethod(d, name, decExp);
    case "ln":
      return unaryMethod(d, name, decLn);
    case "log10":
      return unaryMethod(d, name, decLog10);
    case "normalize":
      return unaryMethod(d, name, decNormalize);
    case "adjusted":
      return m(d, name, () => BigInt(d.special ? 0 : d.adjusted));
    case "is_zero":
      return m(d, name, () => d.isZero);
    case "is_signed":
      return m(d, name, () => d.sign === 1);
    case "is_nan":
      return m(d, name, () => d.isNaN);
    case "is_qnan":
      return m(d, name, () => d.special === "NaN");
    case "is_snan":
      return m(d, name, () => d.special === "sNaN");
    case "is_infinite":
      return m(d, name, () => d.isInf);
    case "is_finite":
      return m(d, name, () => !d.special);
    case "is_normal":
      return unaryMethod(d, name, () => !d.special && !d.isZero && d.adjusted >= -999999);
    case "is_subnormal":
      return unaryMethod(d, name, () => !d.special && !d.isZero && d.adjusted < -999999);
    case "is_canonical":
      return m(d, name, () => true);
    case "copy_abs":
      return m(d, name, () => new Decimal(0, d.coef, d.exp, d.special));
    case "copy_negate":
      return m(d, name, () => new Decimal((d.sign ^ 1) as 0 | 1, d.coef, d.exp, d.special));
    case "copy_sign":
      return m(d, name, (args, kw) => {
        const [o] = bindArgs(name, ["other", "context"], args, kw, 1);
        return new Decimal(operand(o).sign, d.coef, d.exp, d.special);
      });
    case "quantize":
      return m(d, name, (args, kw) => {
        const [exp, rnd, ctx] = bindArgs(name, ["exp", "rounding", "context"], args, kw, 1);
        contextArg(ctx);
        return decQuantize(d, operand(exp), rounding(rnd));
      });
    case "to_integral":
    case "to_integral_value":
    case "to_integral_exact":
      return m(d, name, (args, kw) => {
        const [rnd, ctx] = bindArgs(name, ["rounding", "context"], args, kw, 0);
        contextArg(ctx);
        return decToIntegral(d, rounding(rnd));
      });
    case "compare":
      return m(d, name, (args, kw) => {
        const [o, ctx] = bindArgs(name, ["other", "context"], args, kw, 1);
        contextArg(ctx);
        return compareTotal(d, operand(o));
      });
    case "max":
    case "min":
      return m(d, name, (args, kw) => {
        const [o, ctx] = bindArgs(name, ["other", "context"], args, kw, 1);
        contextArg(ctx);
        return minMax(d, operand(o), name === "max");
      });
    case "fma":
      return m(d, name, (args, kw) => {
        const [o, t, ctx] = bindArgs(name, ["other", "third", "context"], args, kw, 2);
        contextArg(ctx);
        const a = operand(o);
        const c = operand(t);
        // Exact product, one rounding after the addition.
        if (d.special || a.special || c.special) return decAdd(decMul(d, a), c);
        const prod = new Decimal((d.sign ^ a.sign) as 0 | 1, d.coef * a.coef, d.exp + a.exp);
        return decAdd(prod, c);
      });
    case "as_tuple":
      return m(d, name, () => {
        const ds = d.isInf ? [] : d.coef === 0n && d.isNaN ? [] : [...d.coef.toString()].map((c) => BigInt(c));
        const exp: Val = d.isInf ? "F" : d.special === "NaN" ? "n" : d.special === "sNaN" ? "N" : BigInt(d.exp);
        return new NamedTuple("DecimalTuple", ["sign", "digits", "exponent"], [BigInt(d.sign), new PyTuple(ds), exp]);
      });
    case "as_integer_ratio":
      return m(d, name, () => {
        if (d.isNaN) throw new PyError("ValueError", "cannot convert NaN to integer ratio");
        if (d.isInf) throw new PyError("OverflowError", "cannot convert Infinity to integer ratio");
        let num = d.coef;
        let den = 1n;
        if (d.exp >= 0) num *= pow10(d.exp);
        else den = pow10(-d.exp);
        let [a, b] = [num, den];
        while (b) [a, b] = [b, a % b];
        const g = a || 1n;
        return new PyTuple([(d.sign ? -num : num) / g, den / g]);
      });
    case "number_class":
      return unaryMethod(d, name, () => {
        const s = d.sign ? "-" : "+";
        if (d.special === "sNaN") return "sNaN";
        if (d.isNaN) return "NaN";
        if (d.isInf) return `${s}Infinity`;
        if (d.isZero) return `${s}Zero`;
        return d.adjusted < -999999 ? `${s}Subnormal` : `${s}Normal`;
      });
  }
  return undefined;
}
