// Evaluates one Python expression as `eval(expression, {"__builtins__": {"sum": sum}, "math": math,
// "datetime": datetime, "Decimal": decimal.Decimal}, {})` does, within ehrgym's bounds: no name or
// attribute starting with "_" (nothing past the listed names is reachable), ints and sequences of
// bounded size, a bounded number of evaluation steps.
import { LIMITS, floatDivmod, floatOf, floatPow, intFloorDiv, intMod, intPow, intTrueDiv, memoryError, shift } from "./arith.ts";
import { DATE_TYPE, type Clock, Timedelta, WALL_CLOCK, dateAdd, dateSub, datetimeModule, timedeltaDiv, timedeltaMul, withClock } from "./datetime-module.ts";
import { Decimal, bitLength, decAdd, decDiv, decDivmod, decMul, decPlus, decPow, decimalFromInt } from "./decimal.ts";
import { DECIMAL_TYPE, decimalAttr } from "./decimal-type.ts";
import { type Node, parseExpression } from "./expression.ts";
import { percentFormat } from "./format.ts";
import { mathModule } from "./math-module.ts";
import { valueAttr } from "./methods.ts";
import {
  type Kwargs,
  type Val,
  PyBuiltin,
  PyBytes,
  PyDict,
  PyEllipsis,
  PyList,
  PyModule,
  PyObj,
  PySet,
  PySlice,
  PyTuple,
  PyType,
  isNumeric,
  order,
  pyEquals,
  repr as reprOf,
  str,
  truthy,
  typeOf,
} from "./objects.ts";
import { PyError } from "./values.ts";

/** Evaluation steps one expression may take (each node, each item a loop visits). */
const MAX_STEPS = 2_000_000;

export interface EvalOptions {
  /** Where today()/now()/utcnow() read the time (default: the wall clock). */
  clock?: Clock;
}

/** A user function: a lambda with its closure. */
export class PyFunction extends PyObj {
  constructor(
    readonly node: Extract<Node, { k: "lambda" }>,
    readonly defaults: Map<string, Val>,
    readonly scope: Scope,
  ) {
    super();
  }
  get typeName() {
    return "function";
  }
  repr() {
    return `<function <lambda> at 0x${(0x7f0000000000).toString(16)}>`;
  }
}

/** A generator expression, lazy as Python's. */
export class PyGenerator extends PyObj {
  constructor(readonly it: Iterator<Val>) {
    super();
  }
  get typeName() {
    return "generator";
  }
  repr() {
    return "<generator object <genexpr> at 0x7f0000000000>";
  }
}

export class PyIterView extends PyObj {
  constructor(
    readonly kind: "dict_keys" | "dict_values" | "dict_items",
    readonly dict: PyDict,
  ) {
    super();
  }
  get typeName() {
    return this.kind;
  }
  items(): Val[] {
    const es = [...this.dict.entries.values()];
    if (this.kind === "dict_keys") return es.map((e) => e[0]);
    if (this.kind === "dict_values") return es.map((e) => e[1]);
    return es.map(([k, v]) => new PyTuple([k, v]));
  }
  repr() {
    return `${this.kind}([${this.items().map((v) => (v instanceof PyObj ? v.repr() : reprOf(v))).join(", ")}])`;
  }
  override length() {
    return this.dict.entries.size;
  }
  override truthy() {
    return this.dict.entries.size > 0;
  }
}


type Scope = { vars: Map<string, Val>; parent: Scope | null };

class Evaluator {
  steps = 0;
  readonly globals: Map<string, Val>;

  constructor() {
    this.globals = GLOBALS;
  }

  /** eval()'s locals ({}): where a top-level `:=` binds. */
  readonly top: Scope = { vars: new Map(), parent: null };

  step(n = 1): void {
    this.steps += n;
    if (this.steps > MAX_STEPS) throw new PyError("TimeoutError", "the expression exceeds ehrgym's evaluation bound");
  }

  lookup(name: string, scope: Scope | null): Val {
    for (let s = scope; s; s = s.parent) if (s.vars.has(name)) return s.vars.get(name)!;
    if (!name.startsWith("_")) {
      const g = this.globals.get(name);
      if (g !== undefined) return g;
      if (name === "sum") return SUM;
    }
    throw new PyError("NameError", `name '${name}' is not defined`);
  }

