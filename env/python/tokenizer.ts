// Python's tokenizer for one expression as eval() compiles it (CPython 3.11): names (NFKC), keywords,
// numbers (underscores, 0x/0o/0b, no leading zeros in decimal ints), strings with prefixes, escapes and
// implicit concatenation, operators; a newline ends the input only outside brackets.
import { PyError } from "./values.ts";

export type Token =
  | { t: "name"; v: string }
  | { t: "kw"; v: string }
  | { t: "int"; v: bigint }
  | { t: "float"; v: number }
  | { t: "imag"; v: number }
  | { t: "str"; v: string; bytes: boolean; fstring: boolean }
  | { t: "op"; v: string }
  /** A newline outside brackets with more code after it: an error once the parser reaches it
   *  (IndentationError when that code is indented), after any error in the code before it. */
  | { t: "nl"; indent: boolean }
  | { t: "end" };

export const KEYWORDS = new Set([
  "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else",
  "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
  "return", "try", "while", "with", "yield",
]);

// Longest first, so that "**=" wins over "**" and "*".
const OPERATORS = [
  "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=", "*=", "/=", "%=",
  "&=", "|=", "^=", "@=", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":",
  ".", ";", "=",
];

/** CPython's tokenizer refuses deeper bracket nesting than this. */
const MAX_DEPTH = 200;

export const syntaxError = (msg = "invalid syntax") => new PyError("SyntaxError", msg);
export const newlineError = (indent: boolean) => (indent ? new PyError("IndentationError", "unexpected indent") : syntaxError());

const NUMBER =
  /0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?[jJ]?/y;
