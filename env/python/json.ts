// Python `json.loads` / `json.dumps` (CPython 3.11 C scanner, default arguments), over Py values.
// The official harness decides "Invalid POST request" with json.loads and shows the function list
// rendered by json.dumps, and its graders parse answers with json.loads, so both must behave like
// Python, not like JSON.parse/JSON.stringify: NaN/Infinity accepted, int vs float kept (5 vs 5.0),
// ints of any size (up to Python's 4300-digit limit), duplicate keys keep the first position with
// the last value, ensure_ascii.
import { floatRepr } from "./repr.ts";
import { type Py, PyDict, PyError, PyTuple, typeName } from "./values.ts";

const WS = new Set([" ", "\t", "\n", "\r"]);
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
const MAX_INT_DIGITS = 4300; // CPython >= 3.11 int max_str_digits
/** Nesting beyond which the graders' json.loads raises RecursionError (the interpreter's recursion limit). */
const MAX_DEPTH = 995;
/** The same inside the text harness, whose own stack leaves less of the recursion limit to the decoder. */
export const HARNESS_JSON_MAX_DEPTH = 950;

function decodeError(msg: string, pos: number): PyError {
  return new PyError("JSONDecodeError", `${msg}: char ${pos}`);
}

class Parser {
  constructor(
    private readonly s: string,
    private readonly maxDepth: number,
  ) {}

  skipWs(i: number): number {
    while (i < this.s.length && WS.has(this.s[i]!)) i++;
    return i;
  }

  value(i: number, depth: number): [Py, number] {
    const s = this.s;
    const c = s[i];
    if (c === '"') return this.string(i + 1);
    if (c === "{") return this.object(i + 1, depth + 1);
    if (c === "[") return this.array(i + 1, depth + 1);
    if (c === "n" && s.startsWith("null", i)) return [null, i + 4];
    if (c === "t" && s.startsWith("true", i)) return [true, i + 4];
    if (c === "f" && s.startsWith("false", i)) return [false, i + 5];
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(s);
    if (m) {
      const end = i + m[0].length;
      if (m[1] === undefined && m[2] === undefined) {
        const digits = m[0].replace("-", "");
        if (digits.length > MAX_INT_DIGITS) throw new PyError("ValueError", "Exceeds the limit (4300 digits) for integer string conversion");
        return [BigInt(m[0]), end];
      }
      return [Number(m[0]), end];
    }
    if (c === "N" && s.startsWith("NaN", i)) return [NaN, i + 3];
    if (c === "I" && s.startsWith("Infinity", i)) return [Infinity, i + 8];
    if (c === "-" && s.startsWith("-Infinity", i)) return [-Infinity, i + 9];
    throw decodeError("Expecting value", i);
  }

  string(i: number): [string, number] {
    const s = this.s;
    let out = "";
    let chunkStart = i;
    for (;;) {
      if (i >= s.length) throw decodeError("Unterminated string starting at", chunkStart - 1);
      const ch = s.charCodeAt(i);
      if (ch === 0x22) return [out + s.slice(chunkStart, i), i + 1];
      if (ch < 0x20) throw decodeError("Invalid control character at", i);
      if (ch !== 0x5c) {
        i++;
        continue;
      }
      out += s.slice(chunkStart, i);
      const esc = s[i + 1];
      if (esc === undefined) throw decodeError("Unterminated string starting at", i);
      const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
      if (esc in simple) {
        out += simple[esc];
        i += 2;
      } else if (esc === "u") {
        const hex = s.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw decodeError("Invalid \\uXXXX escape", i + 1);
        let code = parseInt(hex, 16);
        i += 6;
        if (code >= 0xd800 && code <= 0xdbff && s[i] === "\\" && s[i + 1] === "u") {
          const hex2 = s.slice(i + 2, i + 6);
          if (/^[0-9a-fA-F]{4}$/.test(hex2)) {
            const low = parseInt(hex2, 16);
            if (low >= 0xdc00 && low <= 0xdfff) {
              code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
              i += 6;
            }
          }
        }
        out += String.fromCodePoint(code);
      } else throw decodeError("Invalid \\escape", i);
      chunkStart = i;
    }
  }