  eval(n: Node, scope: Scope | null): Val {
    this.step();
    switch (n.k) {
      case "const": {
        const v = n.v;
        if (v === "...") return PyEllipsis.it;
        if (v !== null && typeof v === "object") throw new PyError("ValueError", "ehrgym: complex numbers are not supported by the calculator");
        return v;
      }
      case "str":
        return n.bytes ? new PyBytes(Uint8Array.from([...n.v].map((c) => c.charCodeAt(0)))) : n.v;
      case "name":
        return this.lookup(n.id, scope);
      case "bin":
        return binop(n.op, this.eval(n.l, scope), this.eval(n.r, scope));
      case "unary":
        return unop(n.op, this.eval(n.e, scope));
      case "bool": {
        let v: Val = null;
        for (const e of n.vals) {
          v = this.eval(e, scope);
          if (truthy(v) === (n.op === "or")) return v;
        }
        return v;
      }
      case "cmp": {
        let left = this.eval(n.first, scope);
        for (let i = 0; i < n.ops.length; i++) {
          const right = this.eval(n.rest[i]!, scope);
          if (!compare(n.ops[i]!, left, right)) return false;
          left = right;
        }
        return true;
      }
      case "ifexp":
        return truthy(this.eval(n.test, scope)) ? this.eval(n.body, scope) : this.eval(n.orelse, scope);
      case "attr":
        return getAttr(this.eval(n.obj, scope), n.name);
      case "call":
        return this.call(n, scope);
      case "sub":
        return subscript(this.eval(n.obj, scope), this.eval(n.index, scope));
      case "slice":
        return new PySlice(
          n.lo ? this.eval(n.lo, scope) : null,
          n.hi ? this.eval(n.hi, scope) : null,
          n.step ? this.eval(n.step, scope) : null,
        );
      case "tuple":
        return new PyTuple(this.elements(n.elts, scope));
      case "list":
        return new PyList(this.elements(n.elts, scope));
      case "set":
        return new PySet(this.elements(n.elts, scope));
      case "dict": {
        const d = new PyDict();
        for (let i = 0; i < n.keys.length; i++) {
          const k = n.keys[i];
          if (k === null) {
            const other = this.eval(n.values[i]!, scope);
            if (!(other instanceof PyDict)) throw new PyError("TypeError", `'${typeOf(other)}' object is not a mapping`);
            for (const [kk, vv] of other.entries.values()) d.set(kk, vv);
          } else {
            const key = this.eval(k!, scope);
            d.set(key, this.eval(n.values[i]!, scope));
          }
        }
        return d;
      }
      case "comp":
        return this.comprehension(n, scope);
      case "lambda": {
        const defaults = new Map<string, Val>();
        for (const p of n.params) if (p.dflt) defaults.set(p.name, this.eval(p.dflt, scope));
        return new PyFunction(n, defaults, scope ?? { vars: new Map(), parent: null });
      }
      case "walrus": {
        const v = this.eval(n.value, scope);
        // `:=` binds in the enclosing function scope: eval's locals ({}) at the top.
        let s = scope;
        while (s && s.parent && (s as Scope & { comp?: boolean }).comp) s = s.parent;
        (s ?? this.top).vars.set(n.name, v);
        return v;
      }
      case "star":
        throw new PyError("SyntaxError", "can't use starred expression here");
    }
  }

  elements(elts: Node[], scope: Scope | null): Val[] {
    const out: Val[] = [];
    for (const e of elts) {
      if (e.k === "star") out.push(...this.iterate(this.eval(e.e, scope)));
      else out.push(this.eval(e, scope));
      if (out.length > LIMITS.items) throw memoryError("sequence");
    }
    return out;
  }

  iterate(v: Val): Val[] {
    const out: Val[] = [];
    for (const x of iterOf(v)) {
      this.step();
      out.push(x);
    }
    return out;
  }

