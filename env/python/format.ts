// printf-style `str % args` and float.hex(), as CPython formats them: floats rounded half-even on their
// exact binary value (so '%.2f' % 0.125 is '0.12'), %g's choice of notation, flags, width, precision.
import { Decimal, decimalFromFloat, decimalToInt, pow10 } from "./decimal.ts";
import { floatToInt } from "./arith.ts";
import { type Val, PyDict, PyTuple, repr, str, typeOf } from "./objects.ts";
import { PyError } from "./values.ts";

/** An exact Decimal rescaled to exponent `e`, halves to even, with no precision limit. */
function rescale(d: Decimal, e: number): Decimal {
  if (e <= d.exp) return new Decimal(0, d.coef * pow10(d.exp - e), e);
  const p = pow10(e - d.exp);
  const q = d.coef / p;
  const r = d.coef - q * p;
  const up = 2n * r > p || (2n * r === p && (q & 1n) === 1n);
  return new Decimal(0, up ? q + 1n : q, e);
}

/** Digits of |x| rounded half-even to `prec` places after the point ('f') or `prec` + 1 significant ('e'). */
function fixed(x: number, prec: number): string {
  const d = decimalFromFloat(Math.abs(x));
  const q = rescale(d, -prec);
  const s = q.coef.toString().padStart(prec + 1, "0");
  return prec ? `${s.slice(0, s.length - prec)}.${s.slice(s.length - prec)}` : s;
}