const NAME = /[\p{ID_Start}_][\p{ID_Continue}\u00b7\u0387\u1369-\u1371\u19da\u2118\u212e\u309b\u309c]*/uy;
const STRING_START = /([rRbBuUfF]{0,2})(['"])/y;
// After a number, only these keywords may follow without a space (CPython warns, still accepts).
const AFTER_NUMBER = /^(?:and|else|for|if|in|is|not|or)(?![\p{ID_Continue}])/u;

export function tokenize(src: string): Token[] {
  const toks: Token[] = [];
  const brackets: string[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i]!;
    if (c === " " || c === "\t" || c === "\f") {
      i++;
      continue;
    }
    if (c === "\\") {
      if (src[i + 1] === "\n") i += 2;
      else if (src.startsWith("\r\n", i + 1)) i += 3;
      else throw syntaxError("unexpected character after line continuation character");
      if (i >= n) throw syntaxError("unexpected EOF while parsing");
      if (toks.length === 0 && /^[ \t\f]+[^ \t\f\r\n#]/.test(src.slice(i))) {
        toks.push({ t: "nl", indent: true }, { t: "end" });
        return toks;
      }
      continue;
    }
    if (c === "#") {
      while (i < n && src[i] !== "\n" && src[i] !== "\r") i++;
      continue;
    }
    if (c === "\n" || c === "\r") {
      i++;
      // Outside brackets a newline ends the expression: only blank lines and comments may follow.
      // The first line with code after it (or, before any code, the first one) must not be indented.
      if (brackets.length === 0) {
        // (Spaces ending the input without a newline count as an indented line.)
        const next = /^(?:[ \t\f]*(?:#[^\r\n]*)?(?:\r\n|\r|\n))*([ \t\f]*)([^ \t\f\r\n#]|$)/.exec(src.slice(i));
        const rest = next ? src.slice(i + next[0].length - next[2]!.length) : "";
        // An indented line, or a line opening with a continuation whose next line is indented.
        const indent = next?.[2] === "\\" ? !next![1] && /^\\\r?\n[ \t\f]+[^ \t\f\r\n#]/.test(rest) : !!next?.[1];
        if (next && (indent || (toks.length > 0 && next[2] !== ""))) {
          toks.push({ t: "nl", indent }, { t: "end" });
          return toks;
        }
      }
      continue;
    }
    STRING_START.lastIndex = i;
    const sm = STRING_START.exec(src);
    if (sm && /^(?:|r|u|b|f|br|rb|fr|rf)$/i.test(sm[1]!)) {
      i = readString(src, i, sm[1]!.toLowerCase(), sm[2]!, toks);
      continue;
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src[i + 1] ?? ""))) {
      NUMBER.lastIndex = i;
      const lex = NUMBER.exec(src)![0];
      i += lex.length;
      const next = src.slice(i, i + 12);
      if (/^[\p{ID_Continue}]/u.test(next) && !AFTER_NUMBER.test(next)) throw syntaxError("invalid decimal literal");
      toks.push(number(lex));
      continue;
    }
    NAME.lastIndex = i;
    const nm = NAME.exec(src);
    if (nm) {
      i += nm[0].length;
      const name = nm[0].normalize("NFKC");
      toks.push(KEYWORDS.has(name) ? { t: "kw", v: name } : { t: "name", v: name });
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (!op) throw syntaxError(`invalid character '${String.fromCodePoint(src.codePointAt(i)!)}'`);
    if (op === "(" || op === "[" || op === "{") {
      brackets.push(op);
      if (brackets.length >= MAX_DEPTH) throw syntaxError("too many nested parentheses");
    } else if (op === ")" || op === "]" || op === "}") {
      const open = brackets.pop();
      if (open === undefined || "([{"[")]}".indexOf(op)] !== open) throw syntaxError(`unmatched '${op}'`);
    }
    toks.push({ t: "op", v: op });
    i += op.length;
  }
  if (brackets.length > 0) throw syntaxError(`'${brackets[brackets.length - 1]}' was never closed`);
  toks.push({ t: "end" });
  return toks;
}

function number(lex: string): Token {
  const clean = lex.replace(/_/g, "");
  if (/[jJ]$/.test(clean)) return { t: "imag", v: Number(clean.slice(0, -1)) };
  if (/^0[xXoObB]/.test(clean)) return { t: "int", v: BigInt(clean.toLowerCase()) };
  if (/[.eE]/.test(clean)) return { t: "float", v: Number(clean) };
  if (/^0/.test(clean) && /[1-9]/.test(clean)) throw syntaxError("leading zeros in decimal integer literals are not permitted");
  if (/^0\d/.test(lex) && lex.includes("_") && /[1-9]/.test(clean)) throw syntaxError("invalid decimal literal");
  return { t: "int", v: BigInt(clean) };
}

function readString(src: string, start: number, prefix: string, q: string, toks: Token[]): number {
  const n = src.length;
  let j = start + prefix.length + 1;
  const triple = src.startsWith(q + q, j);
  if (triple) j += 2;
  const delim = triple ? q.repeat(3) : q;
  const bodyStart = j;
  for (;;) {
    if (j >= n) throw syntaxError(triple ? "unterminated triple-quoted string literal" : "unterminated string literal");
    if (src.startsWith(delim, j)) break;
    const ch = src[j]!;
    if (!triple && (ch === "\n" || ch === "\r")) throw syntaxError("unterminated string literal");
    j += ch === "\\" && j + 1 < n ? 2 : 1;
  }
  const body = src.slice(bodyStart, j).replace(/\r\n?/g, "\n");
  const raw = prefix.includes("r");
  const bytes = prefix.includes("b");
  if (bytes && /[^\x00-\x7f]/.test(body)) throw syntaxError("bytes can only contain ASCII literal characters");
  toks.push({ t: "str", v: raw ? body : unescape(body, bytes), bytes, fstring: prefix.includes("f") });
  return j + delim.length;
}

const SIMPLE_ESCAPES: Record<string, string> = { "\n": "", "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };

function unescape(body: string, bytes: boolean): string {
  if (!body.includes("\\")) return body;
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = body[++i] ?? "";
    if (e in SIMPLE_ESCAPES) out += SIMPLE_ESCAPES[e];
    else if (/[0-7]/.test(e)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(i))![0];
      out += String.fromCodePoint(parseInt(m, 8) & (bytes ? 0xff : 0x1ff));
      i += m.length - 1;
    } else if (e === "x" || (!bytes && (e === "u" || e === "U"))) {
      const len = e === "x" ? 2 : e === "u" ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) throw syntaxError(`(unicode error) truncated \\${e} escape`);
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff) throw syntaxError("(unicode error) illegal Unicode character");
      out += String.fromCodePoint(cp);
      i += len;
    } else if (!bytes && e === "N") throw syntaxError("(unicode error) \\N{...} escapes are not supported by ehrgym");
    else out += `\\${e}`;
  }
  return out;
}
