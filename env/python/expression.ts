// Python's expression grammar (eval mode, CPython 3.11) to a small AST: conditional expressions, lambda,
// boolean and comparison chains, the arithmetic and bitwise operators with Python's precedence, calls
// with keywords and unpacking, attributes, subscripts and slices, displays, comprehensions, `:=`.
import { newlineError, syntaxError, tokenize, type Token } from "./tokenizer.ts";
import { PyError } from "./values.ts";

export type Node =
  | { k: "const"; v: ConstValue }
  | { k: "str"; v: string; bytes: boolean }
  | { k: "name"; id: string }
  | { k: "bin"; op: string; l: Node; r: Node }
  | { k: "unary"; op: string; e: Node }
  | { k: "bool"; op: "and" | "or"; vals: Node[] }
  | { k: "cmp"; first: Node; ops: string[]; rest: Node[] }
  | { k: "ifexp"; test: Node; body: Node; orelse: Node }
  | { k: "attr"; obj: Node; name: string }
  | { k: "call"; fn: Node; args: Node[]; kw: { name: string | null; value: Node }[] }
  | { k: "sub"; obj: Node; index: Node }
  | { k: "slice"; lo: Node | null; hi: Node | null; step: Node | null }
  | { k: "tuple" | "list" | "set"; elts: Node[] }
  | { k: "dict"; keys: (Node | null)[]; values: Node[] }
  | { k: "comp"; kind: "list" | "set" | "gen" | "dict"; elt: Node; value: Node | null; gens: Generator[] }
  | { k: "lambda"; params: Param[]; body: Node }
  | { k: "walrus"; name: string; value: Node }
  | { k: "star"; e: Node };

export type ConstValue = null | boolean | bigint | number | { imag: number } | "...";
export interface Generator {
  target: Node;
  iter: Node;
  ifs: Node[];
}
export interface Param {
  name: string;
  dflt: Node | null;
  kind: "pos" | "star" | "kwstar" | "kwonly";
}

const COMPARE = new Set(["==", "!=", "<", "<=", ">", ">="]);
/** Nesting deeper than this is refused (CPython raises RecursionError or MemoryError somewhere past ~1000). */
const MAX_NESTING = 300;

class Parser {
  i = 0;
  depth = 0;
  constructor(private readonly toks: Token[]) {}

  peek(o = 0): Token {
    return this.toks[Math.min(this.i + o, this.toks.length - 1)]!;
  }
  isOp(v: string, o = 0): boolean {
    const t = this.peek(o);
    return t.t === "op" && t.v === v;
  }
  isKw(v: string, o = 0): boolean {
    const t = this.peek(o);
    return t.t === "kw" && t.v === v;
  }
  eatOp(v: string): boolean {
    if (!this.isOp(v)) return false;
    this.i++;
    return true;
  }
  eatKw(v: string): boolean {
    if (!this.isKw(v)) return false;
    this.i++;
    return true;
  }
  expectOp(v: string): void {
    if (!this.eatOp(v)) throw syntaxError();
  }
  enter(): void {
    if (++this.depth > MAX_NESTING) throw new PyError("RecursionError", "expression nested too deeply (ehrgym's bound)");
  }

  /** eval input: expressions NEWLINE* ENDMARKER (a bare `a, b` is a tuple). */
  top(): Node {
    const t0 = this.peek();
    if (t0.t === "end") throw syntaxError("invalid syntax");
    if (t0.t === "nl") throw newlineError(t0.indent);
    // eval input is `expressions`: no starred item at the top (unlike a parenthesized tuple).
    if (this.isOp("*")) throw syntaxError();
    const first = this.expression();
    let node = first;
    if (this.isOp(",")) {
      const elts = [first];
      while (this.eatOp(",")) {
        if (this.peek().t === "end" || this.peek().t === "nl") break;
        if (this.isOp("*")) throw syntaxError();
        elts.push(this.expression());
      }
      node = { k: "tuple", elts };
    }
    const t = this.peek();
    if (t.t === "nl") throw newlineError(t.indent);
    if (t.t !== "end") throw syntaxError();
    return node;
  }

  starOr(f: () => Node): Node {
    if (this.eatOp("*")) return { k: "star", e: this.bitOr() };
    return f();
  }

  namedExpression(): Node {
    const t = this.peek();
    if (t.t === "name" && this.isOp(":=", 1)) {
      this.i += 2;
      return { k: "walrus", name: t.v, value: this.expression() };
    }
    return this.expression();
  }