  call(n: Extract<Node, { k: "call" }>, scope: Scope | null): Val {
    const fn = this.eval(n.fn, scope);
    const args = this.elements(n.args, scope);
    const kw: Kwargs = new Map();
    for (const k of n.kw) {
      if (k.name === null) {
        const m = this.eval(k.value, scope);
        if (!(m instanceof PyDict)) throw new PyError("TypeError", `argument after ** must be a mapping, not ${typeOf(m)}`);
        for (const [key, val] of m.entries.values()) {
          if (typeof key !== "string") throw new PyError("TypeError", "keywords must be strings");
          if (kw.has(key)) throw new PyError("TypeError", `got multiple values for keyword argument '${key}'`);
          kw.set(key, val);
        }
      } else {
        if (kw.has(k.name)) throw new PyError("TypeError", `got multiple values for keyword argument '${k.name}'`);
        kw.set(k.name, this.eval(k.value, scope));
      }
    }
    return this.invoke(fn, args, kw);
  }

  invoke(fn: Val, args: Val[], kw: Kwargs): Val {
    if (fn instanceof PyBuiltin) return fn.fn(args, kw);
    if (fn instanceof PyType) return fn.construct(args, kw);
    if (fn instanceof PyFunction) return this.callLambda(fn, args, kw);
    throw new PyError("TypeError", `'${typeOf(fn)}' object is not callable`);
  }

  depth = 0;
  callLambda(f: PyFunction, args: Val[], kw: Kwargs): Val {
    if (++this.depth > 200) throw new PyError("RecursionError", "maximum recursion depth exceeded");
    try {
      const vars = new Map<string, Val>();
      const pos = f.node.params.filter((p) => p.kind === "pos");
      const star = f.node.params.find((p) => p.kind === "star");
      const kwstar = f.node.params.find((p) => p.kind === "kwstar");
      if (args.length > pos.length && !star) {
        throw new PyError("TypeError", `<lambda>() takes ${pos.length} positional argument${pos.length === 1 ? "" : "s"} but ${args.length} were given`);
      }
      pos.forEach((p, i) => {
        if (i < args.length) vars.set(p.name, args[i]!);
      });
      if (star) vars.set(star.name, new PyTuple(args.slice(pos.length)));
      const extra = new PyDict();
      for (const [k, v] of kw) {
        const p = f.node.params.find((q) => q.name === k && (q.kind === "pos" || q.kind === "kwonly"));
        if (p) {
          if (vars.has(k)) throw new PyError("TypeError", `<lambda>() got multiple values for argument '${k}'`);
          vars.set(k, v);
        } else if (kwstar) extra.set(k, v);
        else throw new PyError("TypeError", `<lambda>() got an unexpected keyword argument '${k}'`);
      }
      if (kwstar) vars.set(kwstar.name, extra);
      for (const p of f.node.params) {
        if ((p.kind === "pos" || p.kind === "kwonly") && !vars.has(p.name)) {
          if (!f.defaults.has(p.name)) throw new PyError("TypeError", `<lambda>() missing 1 required positional argument: '${p.name}'`);
          vars.set(p.name, f.defaults.get(p.name)!);
        }
      }
      return this.eval(f.node.body, { vars, parent: f.scope });
    } finally {
      this.depth--;
    }
  }

  assign(target: Node, v: Val, vars: Map<string, Val>): void {
    if (target.k === "name") {
      vars.set(target.id, v);
      return;
    }
    if (target.k === "tuple" || target.k === "list") {
      const items = this.iterate(v);
      const starAt = target.elts.findIndex((e) => e.k === "star");
      if (starAt < 0) {
        if (items.length !== target.elts.length) {
          throw new PyError("ValueError", items.length > target.elts.length ? `too many values to unpack (expected ${target.elts.length})` : `not enough values to unpack (expected ${target.elts.length}, got ${items.length})`);
        }
        target.elts.forEach((t, i) => this.assign(t, items[i]!, vars));
        return;
      }
      const after = target.elts.length - starAt - 1;
      if (items.length < target.elts.length - 1) {
        throw new PyError("ValueError", `not enough values to unpack (expected at least ${target.elts.length - 1}, got ${items.length})`);
      }
      target.elts.slice(0, starAt).forEach((t, i) => this.assign(t, items[i]!, vars));
      this.assign((target.elts[starAt] as { e: Node }).e, new PyList(items.slice(starAt, items.length - after)), vars);
      target.elts.slice(starAt + 1).forEach((t, i) => this.assign(t, items[items.length - after + i]!, vars));
      return;
    }
    throw new PyError("SyntaxError", "cannot assign to expression");
  }