  object(i: number, depth: number): [PyDict, number] {
    if (depth > this.maxDepth) throw new PyError("RecursionError", "maximum recursion depth exceeded while decoding a JSON object");
    const d = new PyDict();
    i = this.skipWs(i);
    if (this.s[i] === "}") return [d, i + 1];
    for (;;) {
      if (this.s[i] !== '"') throw decodeError("Expecting property name enclosed in double quotes", i);
      const [key, afterKey] = this.string(i + 1);
      i = this.skipWs(afterKey);
      if (this.s[i] !== ":") throw decodeError("Expecting ':' delimiter", i);
      i = this.skipWs(i + 1);
      const [v, afterValue] = this.value(i, depth);
      d.map.set(key, v); // duplicate keys: last value wins, first position kept (like dict(pairs))
      i = this.skipWs(afterValue);
      if (this.s[i] === "}") return [d, i + 1];
      if (this.s[i] !== ",") throw decodeError("Expecting ',' delimiter", i);
      i = this.skipWs(i + 1);
    }
  }

  array(i: number, depth: number): [Py[], number] {
    if (depth > this.maxDepth) throw new PyError("RecursionError", "maximum recursion depth exceeded while decoding a JSON array");
    const out: Py[] = [];
    i = this.skipWs(i);
    if (this.s[i] === "]") return [out, i + 1];
    for (;;) {
      const [v, after] = this.value(i, depth);
      out.push(v);
      i = this.skipWs(after);
      if (this.s[i] === "]") return [out, i + 1];
      if (this.s[i] !== ",") throw decodeError("Expecting ',' delimiter", i);
      i = this.skipWs(i + 1);
    }
  }
}

/** json.loads(s): raises PyError (JSONDecodeError/ValueError/RecursionError) exactly where Python does. */
export function jsonLoads(s: string, maxDepth = MAX_DEPTH): Py {
  if (s.startsWith("\ufeff")) throw new PyError("JSONDecodeError", "Unexpected UTF-8 BOM (decode using utf-8-sig)");
  const p = new Parser(s, maxDepth);
  const start = p.skipWs(0);
  const [v, end] = p.value(start, 0);
  const rest = p.skipWs(end);
  if (rest !== s.length) throw decodeError("Extra data", rest);
  return v;
}

/** json.loads that returns the error message instead of raising. */
export function tryJsonLoads(s: string): { ok: true; value: Py } | { ok: false; error: string } {
  try {
    return { ok: true, value: jsonLoads(s) };
  } catch (e) {
    if (e instanceof PyError) return { ok: false, error: e.message };
    throw e;
  }
}

/** Python `json.dumps(v)` with default arguments (separators ", " and ": ", ensure_ascii=True). */
export function jsonDumps(v: Py): string {
  if (v === null) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (typeof v === "string") return jsonString(v);
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") return floatRepr(v, true);
  if (Array.isArray(v)) return `[${v.map(jsonDumps).join(", ")}]`;
  if (v instanceof PyTuple) return jsonDumps(v.items);
  if (v instanceof PyDict) {
    const parts: string[] = [];
    for (const [k, x] of v.map) parts.push(`${jsonString(dictKey(k))}: ${jsonDumps(x)}`);
    return `{${parts.join(", ")}}`;
  }
  throw new PyError("TypeError", `Object of type ${typeName(v)} is not JSON serializable`);
}

/** How json.dumps writes a non-string dict key. */
function dictKey(k: string | bigint | number | boolean | null): string {
  if (typeof k === "string") return k;
  if (typeof k === "number") return floatRepr(k, true);
  return jsonDumps(k);
}

/** A JSON string literal with ensure_ascii escaping: everything outside ' '..'~' escaped, lowercase hex. */
export function jsonString(s: string): string {
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
