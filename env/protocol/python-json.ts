// Python `json.loads` / `json.dumps` semantics (CPython 3.11 C scanner, default arguments).
// The official harness decides "Invalid POST request" with json.loads and shows the function list
// rendered by json.dumps, so both must behave like Python, not like JSON.parse/JSON.stringify:
// NaN/Infinity literals accepted, int vs float kept (5 vs 5.0), ints of any size (up to Python's
// 4300-digit limit), duplicate keys keep the first position with the last value, ensure_ascii.

export class PyInt {
  constructor(readonly value: bigint) {}
}
export class PyFloat {
  constructor(readonly value: number) {}
}
export type PyValue = null | boolean | string | PyInt | PyFloat | PyValue[] | Map<string, PyValue>;

export class PyJsonError extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(`${message} (char ${pos})`);
    this.name = "PyJsonError";
  }
}

/** Nesting at which CPython's decoder raises RecursionError (about the default recursion limit less the harness's stack). */
export const PY_JSON_MAX_DEPTH = 950;
const PY_INT_MAX_DIGITS = 4300;

/** Python `json.loads(text)`; throws PyJsonError where Python raises. */
export function pyJsonLoads(text: string): PyValue {
  const p = new Parser(text);
  p.ws();
  const v = p.value(0);
  p.ws();
  if (p.i !== text.length) throw new PyJsonError("Extra data", p.i);
  return v;
}

/** Whether Python's json.loads accepts the text. */
export function pyJsonValid(text: string): boolean {
  try {
    pyJsonLoads(text);
    return true;
  } catch {
    return false;
  }
}

class Parser {
  i = 0;
  constructor(private readonly s: string) {}

  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++;
      else break;
    }
  }

  value(depth: number): PyValue {
    const s = this.s;
    const c = s[this.i];
    switch (c) {
      case '"':
        return this.string();
      case "{":
        return this.object(depth + 1);
      case "[":
        return this.array(depth + 1);
      case "n":
        return this.literal("null", null);
      case "t":
        return this.literal("true", true);
      case "f":
        return this.literal("false", false);
      case "N":
        return this.literal("NaN", new PyFloat(NaN));
      case "I":
        return this.literal("Infinity", new PyFloat(Infinity));
      case "-":
        if (s.startsWith("-Infinity", this.i)) return this.literal("-Infinity", new PyFloat(-Infinity));
        return this.number();
      default:
        if (c !== undefined && c >= "0" && c <= "9") return this.number();
        throw new PyJsonError("Expecting value", this.i);
    }
  }

  literal<T extends PyValue>(word: string, v: T): T {
    if (!this.s.startsWith(word, this.i)) throw new PyJsonError("Expecting value", this.i);
    this.i += word.length;
    return v;
  }

  number(): PyInt | PyFloat {
    const m = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
    m.lastIndex = this.i;
    const r = m.exec(this.s);
    if (!r) throw new PyJsonError("Expecting value", this.i);
    this.i += r[0].length;
    if (r[1] === undefined && r[2] === undefined) {
      const digits = r[0].startsWith("-") ? r[0].length - 1 : r[0].length;
      if (digits > PY_INT_MAX_DIGITS) throw new PyJsonError("Exceeds the limit (4300 digits) for integer string conversion", this.i);
      return new PyInt(BigInt(r[0]));
    }
    return new PyFloat(Number(r[0]));
  }

  string(): string {
    const s = this.s;
    let i = this.i + 1;
    let out = "";
    let chunk = i;
    for (;;) {
      if (i >= s.length) throw new PyJsonError("Unterminated string starting at", this.i);
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        out += s.slice(chunk, i);
        this.i = i + 1;
        return out;
      }
      if (c < 0x20) throw new PyJsonError("Invalid control character at", i);
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += s.slice(chunk, i);
      const e = s[i + 1];
      switch (e) {
        case '"':
        case "\\":
        case "/":
          out += e;
          i += 2;
          break;
        case "b":
          out += "\b";
          i += 2;
          break;
        case "f":
          out += "\f";
          i += 2;
          break;
        case "n":
          out += "\n";
          i += 2;
          break;
        case "r":
          out += "\r";
          i += 2;
          break;
        case "t":
          out += "\t";
          i += 2;
          break;
        case "u": {
          const hex = s.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new PyJsonError("Invalid \\uXXXX escape", i + 1);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
          break;
        }
        default:
          throw new PyJsonError("Invalid \\escape", i);
      }
      chunk = i;
    }
  }

  array(depth: number): PyValue[] {
    if (depth > PY_JSON_MAX_DEPTH) throw new PyJsonError("maximum recursion depth exceeded", this.i);
    this.i++;
    const out: PyValue[] = [];
    this.ws();
    if (this.s[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value(depth));
      this.ws();
      const c = this.s[this.i];
      if (c === "]") {
        this.i++;
        return out;
      }
      if (c !== ",") throw new PyJsonError("Expecting ',' delimiter", this.i);
      this.i++;
    }
  }

  object(depth: number): Map<string, PyValue> {
    if (depth > PY_JSON_MAX_DEPTH) throw new PyJsonError("maximum recursion depth exceeded", this.i);
    this.i++;
    const out = new Map<string, PyValue>();
    this.ws();
    if (this.s[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') throw new PyJsonError("Expecting property name enclosed in double quotes", this.i);
      const key = this.string();
      this.ws();
      if (this.s[this.i] !== ":") throw new PyJsonError("Expecting ':' delimiter", this.i);
      this.i++;
      this.ws();
      out.set(key, this.value(depth));
      this.ws();
      const c = this.s[this.i];
      if (c === "}") {
        this.i++;
        return out;
      }
      if (c !== ",") throw new PyJsonError("Expecting ',' delimiter", this.i);
      this.i++;
    }
  }
}