  comprehension(n: Extract<Node, { k: "comp" }>, scope: Scope | null): Val {
    // The first iterable is evaluated where the comprehension stands; the rest inside its own scope.
    const firstIter = iterOf(this.eval(n.gens[0]!.iter, scope));
    const inner: Scope & { comp?: boolean } = { vars: new Map(), parent: scope ?? this.top, comp: true };
    const self = this;
    function* produce(level: number, source: Iterable<Val>): Generator<Val> {
      const g = n.gens[level]!;
      for (const item of source) {
        self.step();
        self.assign(g.target, item, inner.vars);
        if (!g.ifs.every((c) => truthy(self.eval(c, inner)))) continue;
        if (level + 1 < n.gens.length) yield* produce(level + 1, iterOf(self.eval(n.gens[level + 1]!.iter, inner)));
        else if (n.kind === "dict") yield new PyTuple([self.eval(n.elt, inner), self.eval(n.value!, inner)]);
        else yield self.eval(n.elt, inner);
      }
    }
    const it = produce(0, firstIter);
    if (n.kind === "gen") return new PyGenerator(it);
    const items: Val[] = [];
    for (const v of it) {
      items.push(v);
      if (items.length > LIMITS.items) throw memoryError("sequence");
    }
    if (n.kind === "list") return new PyList(items);
    if (n.kind === "set") return new PySet(items);
    const d = new PyDict();
    for (const t of items) d.set((t as PyTuple).items[0]!, (t as PyTuple).items[1]!);
    return d;
  }
}

// ---- iteration ----

export function* iterOf(v: Val): Generator<Val> {
  if (typeof v === "string") {
    yield* v;
    return;
  }
  if (v instanceof PyList) {
    // A list may grow while iterated (Python follows it); a snapshot of its length keeps this bounded.
    for (let i = 0; i < v.items.length; i++) yield v.items[i]!;
    return;
  }
  if (v instanceof PyTuple) return yield* v.items;
  if (v instanceof PyDict) {
    for (const [k] of [...v.entries.values()]) yield k;
    return;
  }
  if (v instanceof PySet) return yield* [...v.entries.values()];
  if (v instanceof PyBytes) {
    for (const b of v.bytes) yield BigInt(b);
    return;
  }
  if (v instanceof PyGenerator) {
    for (let r = v.it.next(); !r.done; r = v.it.next()) yield r.value;
    return;
  }
  if (v instanceof PyIterView) return yield* v.items();
  throw new PyError("TypeError", `'${typeOf(v)}' object is not iterable`);
}

let current: Evaluator | null = null;
/** Lists the items of an iterable, counting each against the step bound. */
export function listOf(v: Val): Val[] {
  return current ? current.iterate(v) : [...iterOf(v)];
}

// ---- operators ----

const intOf = (v: boolean | bigint): bigint => (typeof v === "boolean" ? (v ? 1n : 0n) : v);

function unsupported(op: string, a: Val, b: Val): PyError {
  return new PyError("TypeError", `unsupported operand type(s) for ${op}: '${typeOf(a)}' and '${typeOf(b)}'`);
}

