// Python ast.literal_eval over the literal subset: numbers (incl. hex/octal/binary, underscores,
// imaginary), strings/bytes with prefixes and escapes (adjacent ones concatenate), lists, tuples
// (incl. a bare top-level "1, 2"), dicts, sets, None/True/False, unary +/- on numbers, a+bj.
import { type Py, type PyKey, PyBytes, PyComplex, PyDict, PyError, PySet, PyTuple } from "./values.ts";
import { asNumber } from "./numbers.ts";

type Tok =
  | { t: "num"; v: bigint | number | PyComplex }
  | { t: "str"; v: string; bytes: boolean }
  | { t: "name"; v: string }
  | { t: "op"; v: string }
  | { t: "end" };

const syntax = (msg: string) => new PyError("SyntaxError", msg);
const malformed = () => new PyError("ValueError", "malformed node or string");

function tokenize(src: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  let depth = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i]!;
    if (c === " " || c === "\t" || c === "\f") {
      i++;
      continue;
    }
    if (c === "\\" && (src[i + 1] === "\n" || src.startsWith("\r\n", i + 1))) {
      i += src[i + 1] === "\n" ? 2 : 3;
      continue;
    }
    if (c === "#") {
      while (i < n && src[i] !== "\n") i++;
      continue;
    }
    if (c === "\n" || c === "\r") {
      // Newlines only end the expression at depth 0 (trailing blank lines are fine).
      if (depth === 0 && toks.length > 0 && /\S/.test(src.slice(i).replace(/#[^\n]*/g, ""))) throw syntax("invalid syntax");
      i++;
      continue;
    }
    const strm = /^([rRbBuU]{0,2})(['"])/.exec(src.slice(i, i + 3));
    if (strm && (strm[1] === "" || /^(r|u|b|br|rb)$/i.test(strm[1]!))) {
      const prefix = strm[1]!.toLowerCase();
      const q = strm[2]!;
      let j = i + strm[0].length;
      const triple = src.startsWith(q + q, j);
      const delim = triple ? q.repeat(3) : q;
      if (triple) j += 2;
      let body = "";
      for (;;) {
        if (j >= n) throw syntax("unterminated string literal");
        if (src.startsWith(delim, j)) break;
        const ch = src[j]!;
        if (!triple && (ch === "\n" || ch === "\r")) throw syntax("unterminated string literal");
        if (ch === "\\" && j + 1 < n) {
          body += ch + src[j + 1];
          j += 2;
        } else {
          body += ch;
          j++;
        }
      }
      i = j + delim.length;
      const raw = prefix.includes("r");
      const bytes = prefix.includes("b");
      toks.push({ t: "str", v: raw ? body : unescape(body, bytes), bytes });
      continue;
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src[i + 1] ?? ""))) {
      const m =
        /^(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?[jJ]?)/.exec(
          src.slice(i),
        );
      if (!m) throw syntax("invalid decimal literal");
      const lex = m[0];
      i += lex.length;
      if (/^[A-Za-z0-9_]/.test(src[i] ?? "")) throw syntax("invalid decimal literal");
      toks.push({ t: "num", v: number(lex) });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))!;
      toks.push({ t: "name", v: m[0] });
      i += m[0].length;
      continue;
    }
    if ("[({".includes(c)) depth++;
    if ("])}".includes(c)) depth--;
    if ("[](){},:+-".includes(c)) {
      toks.push({ t: "op", v: c });
      i++;
      continue;
    }
    throw syntax(`invalid character '${c}'`);
  }
  toks.push({ t: "end" });
  return toks;
}

function number(lex: string): bigint | number | PyComplex {
  const clean = lex.replace(/_/g, "");
  if (/[jJ]$/.test(clean)) return new PyComplex(0, Number(clean.slice(0, -1)));
  if (/^0[xXoObB]/.test(clean)) return BigInt(clean.toLowerCase());
  if (/[.eE]/.test(clean)) return Number(clean);
  if (/^0+\d/.test(clean) && /[1-9]/.test(clean)) throw syntax("leading zeros in decimal integer literals are not permitted");
  return BigInt(clean);
}

function unescape(body: string, bytes: boolean): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = body[++i] ?? "";
    const simple: Record<string, string> = { "\n": "", "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };
    if (e in simple) out += simple[e];
    else if (/[0-7]/.test(e)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(i))![0];
      out += String.fromCodePoint(parseInt(m, 8));
      i += m.length - 1;
    } else if (e === "x" || (!bytes && (e === "u" || e === "U"))) {
      const len = e === "x" ? 2 : e === "u" ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) throw syntax("truncated escape");
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff) throw syntax("illegal Unicode character");
      out += String.fromCodePoint(cp);
      i += len;
    } else if (!bytes && e === "N") throw new PyError("SyntaxError", "\\N{...} escapes are not supported here");
    else out += `\\${e}`;
  }
  return out;
}

