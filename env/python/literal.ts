// Python ast.literal_eval over the literal subset: numbers (incl. hex/octal/binary, underscores,
// imaginary), strings/bytes with prefixes and escapes (adjacent ones concatenate), lists, tuples
// (incl. a bare top-level "1, 2"), dicts, sets, None/True/False, unary +/- on numbers, a+bj.
import { type Py, type PyKey, PyBytes, PyComplex, PyDict, PyError, PySet, PyTuple } from "./values.ts";
import { asNumber } from "./numbers.ts";
import { newlineError, tokenize as pyTokenize } from "./tokenizer.ts";

type Tok =
  | { t: "num"; v: bigint | number | PyComplex }
  | { t: "str"; v: string; bytes: boolean }
  | { t: "name"; v: string }
  | { t: "op"; v: string }
  | { t: "end" };

const syntax = (msg: string) => new PyError("SyntaxError", msg);
const malformed = () => new PyError("ValueError", "malformed node or string");

/** Python's own tokens (tokenizer.ts), narrowed to what a literal is made of. */
function tokenize(src: string): Tok[] {
  return pyTokenize(src).map((t): Tok => {
    switch (t.t) {
      case "int":
      case "float":
        return { t: "num", v: t.v };
      case "imag":
        return { t: "num", v: new PyComplex(0, t.v) };
      case "kw":
        return { t: "name", v: t.v };
      case "str":
        // An f-string parses, then is not a literal (a JoinedStr node).
        return t.fstring ? { t: "name", v: "f-string" } : { t: "str", v: t.v, bytes: t.bytes };
      case "nl":
        throw newlineError(t.indent);
      default:
        return t;
    }
  });
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
      // A parenthesised number is still a number: -(1) is -1.
      const v = t.t === "num" ? (this.i++, t.v) : t.t === "op" && t.v === "(" ? this.atom() : undefined;
      if (v === undefined || !(typeof v === "bigint" || typeof v === "number" || v instanceof PyComplex)) throw malformed();
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
      if (t.v === "set" && this.isOp("(") && (this.toks[this.i + 1] as { v?: string }).v === ")") {
        this.i += 2;
        return new PySet([]);
      }
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