function numeric(op: string, a: boolean | bigint | number, b: boolean | bigint | number): Val {
  if (typeof a !== "number" && typeof b !== "number") {
    const x = intOf(a);
    const y = intOf(b);
    switch (op) {
      case "+":
        return x + y;
      case "-":
        return x - y;
      case "*":
        if (bitLength(x < 0n ? -x : x) + bitLength(y < 0n ? -y : y) > LIMITS.intBits + 1) throw memoryError("int");
        return x * y;
      case "/":
        return intTrueDiv(x, y);
      case "//":
        return intFloorDiv(x, y);
      case "%":
        return intMod(x, y);
      case "**":
        return intPow(x, y);
      case "<<":
        return shift(x, y, true);
      case ">>":
        return shift(x, y, false);
      case "&":
      case "|":
      case "^": {
        const r = op === "&" ? x & y : op === "|" ? x | y : x ^ y;
        return typeof a === "boolean" && typeof b === "boolean" ? r !== 0n : r;
      }
    }
    throw unsupported(op, a, b);
  }
  if (op === "<<" || op === ">>" || op === "&" || op === "|" || op === "^") throw unsupported(op, a, b);
  const x = typeof a === "number" ? a : floatOf(intOf(a));
  const y = typeof b === "number" ? b : floatOf(intOf(b));
  switch (op) {
    case "+":
      return x + y;
    case "-":
      return x - y;
    case "*":
      return x * y;
    case "/":
      if (y === 0) throw new PyError("ZeroDivisionError", "float division by zero");
      return x / y;
    case "//":
      return floatDivmod(x, y, "float floor division by zero")[0];
    case "%":
      return floatDivmod(x, y, "float modulo")[1];
    case "**":
      return floatPow(x, y);
  }
  throw unsupported(op, a, b);
}

function decimalOp(op: string, a: Decimal, b: Decimal): Val {
  switch (op) {
    case "+":
      return decAdd(a, b);
    case "-":
      return decAdd(a, b, true);
    case "*":
      return decMul(a, b);
    case "/":
      return decDiv(a, b);
    case "//":
      return decDivmod(a, b, "div");
    case "%":
      return decDivmod(a, b, "mod");
    case "**":
      return decPow(a, b);
  }
  throw unsupported(op, a, b);
}

function repeat(seq: Val, n: Val): Val | undefined {
  if (!(typeof n === "bigint" || typeof n === "boolean")) return undefined;
  const k = intOf(n);
  if (k > 9223372036854775807n) throw new PyError("OverflowError", "cannot fit 'int' into an index-sized integer");
  const times = k < 0n ? 0 : Number(k);
  const len = typeof seq === "string" ? seq.length : (seq as PyList | PyTuple).items.length;
  if (len * times > LIMITS.items) throw memoryError(typeof seq === "string" ? "str" : "sequence");
  if (typeof seq === "string") return seq.repeat(times);
  const items: Val[] = [];
  for (let i = 0; i < times; i++) items.push(...(seq as PyList).items);
  return seq instanceof PyList ? new PyList(items) : new PyTuple(items);
}