  expression(): Node {
    this.enter();
    try {
      if (this.isKw("lambda")) return this.lambda();
      const body = this.disjunction();
      if (!this.eatKw("if")) return body;
      const test = this.disjunction();
      if (!this.eatKw("else")) throw syntaxError("expected 'else' after 'if' expression");
      return { k: "ifexp", test, body, orelse: this.expression() };
    } finally {
      this.depth--;
    }
  }

  lambda(): Node {
    this.i++;
    const params: Param[] = [];
    const seen = new Set<string>();
    let kwonly = false;
    let sawDefault = false;
    while (!this.isOp(":")) {
      let kind: Param["kind"] = kwonly ? "kwonly" : "pos";
      if (this.eatOp("**")) kind = "kwstar";
      else if (this.eatOp("*")) {
        if (kwonly) throw syntaxError("* argument may appear only once");
        kwonly = true;
        if (this.isOp(",")) {
          this.i++;
          continue;
        }
        kind = "star";
      }
      const t = this.peek();
      if (t.t !== "name") throw syntaxError();
      this.i++;
      if (seen.has(t.v)) throw syntaxError(`duplicate argument '${t.v}' in function definition`);
      seen.add(t.v);
      let dflt: Node | null = null;
      if ((kind === "pos" || kind === "kwonly") && this.eatOp("=")) dflt = this.expression();
      if (kind === "pos") {
        if (dflt) sawDefault = true;
        else if (sawDefault) throw syntaxError("non-default argument follows default argument");
      }
      params.push({ name: t.v, dflt, kind });
      if (kind === "kwstar") {
        this.eatOp(",");
        if (!this.isOp(":")) throw syntaxError("arguments cannot follow var-keyword argument");
        break;
      }
      if (!this.isOp(":")) this.expectOp(",");
    }
    this.i++;
    return { k: "lambda", params, body: this.expression() };
  }

  disjunction(): Node {
    const first = this.conjunction();
    if (!this.isKw("or")) return first;
    const vals = [first];
    while (this.eatKw("or")) vals.push(this.conjunction());
    return { k: "bool", op: "or", vals };
  }
  conjunction(): Node {
    const first = this.inversion();
    if (!this.isKw("and")) return first;
    const vals = [first];
    while (this.eatKw("and")) vals.push(this.inversion());
    return { k: "bool", op: "and", vals };
  }
  inversion(): Node {
    if (this.eatKw("not")) {
      this.enter();
      try {
        return { k: "unary", op: "not", e: this.inversion() };
      } finally {
        this.depth--;
      }
    }
    return this.comparison();
  }
  comparison(): Node {
    const first = this.bitOr();
    const ops: string[] = [];
    const rest: Node[] = [];
    for (;;) {
      const t = this.peek();
      let op: string | undefined;
      if (t.t === "op" && COMPARE.has(t.v)) op = t.v;
      else if (t.t === "kw" && t.v === "in") op = "in";
      else if (t.t === "kw" && t.v === "not" && this.isKw("in", 1)) op = "not in";
      else if (t.t === "kw" && t.v === "is") op = this.isKw("not", 1) ? "is not" : "is";
      if (!op) break;
      this.i += op.includes(" ") ? 2 : 1;
      ops.push(op);
      rest.push(this.bitOr());
    }
    return ops.length ? { k: "cmp", first, ops, rest } : first;
  }
  binary(ops: readonly string[], next: () => Node): Node {
    let l = next();
    for (;;) {
      const t = this.peek();
      if (t.t !== "op" || !ops.includes(t.v)) return l;
      this.i++;
      l = { k: "bin", op: t.v, l, r: next() };
    }
  }
  bitOr = (): Node => this.binary(["|"], this.bitXor);
  bitXor = (): Node => this.binary(["^"], this.bitAnd);
  bitAnd = (): Node => this.binary(["&"], this.shift);
  shift = (): Node => this.binary(["<<", ">>"], this.sum);
  sum = (): Node => this.binary(["+", "-"], this.term);
  term = (): Node => this.binary(["*", "/", "//", "%", "@"], this.factor);
  factor = (): Node => {
    const t = this.peek();
    if (t.t === "op" && (t.v === "+" || t.v === "-" || t.v === "~")) {
      this.i++;
      this.enter();
      try {
        return { k: "unary", op: t.v, e: this.factor() };
      } finally {
        this.depth--;
      }
    }
    return this.power();
  };
  power(): Node {
    if (this.isKw("await")) throw syntaxError("'await' outside function");
    const base = this.primary();
    if (!this.eatOp("**")) return base;
    return { k: "bin", op: "**", l: base, r: this.factor() };
  }