function sci(x: number, prec: number, upper: boolean): string {
  const d = decimalFromFloat(Math.abs(x));
  let digits: string;
  let exp: number;
  if (d.coef === 0n) {
    digits = "0".repeat(prec + 1);
    exp = 0;
  } else {
    const r = roundSig(d, prec + 1);
    digits = r.coef.toString();
    exp = r.exp + digits.length - 1;
  }
  const mant = prec ? `${digits[0]}.${digits.slice(1)}` : digits[0]!;
  return `${mant}${upper ? "E" : "e"}${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
}

/** Rounds an exact Decimal to `n` significant digits, half-even (no precision limit). */
function roundSig(d: Decimal, n: number): Decimal {
  const len = d.coef.toString().length;
  if (len <= n) return new Decimal(0, d.coef * 10n ** BigInt(n - len), d.exp - (n - len));
  const q = rescale(d, d.exp + len - n);
  if (q.coef.toString().length > n) return new Decimal(0, q.coef / 10n, q.exp + 1);
  return q;
}

export function formatFloat(x: number, type: string, prec: number, alt: boolean): string {
  if (!Number.isFinite(x)) {
    const t = Number.isNaN(x) ? "nan" : "inf";
    return /[A-Z]/.test(type) ? t.toUpperCase() : t;
  }
  switch (type) {
    case "f":
    case "F":
      return fixed(x, prec) + (alt && prec === 0 ? "." : "");
    case "e":
    case "E":
      return sci(x, prec, type === "E");
  }
  // g/G: %e's exponent decides the notation; trailing zeros go unless '#'.
  const p = prec === 0 ? 1 : prec;
  const d = decimalFromFloat(Math.abs(x));
  const exp = d.coef === 0n ? 0 : (() => {
    const r = roundSig(d, p);
    return r.exp + r.coef.toString().length - 1;
  })();
  let out = exp >= -4 && exp < p ? fixed(x, p - 1 - exp) : sci(x, p - 1, type === "G");
  if (!alt) {
    out = out.replace(/(\.\d*?)0+(?=$|[eE])/, "$1").replace(/\.(?=$|[eE])/, "");
  } else if (!out.includes(".")) out = out.replace(/(?=[eE])|$/, ".");
  return out;
}

const SPEC = /%(?:\(([^)]*)\))?([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?([hlL]?)([diouxXeEfFgGcrsa%])?/y;

/** `fmt % args`. */
export function percentFormat(fmt: string, args: Val): string {
  const list = args instanceof PyTuple ? args.items : [args];
  const mapping = args instanceof PyDict ? args : null;
  let next = 0;
  let usedMapping = false;
  const take = (): Val => {
    if (next >= list.length) throw new PyError("TypeError", "not enough arguments for format string");
    return list[next++]!;
  };
  let out = "";
  let i = 0;
  while (i < fmt.length) {
    const pct = fmt.indexOf("%", i);
    if (pct < 0) {
      out += fmt.slice(i);
      break;
    }
    out += fmt.slice(i, pct);
    SPEC.lastIndex = pct;
    const m = SPEC.exec(fmt);
    if (!m || !m[6]) throw new PyError("ValueError", pct + 1 >= fmt.length ? "incomplete format" : `unsupported format character '${fmt[pct + 1 + (m?.[0].length ?? 1) - 1] ?? ""}' (0x${(fmt.charCodeAt(pct + (m?.[0].length ?? 1)) || 0).toString(16)}) at index ${pct + (m?.[0].length ?? 1)}`);
    i = pct + m[0].length;
    const type = m[6];
    if (type === "%" && m[0] === "%%") {
      out += "%";
      continue;
    }
    const flags = m[2] ?? "";
    let width = m[3] === "*" ? Number(take() as bigint) : m[3] ? Number(m[3]) : 0;
    const precText = m[4] === "*" ? String(take() as bigint) : m[4];
    let value: Val;
    if (m[1] !== undefined) {
      if (!mapping) throw new PyError("TypeError", "format requires a mapping");
      usedMapping = true;
      const v = mapping.get(m[1]);
      if (v === undefined) throw new PyError("KeyError", repr(m[1]));
      value = v;
    } else value = type === "%" ? "%" : mapping && !(args instanceof PyTuple) ? (next++ === 0 ? args : take()) : take();
    let left = flags.includes("-");
    if (width < 0) {
      left = true;
      width = -width;
    }
    let body: string;
    let sign = "";
    let numeric = false;
    switch (type) {
      case "s":
        body = str(value);
        break;
      case "r":
      case "a":
        body = repr(value);
        break;
      case "%":
        body = "%";
        break;
      case "c":
        if (typeof value === "string" && [...value].length === 1) body = value;
        else if (typeof value === "bigint") body = String.fromCodePoint(Number(value));
        else throw new PyError("TypeError", "%c requires int or char");
        break;
      case "d":
      case "i":
      case "u":
      case "o":
      case "x":
      case "X": {
        numeric = true;
        let n: bigint;
        if (typeof value === "bigint") n = value;
        else if (typeof value === "boolean") n = value ? 1n : 0n;
        else if (typeof value === "number" && "diu".includes(type)) n = floatToInt(value);
        else if (value instanceof Decimal && "diu".includes(type)) n = decimalToInt(value);
        else throw new PyError("TypeError", "diu".includes(type) ? `%${type} format: a real number is required, not ${typeOf(value)}` : `%${type} format: an integer is required, not ${typeOf(value)}`);
        if (n < 0n) {
          sign = "-";
          n = -n;
        }
        body = type === "o" ? n.toString(8) : type === "x" ? n.toString(16) : type === "X" ? n.toString(16).toUpperCase() : n.toString();
        if (precText !== undefined) body = body.padStart(Number(precText), "0");
        if (flags.includes("#") && type !== "d" && type !== "i" && type !== "u") body = (type === "o" ? "0o" : type === "x" ? "0x" : "0X") + body;
        break;
      }
      default: {
        numeric = true;
        let x: number;
        if (typeof value === "number") x = value;
        else if (typeof value === "bigint") x = Number(value);
        else if (typeof value === "boolean") x = value ? 1 : 0;
        else if (value instanceof Decimal) x = Number(value.toString());
        else throw new PyError("TypeError", `must be real number, not ${typeOf(value)}`);
        if (x < 0 || Object.is(x, -0)) sign = "-";
        body = formatFloat(Math.abs(x), type, precText === undefined ? 6 : Number(precText), flags.includes("#"));
      }
    }
    if (numeric && !sign) sign = flags.includes("+") ? "+" : flags.includes(" ") ? " " : "";
    let text = sign + body;
    const len = [...text].length;
    if (len < width) {
      if (left) text += " ".repeat(width - len);
      else if (numeric && flags.includes("0"))
        text = sign + (body.startsWith("0x") || body.startsWith("0X") || body.startsWith("0o") ? body.slice(0, 2) + "0".repeat(width - len) + body.slice(2) : "0".repeat(width - len) + body);
      else text = " ".repeat(width - len) + text;
    }
    out += text;
  }
  if (!mapping && !usedMapping && next < list.length && !(list.length === 1 && !(args instanceof PyTuple) && next === 1)) {
    throw new PyError("TypeError", "not all arguments converted during string formatting");
  }
  return out;
}

/** float.hex(). */
export function floatHex(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  if (x === 0) return `${sign}0x0.0p+0`;
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, Math.abs(x));
  const bits = buf.getBigUint64(0);
  const bexp = Number(bits >> 52n);
  const mant = bits & ((1n << 52n) - 1n);
  const lead = bexp === 0 ? 0 : 1;
  const exp = bexp === 0 ? -1022 : bexp - 1023;
  return `${sign}0x${lead}.${mant.toString(16).padStart(13, "0")}p${exp < 0 ? "-" : "+"}${Math.abs(exp)}`;
}