export function binop(op: string, a: Val, b: Val): Val {
  if (isNumeric(a) && isNumeric(b)) return numeric(op, a, b);
  if (a instanceof Decimal || b instanceof Decimal) {
    const ok = (v: Val) => v instanceof Decimal || typeof v === "bigint" || typeof v === "boolean";
    if (ok(a) && ok(b) && ["+", "-", "*", "/", "//", "%", "**"].includes(op)) {
      const x = a instanceof Decimal ? a : decimalFromInt(intOf(a as bigint));
      const y = b instanceof Decimal ? b : decimalFromInt(intOf(b as bigint));
      return decimalOp(op, x, y);
    }
    if (op === "*" && a instanceof Decimal && b instanceof Timedelta) throw unsupported(op, a, b);
    throw unsupported(op === "**" ? "** or pow()" : op, a, b);
  }
  switch (op) {
    case "+": {
      if (typeof a === "string" && typeof b === "string") {
        if (a.length + b.length > LIMITS.items) throw memoryError("str");
        return a + b;
      }
      if (a instanceof PyList && b instanceof PyList) return sized(new PyList([...a.items, ...b.items]));
      if (a instanceof PyTuple && b instanceof PyTuple) return sized(new PyTuple([...a.items, ...b.items]));
      if (a instanceof PyBytes && b instanceof PyBytes) return new PyBytes(Uint8Array.from([...a.bytes, ...b.bytes]));
      if (typeof a === "string" || a instanceof PyList || a instanceof PyTuple) {
        if (a instanceof PyList) throw new PyError("TypeError", `can only concatenate list (not "${typeOf(b)}") to list`);
        if (a instanceof PyTuple) throw new PyError("TypeError", `can only concatenate tuple (not "${typeOf(b)}") to tuple`);
        if (!(b instanceof Timedelta)) throw new PyError("TypeError", `can only concatenate str (not "${typeOf(b)}") to str`);
      }
      const r = dateAdd(a, b);
      if (r !== undefined) return r;
      break;
    }
    case "-": {
      const r = dateSub(a, b);
      if (r !== undefined) return r;
      if (a instanceof PySet && b instanceof PySet) return new PySet([...a.entries.values()].filter((v) => !b.has(v)), a.frozen);
      break;
    }
    case "*": {
      if (typeof a === "string" || a instanceof PyList || a instanceof PyTuple) {
        const r = repeat(a, b);
        if (r !== undefined) return r;
        throw new PyError("TypeError", `can't multiply sequence by non-int of type '${typeOf(b)}'`);
      }
      if (typeof b === "string" || b instanceof PyList || b instanceof PyTuple) {
        const r = repeat(b, a);
        if (r !== undefined) return r;
        throw new PyError("TypeError", `can't multiply sequence by non-int of type '${typeOf(a)}'`);
      }
      if (a instanceof PyBytes || b instanceof PyBytes) {
        const [bs, n] = a instanceof PyBytes ? [a, b] : [b as PyBytes, a];
        if (typeof n === "bigint" || typeof n === "boolean") {
          const k = Math.max(0, Number(intOf(n)));
          if (bs.bytes.length * k > LIMITS.items) throw memoryError("bytes");
          const out = new Uint8Array(bs.bytes.length * k);
          for (let i = 0; i < k; i++) out.set(bs.bytes, i * bs.bytes.length);
          return new PyBytes(out);
        }
        throw new PyError("TypeError", `can't multiply sequence by non-int of type '${typeOf(n)}'`);
      }
      if (a instanceof Timedelta) {
        const r = timedeltaMul(a, b);
        if (r !== undefined) return r;
      }
      if (b instanceof Timedelta) {
        const r = timedeltaMul(b, a);
        if (r !== undefined) return r;
      }
      break;
    }
    case "/":
    case "//":
      if (a instanceof Timedelta) {
        const r = timedeltaDiv(a, b, op === "//");
        if (r !== undefined) return r;
      }
      break;
    case "%":
      if (a instanceof Timedelta && b instanceof Timedelta) {
        if (b.us === 0n) throw new PyError("ZeroDivisionError", "integer division or modulo by zero");
        return new Timedelta(intMod(a.us, b.us));
      }
      if (typeof a === "string") return percentFormat(a, b);
      break;
    case "|":
      if (a instanceof PyDict && b instanceof PyDict) {
        const d = new PyDict();
        for (const [k, v] of a.entries.values()) d.set(k, v);
        for (const [k, v] of b.entries.values()) d.set(k, v);
        return d;
      }
      if (a instanceof PySet && b instanceof PySet) return new PySet([...a.entries.values(), ...b.entries.values()], a.frozen);
      break;
    case "&":
      if (a instanceof PySet && b instanceof PySet) return new PySet([...a.entries.values()].filter((v) => b.has(v)), a.frozen);
      break;
    case "^":
      if (a instanceof PySet && b instanceof PySet) {
        return new PySet([...[...a.entries.values()].filter((v) => !b.has(v)), ...[...b.entries.values()].filter((v) => !a.has(v))], a.frozen);
      }
      break;
  }
  throw unsupported(op === "**" ? "** or pow()" : op, a, b);
}

function sized<T extends PyList | PyTuple>(v: T): T {
  if (v.items.length > LIMITS.items) throw memoryError("sequence");
  return v;
}


function unop(op: string, v: Val): Val {
  if (op === "not") return !truthy(v);
  if (typeof v === "boolean" || typeof v === "bigint") {
    const i = intOf(v);
    return op === "-" ? -i : op === "+" ? i : -i - 1n;
  }
  if (typeof v === "number") {
    if (op === "-") return -v;
    if (op === "+") return v;
  }
  if (v instanceof Decimal && op !== "~") return decPlus(v, op === "-");
  if (v instanceof Timedelta && op !== "~") return op === "-" ? new Timedelta(-v.us) : v;
  const name = op === "-" ? "unary -" : op === "+" ? "unary +" : "unary ~";
  throw new PyError("TypeError", `bad operand type for ${name}: '${typeOf(v)}'`);
}