  primary(): Node {
    let node = this.atom();
    for (;;) {
      if (this.eatOp(".")) {
        const t = this.peek();
        if (t.t !== "name") throw syntaxError();
        this.i++;
        node = { k: "attr", obj: node, name: t.v };
      } else if (this.eatOp("(")) node = this.call(node);
      else if (this.eatOp("[")) {
        node = { k: "sub", obj: node, index: this.slices() };
        this.expectOp("]");
      } else return node;
    }
  }

  call(fn: Node): Node {
    const args: Node[] = [];
    const kw: { name: string | null; value: Node }[] = [];
    const names = new Set<string>();
    while (!this.isOp(")")) {
      if (this.eatOp("**")) kw.push({ name: null, value: this.expression() });
      else if (this.eatOp("*")) {
        if (kw.some((k) => k.name === null)) throw syntaxError("iterable argument unpacking follows keyword argument unpacking");
        args.push({ k: "star", e: this.expression() });
      } else {
        const t = this.peek();
        if (t.t === "name" && this.isOp("=", 1)) {
          this.i += 2;
          if (names.has(t.v)) throw syntaxError(`keyword argument repeated: ${t.v}`);
          names.add(t.v);
          kw.push({ name: t.v, value: this.expression() });
        } else {
          const e = this.namedExpression();
          if (this.isKw("for") || this.isKw("async")) {
            const gens = this.generators();
            if (args.length || kw.length || !this.isOp(")")) throw syntaxError("Generator expression must be parenthesized");
            args.push({ k: "comp", kind: "gen", elt: e, value: null, gens });
            break;
          }
          if (this.isOp("=")) throw syntaxError('expression cannot contain assignment, perhaps you meant "=="?');
          if (kw.some((k) => k.name === null)) throw syntaxError("positional argument follows keyword argument unpacking");
          if (kw.length) throw syntaxError("positional argument follows keyword argument");
          args.push(e);
        }
      }
      if (!this.isOp(")")) this.expectOp(",");
    }
    this.i++;
    return { k: "call", fn, args, kw };
  }

  slices(): Node {
    const first = this.slice();
    if (!this.isOp(",")) return first;
    const elts = [first];
    while (this.eatOp(",")) {
      if (this.isOp("]")) break;
      elts.push(this.slice());
    }
    return { k: "tuple", elts };
  }
  slice(): Node {
    if (this.isOp("*")) return this.starOr(() => this.expression());
    let lo: Node | null = null;
    if (!this.isOp(":")) {
      lo = this.namedExpression();
      if (!this.isOp(":")) return lo;
    }
    this.i++;
    const hi = this.isOp(":") || this.isOp(",") || this.isOp("]") ? null : this.expression();
    let step: Node | null = null;
    if (this.eatOp(":") && !this.isOp(",") && !this.isOp("]")) step = this.expression();
    return { k: "slice", lo, hi, step };
  }

  generators(): Generator[] {
    const gens: Generator[] = [];
    while (this.isKw("for") || this.isKw("async")) {
      if (this.isKw("async")) throw syntaxError("asynchronous comprehension outside of an asynchronous function");
      this.i++;
      const target = this.targets();
      if (!this.eatKw("in")) throw syntaxError();
      const iter = this.disjunction();
      const ifs: Node[] = [];
      while (this.eatKw("if")) ifs.push(this.disjunction());
      gens.push({ target, iter, ifs });
    }
    return gens;
  }
  /** A comprehension's target: names, possibly in (nested) tuples/lists, possibly starred. */
  targets(): Node {
    const one = (): Node => {
      if (this.eatOp("*")) return { k: "star", e: one() };
      if (this.isOp("(") || this.isOp("[")) {
        const close = this.isOp("(") ? ")" : "]";
        this.i++;
        const elts: Node[] = [];
        while (!this.isOp(close)) {
          elts.push(one());
          if (!this.isOp(close)) this.expectOp(",");
        }
        this.i++;
        return { k: close === ")" ? "tuple" : "list", elts };
      }
      const t = this.peek();
      if (t.t !== "name") throw syntaxError("cannot assign to expression");
      this.i++;
      return { k: "name", id: t.v };
    };
    const first = one();
    if (!this.isOp(",")) return first;
    const elts = [first];
    while (this.eatOp(",")) {
      if (this.isKw("in")) break;
      elts.push(one());
    }
    return { k: "tuple", elts };
  }