/** A plain JS value (ints become numbers, dicts plain objects) for code that needs ordinary JSON. */
export function pyToPlain(v: PyValue): unknown {
  if (v instanceof PyInt) return Number(v.value);
  if (v instanceof PyFloat) return v.value;
  if (Array.isArray(v)) return v.map(pyToPlain);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, pyToPlain(x)]));
  return v;
}

/** Python `json.dumps(v)` with default arguments (separators ", " and ": ", ensure_ascii=True). */
export function pyJsonDumps(v: PyValue): string {
  if (v === null) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (typeof v === "string") return pyJsonString(v);
  if (v instanceof PyInt) return v.value.toString();
  if (v instanceof PyFloat) return pyFloatRepr(v.value, true);
  if (Array.isArray(v)) return `[${v.map(pyJsonDumps).join(", ")}]`;
  const parts: string[] = [];
  for (const [k, x] of v) parts.push(`${pyJsonString(k)}: ${pyJsonDumps(x)}`);
  return `{${parts.join(", ")}}`;
}

/** A JSON string literal with ensure_ascii escaping: everything outside ' '..'~' escaped, lowercase hex. */
export function pyJsonString(s: string): string {
  let out = '"';
  let chunk = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c) continue;
    out += s.slice(chunk, i);
    chunk = i + 1;
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += "\\\\";
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x0d) out += "\\r";
    else if (c === 0x09) out += "\\t";
    else if (c === 0x08) out += "\\b";
    else if (c === 0x0c) out += "\\f";
    else out += "\\u" + c.toString(16).padStart(4, "0");
  }
  return out + s.slice(chunk) + '"';
}

/** Python `repr(float)`; `json` spells the non-finite values NaN/Infinity/-Infinity. */
export function pyFloatRepr(x: number, json = false): string {
  if (Number.isNaN(x)) return json ? "NaN" : "nan";
  if (x === Infinity) return json ? "Infinity" : "inf";
  if (x === -Infinity) return json ? "-Infinity" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's layout: fixed for 1e-4 <= |x| < 1e16, else d.ddde+XX.
  const [mant, expText] = x.toExponential().split("e") as [string, string];
  const exp = Number(expText);
  const neg = mant.startsWith("-");
  const digits = mant.replace("-", "").replace(".", "");
  let body: string;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) body = "0." + "0".repeat(-exp - 1) + digits;
    else if (digits.length <= exp + 1) body = digits + "0".repeat(exp + 1 - digits.length) + ".0";
    else body = digits.slice(0, exp + 1) + "." + digits.slice(exp + 1);
  } else {
    const m = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    body = `${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return (neg ? "-" : "") + body;
}