function compare(op: string, a: Val, b: Val): boolean {
  switch (op) {
    case "==":
      return pyEquals(a, b);
    case "!=":
      return !pyEquals(a, b);
    case "<":
    case "<=":
    case ">":
    case ">=":
      return order(a, b, op);
    case "in":
      return contains(b, a);
    case "not in":
      return !contains(b, a);
    case "is":
      return identical(a, b);
    default:
      return !identical(a, b);
  }
}

/** `is`: the same object; equal small ints and equal strings count as the same (CPython caches and interns them). */
function identical(a: Val, b: Val): boolean {
  if (typeof a === "bigint" && typeof b === "bigint") return a === b && a >= -5n && a <= 256n;
  if (typeof a === "number" || typeof b === "number") return false;
  return a === b;
}

function contains(container: Val, x: Val): boolean {
  if (typeof container === "string") {
    if (typeof x !== "string") throw new PyError("TypeError", `'in <string>' requires string as left operand, not ${typeOf(x)}`);
    return container.includes(x);
  }
  if (container instanceof PyDict) return container.get(x) !== undefined;
  if (container instanceof PySet) return container.has(x);
  if (container instanceof PyBytes) {
    if (typeof x === "bigint" || typeof x === "boolean") {
      const i = intOf(x);
      if (i < 0n || i > 255n) throw new PyError("ValueError", "byte must be in range(0, 256)");
      return container.bytes.includes(Number(i));
    }
    if (x instanceof PyBytes) return Buffer.from(container.bytes).includes(Buffer.from(x.bytes));
    throw new PyError("TypeError", `a bytes-like object is required, not '${typeOf(x)}'`);
  }
  for (const item of iterOfContainer(container)) {
    current?.step();
    if (item === x || pyEquals(item, x)) return true;
  }
  return false;
}

function iterOfContainer(v: Val): Iterable<Val> {
  try {
    return iterOf(v);
  } catch {
    throw new PyError("TypeError", `argument of type '${typeOf(v)}' is not iterable`);
  }
}

// ---- subscripts ----

function indexOf(v: Val, what: string): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "boolean") return v ? 1n : 0n;
  throw new PyError("TypeError", `${what} indices must be integers or slices, not ${typeOf(v)}`);
}

/** slice.indices(len): start, stop, step with Python's clamping. */
function sliceIndices(s: PySlice, len: number): [number, number, number] {
  const idx = (v: Val): bigint | null => {
    if (v === null) return null;
    if (typeof v === "bigint") return v;
    if (typeof v === "boolean") return v ? 1n : 0n;
    throw new PyError("TypeError", "slice indices must be integers or None or have an __index__ method");
  };
  const stepI = idx(s.step) ?? 1n;
  if (stepI === 0n) throw new PyError("ValueError", "slice step cannot be zero");
  const step = Number(stepI < -(2n ** 62n) ? -(2n ** 62n) : stepI > 2n ** 62n ? 2n ** 62n : stepI);
  const L = BigInt(len);
  const clamp = (v: bigint | null, dflt: bigint, lo: bigint, hi: bigint) => {
    if (v === null) return dflt;
    let x = v < 0n ? v + L : v;
    if (x < lo) x = lo;
    if (x > hi) x = hi;
    return x;
  };
  const start = step > 0 ? clamp(idx(s.lo), 0n, 0n, L) : clamp(idx(s.lo), L - 1n, -1n, L - 1n);
  const stop = step > 0 ? clamp(idx(s.hi), L, 0n, L) : clamp(idx(s.hi), -1n, -1n, L - 1n);
  return [Number(start), Number(stop), step];
}

function sliceItems<T>(items: T[], s: PySlice): T[] {
  const [start, stop, step] = sliceIndices(s, items.length);
  const out: T[] = [];
  if (step > 0) for (let i = start; i < stop; i += step) out.push(items[i]!);
  else for (let i = start; i > stop; i += step) out.push(items[i]!);
  return out;
}