class P {
  i = 0;
  constructor(private readonly toks: Tok[]) {}
  peek(): Tok {
    return this.toks[this.i]!;
  }
  isOp(v: string): boolean {
    const t = this.peek();
    return t.t === "op" && t.v === v;
  }
  expectOp(v: string): void {
    if (!this.isOp(v)) throw syntax("invalid syntax");
    this.i++;
  }
  /** Top level: expression or bare tuple. */
  top(): Py {
    const first = this.expr();
    if (!this.isOp(",")) return first;
    const items = [first];
    while (this.isOp(",")) {
      this.i++;
      if (this.peek().t === "end") break;
      items.push(this.expr());
    }
    return new PyTuple(items);
  }
  expr(): Py {
    let left = this.unary();
    while (this.isOp("+") || this.isOp("-")) {
      const op = (this.toks[this.i++] as { v: string }).v;
      const right = this.unary();
      // literal_eval only allows real +/- complex
      if (!(right instanceof PyComplex) || left instanceof PyComplex || asNumber(left) === undefined || typeof left === "boolean") throw malformed();
      const re = Number(left as bigint | number);
      left = new PyComplex(re, op === "+" ? right.im : -right.im);
    }
    return left;
  }
  unary(): Py {
    if (this.isOp("-") || this.isOp("+")) {
      const op = (this.toks[this.i++] as { v: string }).v;
      const t = this.peek();
      if (t.t !== "num") throw malformed();
      this.i++;
      const v = t.v;
      if (op === "+") return v;
      if (v instanceof PyComplex) return new PyComplex(-v.re, -v.im);
      return typeof v === "bigint" ? -v : -v;
    }
    return this.atom();
  }
  atom(): Py {
    const t = this.toks[this.i++]!;
    if (t.t === "num") return t.v;
    if (t.t === "str") {
      let s = t.v;
      let bytes = t.bytes;
      while (this.peek().t === "str") {
        const u = this.toks[this.i++] as { v: string; bytes: boolean };
        if (u.bytes !== bytes) throw syntax("cannot mix bytes and nonbytes literals");
        s += u.v;
        bytes = u.bytes;
      }
      return bytes ? new PyBytes([...s].map((ch) => ch.codePointAt(0)! & 0xff)) : s;
    }
    if (t.t === "name") {
      if (t.v === "None") return null;
      if (t.v === "True") return true;
      if (t.v === "False") return false;
      throw malformed();
    }
    if (t.t === "op" && t.v === "[") return this.seq("]");
    if (t.t === "op" && t.v === "(") {
      if (this.isOp(")")) {
        this.i++;
        return new PyTuple([]);
      }
      const first = this.expr();
      if (this.isOp(")")) {
        this.i++;
        return first;
      }
      this.expectOp(",");
      const items = [first];
      while (!this.isOp(")")) {
        items.push(this.expr());
        if (!this.isOp(")")) this.expectOp(",");
      }
      this.i++;
      return new PyTuple(items);
    }
    if (t.t === "op" && t.v === "{") {
      if (this.isOp("}")) {
        this.i++;
        return new PyDict();
      }
      const first = this.expr();
      if (this.isOp(":")) {
        this.i++;
        const d = new PyDict();
        setKey(d, first, this.expr());
        while (!this.isOp("}")) {
          this.expectOp(",");
          if (this.isOp("}")) break;
          const k = this.expr();
          this.expectOp(":");
          setKey(d, k, this.expr());
        }
        this.i++;
        return d;
      }
      const items = [first];
      while (!this.isOp("}")) {
        this.expectOp(",");
        if (this.isOp("}")) break;
        items.push(this.expr());
      }
      this.i++;
      return new PySet(items);
    }
    throw syntax("invalid syntax");
  }
  seq(close: string): Py[] {
    const items: Py[] = [];
    while (!this.isOp(close)) {
      items.push(this.expr());
      if (!this.isOp(close)) this.expectOp(",");
    }
    this.i++;
    return items;
  }
}

function setKey(d: PyDict, k: Py, v: Py): void {
  if (Array.isArray(k) || k instanceof PyDict || k instanceof PySet) throw new PyError("TypeError", "unhashable type");
  if (k instanceof PyTuple || k instanceof PyComplex || k instanceof PyBytes) {
    d.map.set(String(k) as PyKey, v);
    return;
  }
  for (const existing of d.map.keys()) {
    if (asNumber(existing) !== undefined && asNumber(k) !== undefined && Number(asNumber(existing)) === Number(asNumber(k))) {
      d.map.set(existing, v);
      return;
    }
  }
  d.map.set(k, v);
}

/** ast.literal_eval(s). Raises PyError (ValueError/SyntaxError/TypeError) like Python. */
export function literalEval(src: string): Py {
  const s = src.replace(/^[ \t]+/, "");
  const p = new P(tokenize(s));
  if (p.peek().t === "end") throw syntax("invalid syntax");
  const v = p.top();
  if (p.peek().t !== "end") throw syntax("invalid syntax");
  return v;
}
