// Python repr() and str() of Py values, byte for byte as CPython writes them.
import { type Py, PyComplex, PyDict, PySet, PyTuple } from "./values.ts";

/** repr(float) exactly as CPython (shortest round-trip, fixed notation for 1e-4 <= |x| < 1e16);
 *  `json` spells the non-finite values as json.dumps does (NaN/Infinity/-Infinity). */
export function floatRepr(x: number, json = false): string {
  if (Number.isNaN(x)) return json ? "NaN" : "nan";
  if (x === Infinity) return json ? "Infinity" : "inf";
  if (x === -Infinity) return json ? "-Infinity" : "-inf";
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
  // CPython's bytes repr: single quotes unless the bytes hold ' and no ", then \\ \t \n \r and the quote escaped.
  const q = v.bytes.includes(0x27) && !v.bytes.includes(0x22) ? 0x22 : 0x27;
  const named: Record<number, string> = { 0x09: "\\t", 0x0a: "\\n", 0x0d: "\\r", 0x5c: "\\\\", [q]: `\\${String.fromCharCode(q)}` };
  const body = v.bytes.map((b) => named[b] ?? (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`)).join("");
  return `b${String.fromCharCode(q)}${body}${String.fromCharCode(q)}`;
}

/** str(v): strings as themselves, everything else as repr. */
export function pyStr(v: Py): string {
  return typeof v === "string" ? v : repr(v);
}