export function subscript(v: Val, key: Val): Val {
  if (v instanceof PyDict) {
    const r = v.get(key);
    if (r === undefined) throw new PyError("KeyError", reprOf(key));
    return r;
  }
  const seq = v instanceof PyList || v instanceof PyTuple ? v.items : typeof v === "string" ? [...v] : v instanceof PyBytes ? [...v.bytes] : undefined;
  if (seq === undefined) {
    if (v instanceof PyType && v !== DATE_TYPE) throw new PyError("TypeError", `type '${v.qualname}' is not subscriptable`);
    throw new PyError("TypeError", `'${typeOf(v)}' object is not subscriptable`);
  }
  if (key instanceof PySlice) {
    const items = sliceItems(seq as Val[], key);
    if (typeof v === "string") return (items as string[]).join("");
    if (v instanceof PyBytes) return new PyBytes(Uint8Array.from(items as unknown as number[]));
    return v instanceof PyList ? new PyList(items) : new PyTuple(items);
  }
  const kind = typeof v === "string" ? "string" : typeOf(v);
  let i = indexOf(key, kind === "string" ? "string" : kind);
  if (i < 0n) i += BigInt(seq.length);
  if (i < 0n || i >= BigInt(seq.length)) throw new PyError("IndexError", `${kind} index out of range`);
  const item = seq[Number(i)]!;
  return v instanceof PyBytes ? BigInt(item as number) : (item as Val);
}

// ---- attributes ----

export function getAttr(v: Val, name: string): Val {
  if (name.startsWith("_")) {
    throw new PyError("AttributeError", `'${typeOf(v)}' object has no attribute '${name}' (ehrgym's calculator reaches no attribute starting with '_')`);
  }
  let r: Val | undefined;
  if (v instanceof Decimal) r = decimalAttr(v, name);
  else if (v instanceof PyObj) r = v.getattr(name) ?? valueAttr(v, name);
  else r = valueAttr(v, name);
  if (r === undefined) {
    if (v instanceof PyModule) throw new PyError("AttributeError", `module '${v.name}' has no attribute '${name}'`);
    if (v instanceof PyType) throw new PyError("AttributeError", `type object '${v.qualname}' has no attribute '${name}'`);
    throw new PyError("AttributeError", `'${typeOf(v)}' object has no attribute '${name}'`);
  }
  return r;
}

// ---- builtins and globals ----

const SUM = new PyBuiltin("sum", (args, kw) => {
  if (args.length < 1 || args.length > 2) throw new PyError("TypeError", `sum() takes at most 2 arguments (${args.length} given)`);
  let start: Val = args.length === 2 ? args[1]! : 0n;
  for (const [k, v] of kw) {
    if (k !== "start" || args.length === 2) throw new PyError("TypeError", k === "start" ? "argument for sum() given by name ('start') and position (2)" : `'${k}' is an invalid keyword argument for sum()`);
    start = v;
  }
  if (typeof start === "string") throw new PyError("TypeError", "sum() can't sum strings [use ''.join(seq) instead]");
  if (start instanceof PyBytes) throw new PyError("TypeError", "sum() can't sum bytes [use b''.join(seq) instead]");
  let acc: Val = start;
  for (const x of iterOf(args[0]!)) {
    current?.step();
    acc = binop("+", acc, x);
  }
  return acc;
});

const GLOBALS = new Map<string, Val>([
  ["math", mathModule(listOf, (a, b) => binop("*", a, b))],
  ["datetime", datetimeModule()],
  ["Decimal", DECIMAL_TYPE],
]);

/** The evaluated value of one expression. Raises PyError as CPython would (plus ehrgym's bounds). */
export function evaluate(expression: string, options: EvalOptions = {}): Val {
  const tree = parseExpression(expression);
  const ev = new Evaluator();
  const prev = current;
  current = ev;
  try {
    return withClock(options.clock ?? WALL_CLOCK, () => ev.eval(tree, ev.top));
  } catch (e) {
    if (e instanceof RangeError) throw new PyError("MemoryError", "the expression exceeds ehrgym's bounds");
    throw e;
  } finally {
    current = prev;
  }
}

/** str(eval(expression)) as the original calculator answers. */
export function evaluateToString(expression: string, options: EvalOptions = {}): string {
  return str(evaluate(expression, options));
}