  atom(): Node {
    const t = this.peek();
    this.i++;
    switch (t.t) {
      case "name":
        return { k: "name", id: t.v };
      case "int":
      case "float":
        return { k: "const", v: t.v };
      case "imag":
        return { k: "const", v: { imag: t.v } };
      case "str":
        return this.strings(t);
      case "kw":
        if (t.v === "None") return { k: "const", v: null };
        if (t.v === "True") return { k: "const", v: true };
        if (t.v === "False") return { k: "const", v: false };
        if (t.v === "yield") throw syntaxError("'yield' outside function");
        throw syntaxError();
      case "op":
        if (t.v === "...") return { k: "const", v: "..." };
        if (t.v === "(") return this.paren();
        if (t.v === "[") return this.display("]");
        if (t.v === "{") return this.brace();
        throw syntaxError();
      default:
        throw syntaxError();
    }
  }

  strings(first: Extract<Token, { t: "str" }>): Node {
    let v = first.v;
    let fstring = first.fstring;
    while (this.peek().t === "str") {
      const u = this.peek() as Extract<Token, { t: "str" }>;
      if (u.bytes !== first.bytes) throw syntaxError("cannot mix bytes and nonbytes literals");
      v += u.v;
      fstring ||= u.fstring;
      this.i++;
    }
    if (fstring) throw syntaxError("f-strings are not supported by ehrgym's calculator");
    return { k: "str", v, bytes: first.bytes };
  }

  paren(): Node {
    if (this.eatOp(")")) return { k: "tuple", elts: [] };
    if (this.isKw("yield")) throw syntaxError("'yield' outside function");
    const first = this.starOr(() => this.namedExpression());
    if (first.k !== "star" && (this.isKw("for") || this.isKw("async"))) {
      const gens = this.generators();
      this.expectOp(")");
      return { k: "comp", kind: "gen", elt: first, value: null, gens };
    }
    if (this.eatOp(")")) {
      if (first.k === "star") throw syntaxError("cannot use starred expression here");
      return first;
    }
    this.expectOp(",");
    const elts = [first];
    while (!this.isOp(")")) {
      elts.push(this.starOr(() => this.namedExpression()));
      if (!this.isOp(")")) this.expectOp(",");
    }
    this.i++;
    return { k: "tuple", elts };
  }

  display(close: "]" | "}"): Node {
    if (this.eatOp(close)) return { k: close === "]" ? "list" : "set", elts: [] };
    const first = this.starOr(() => this.namedExpression());
    if (first.k !== "star" && (this.isKw("for") || this.isKw("async"))) {
      const gens = this.generators();
      this.expectOp(close);
      return { k: "comp", kind: close === "]" ? "list" : "set", elt: first, value: null, gens };
    }
    const elts = [first];
    while (!this.isOp(close)) {
      this.expectOp(",");
      if (this.isOp(close)) break;
      elts.push(this.starOr(() => this.namedExpression()));
    }
    this.i++;
    return { k: close === "]" ? "list" : "set", elts };
  }

  brace(): Node {
    if (this.eatOp("}")) return { k: "dict", keys: [], values: [] };
    if (this.isOp("**")) return this.dictRest();
    const save = this.i;
    const first = this.starOr(() => this.namedExpression());
    if (first.k === "star" || !this.isOp(":")) {
      this.i = save;
      return this.display("}");
    }
    this.i++;
    const value = this.expression();
    if (this.isKw("for") || this.isKw("async")) {
      const gens = this.generators();
      this.expectOp("}");
      return { k: "comp", kind: "dict", elt: first, value, gens };
    }
    return this.dictRest([first], [value]);
  }
  dictRest(keys: (Node | null)[] = [], values: Node[] = []): Node {
    if (keys.length === 0) {
      this.expectOp("**");
      keys.push(null);
      values.push(this.bitOr());
    }
    while (!this.isOp("}")) {
      this.expectOp(",");
      if (this.isOp("}")) break;
      if (this.eatOp("**")) {
        keys.push(null);
        values.push(this.bitOr());
        continue;
      }
      keys.push(this.expression());
      this.expectOp(":");
      values.push(this.expression());
    }
    this.i++;
    return { k: "dict", keys, values };
  }
}

/** Parses one eval() input; SyntaxError as CPython (RecursionError past ehrgym's nesting bound). */
export function parseExpression(src: string): Node {
  // eval() drops leading spaces and tabs of a string source.
  return new Parser(tokenize(src.replace(/^[ \t]+/, ""))).top();
}
