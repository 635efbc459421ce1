// The values an evaluated Python expression works with (the calculator's language): int (bigint),
// float (number), bool, None (null), str, and objects (list, tuple, dict, set, bytes, Decimal,
// the datetime types, functions, types, modules), with Python's repr()/str(), ==, hashing and ordering.
import { Decimal, decCompare, decimalFromFloat, decimalFromInt, floatRatio, pow10 } from "./decimal.ts";
import { numCmp } from "./numbers.ts";
import { floatRepr, strRepr } from "./repr.ts";
import { PyError } from "./values.ts";

export type Val = null | boolean | bigint | number | string | PyObj | Decimal;

export abstract class PyObj {
  /** The type's name as Python's messages spell it (e.g. 'list', 'datetime.date'). */
  abstract get typeName(): string;
  abstract repr(): string;
  str(): string {
    return this.repr();
  }
  truthy(): boolean {
    return true;
  }
  /** Python ==; undefined when this type does not decide (then identity). */
  eq(_other: Val): boolean | undefined {
    return undefined;
  }
  /** -1/0/1 (NaN when unordered) or undefined when the types do not order. */
  cmp(_other: Val): number | undefined {
    return undefined;
  }
  /** A string equal for equal values; undefined when unhashable. */
  hashKey(): string | undefined {
    return `id:${objectId(this)}`;
  }
  /** Attribute lookup; undefined when there is none. */
  getattr(_name: string): Val | undefined {
    return undefined;
  }
  /** len(); undefined when it has none. */
  length(): number | undefined {
    return undefined;
  }
}

const ids = new WeakMap<object, number>();
let nextId = 1;
function objectId(o: object): number {
  let id = ids.get(o);
  if (id === undefined) ids.set(o, (id = nextId++));
  return id;
}

export class PyList extends PyObj {
  constructor(public items: Val[]) {
    super();
  }
  get typeName() {
    return "list";
  }
  repr(): string {
    return `[${this.items.map(repr).join(", ")}]`;
  }
  override truthy() {
    return this.items.length > 0;
  }
  override eq(o: Val) {
    return o instanceof PyList ? seqEq(this.items, o.items) : false;
  }
  override cmp(o: Val) {
    return o instanceof PyList ? seqCmp(this.items, o.items) : undefined;
  }
  override hashKey() {
    return undefined;
  }
  override length() {
    return this.items.length;
  }
}

export class PyTuple extends PyObj {
  constructor(readonly items: Val[]) {
    super();
  }
  get typeName() {
    return "tuple";
  }
  repr(): string {
    return this.items.length === 1 ? `(${repr(this.items[0]!)},)` : `(${this.items.map(repr).join(", ")})`;
  }
  override truthy() {
    return this.items.length > 0;
  }
  override eq(o: Val) {
    return o instanceof PyTuple ? seqEq(this.items, o.items) : false;
  }
  override cmp(o: Val) {
    return o instanceof PyTuple ? seqCmp(this.items, o.items) : undefined;
  }
  override hashKey(): string | undefined {
    const keys = this.items.map(hashKey);
    return keys.includes(undefined) ? undefined : `(${keys.join(",")})`;
  }
  override length() {
    return this.items.length;
  }
}

/** A tuple with field names (DecimalTuple, IsoCalendarDate): repr names the fields. */
export class NamedTuple extends PyTuple {
  constructor(
    readonly name: string,
    readonly fields: string[],
    items: Val[],
  ) {
    super(items);
  }
  override repr(): string {
    return `${this.name}(${this.fields.map((f, i) => `${f}=${repr(this.items[i]!)}`).join(", ")})`;
  }
  override getattr(name: string) {
    const i = this.fields.indexOf(name);
    return i >= 0 ? this.items[i] : undefined;
  }
}

export class PyDict extends PyObj {
  readonly entries = new Map<string, [Val, Val]>();
  get typeName() {
    return "dict";
  }
  get(key: Val): Val | undefined {
    return this.entries.get(mustHash(key))?.[1];
  }
  set(key: Val, value: Val): void {
    const h = mustHash(key);
    const old = this.entries.get(h);
    // An equal key already there keeps its first spelling (as Python's dict does).
    this.entries.set(h, [old ? old[0] : key, value]);
  }
  repr(): string {
    return `{${[...this.entries.values()].map(([k, v]) => `${repr(k)}: ${repr(v)}`).join(", ")}}`;
  }
  override truthy() {
    return this.entries.size > 0;
  }
  override eq(o: Val) {
    if (!(o instanceof PyDict)) return false;
    if (o.entries.size !== this.entries.size) return false;
    for (const [h, [, v]] of this.entries) {
      const w = o.entries.get(h);
      if (!w || !pyEquals(v, w[1])) return false;
    }
    return true;
  }
  override hashKey() {
    return undefined;
  }
  override length() {
    return this.entries.size;
  }
}

/** set and frozenset: CPython orders them by hash; ehrgym keeps insertion order (see the README). */
export class PySet extends PyObj {
  readonly entries = new Map<string, Val>();
  constructor(
    items: Val[] = [],
    readonly frozen = false,
  ) {
    super();
    for (const v of items) this.add(v);
  }
  add(v: Val): void {
    const h = mustHash(v);
    if (!this.entries.has(h)) this.entries.set(h, v);
  }
  has(v: Val): boolean {
    return this.entries.has(mustHash(v));
  }
  get typeName() {
    return this.frozen ? "frozenset" : "set";
  }
  repr(): string {
    const items = [...this.entries.values()].map(repr).join(", ");
    if (this.frozen) return `frozenset(${items ? `{${items}}` : ""})`;
    return items ? `{${items}}` : "set()";
  }
  override truthy() {
    return this.entries.size > 0;
  }
  override eq(o: Val) {
    if (!(o instanceof PySet)) return false;
    return o.entries.size === this.entries.size && [...this.entries.keys()].every((h) => o.entries.has(h));
  }
  override cmp(o: Val) {
    if (!(o instanceof PySet)) return undefined;
    const sub = [...this.entries.keys()].every((h) => o.entries.has(h));
    const sup = [...o.entries.keys()].every((h) => this.entries.has(h));
    return sub && sup ? 0 : sub ? -1 : sup ? 1 : NaN;
  }
  override hashKey() {
    return this.frozen ? `fs{${[...this.entries.keys()].sort().join(",")}}` : undefined;
  }
  override length() {
    return this.entries.size;
  }
}

export class PyBytes extends PyObj {
  constructor(readonly bytes: Uint8Array) {
    super();
  }
  get typeName() {
    return "bytes";
  }
  repr(): string {
    const s = String.fromCharCode(...this.bytes);
    const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
    let out = "b" + quote;
    for (const b of this.bytes) {
      const ch = String.fromCharCode(b);
      if (ch === quote || ch === "\\") out += "\\" + ch;
      else if (b === 9) out += "\\t";
      else if (b === 10) out += "\\n";
      else if (b === 13) out += "\\r";
      else if (b < 0x20 || b >= 0x7f) out += `\\x${b.toString(16).padStart(2, "0")}`;
      else out += ch;
    }
    return out + quote;
  }
  override truthy() {
    return this.bytes.length > 0;
  }
  override eq(o: Val) {
    return o instanceof PyBytes && o.bytes.length === this.bytes.length && o.bytes.every((b, i) => b === this.bytes[i]);
  }
  override cmp(o: Val) {
    if (!(o instanceof PyBytes)) return undefined;
    return seqCmp([...this.bytes].map(BigInt), [...o.bytes].map(BigInt));
  }
  override hashKey() {
    return `b:${[...this.bytes].join(",")}`;
  }
  override length() {
    return this.bytes.length;
  }
}

export class PySlice extends PyObj {
  constructor(
    readonly lo: Val,
    readonly hi: Val,
    readonly step: Val,
  ) {
    super();
  }
  get typeName() {
    return "slice";
  }
  repr() {
    return `slice(${repr(this.lo)}, ${repr(this.hi)}, ${repr(this.step)})`;
  }
}

export class PyEllipsis extends PyObj {
  static readonly it = new PyEllipsis();
  get typeName() {
    return "ellipsis";
  }
  repr() {
    return "Ellipsis";
  }
}

export type Kwargs = Map<string, Val>;
export type NativeFn = (args: Val[], kw: Kwargs) => Val;

/** A function implemented by ehrgym (a builtin, a module function or a bound method). */
export class PyBuiltin extends PyObj {
  constructor(
    readonly name: string,
    readonly fn: NativeFn,
    /** For a bound method: the object it is bound to (repr names its type). */
    readonly self?: Val,
  ) {
    super();
  }
  get typeName() {
    return "builtin_function_or_method";
  }
  repr() {
    if (this.self === undefined) return `<built-in function ${this.name}>`;
    if (this.self instanceof PyType) return `<built-in method ${this.name} of type object at 0x${objectId(this.self).toString(16)}>`;
    return `<built-in method ${this.name} of ${typeOf(this.self)} object at 0x${objectId(this).toString(16)}>`;
  }
  override eq(o: Val) {
    return o instanceof PyBuiltin && o.name === this.name && o.fn === this.fn && o.self === this.self;
  }
}

/** A class the expression can reach (datetime.date, Decimal, ...): callable, with class attributes. */
export class PyType extends PyObj {
  constructor(
    readonly qualname: string,
    readonly construct: NativeFn,
    readonly attrs: (name: string) => Val | undefined = () => undefined,
  ) {
    super();
  }
  get typeName() {
    return "type";
  }
  repr() {
    return `<class '${this.qualname}'>`;
  }
  override getattr(name: string) {
    return this.attrs(name);
  }
}

export class PyModule extends PyObj {
  constructor(
    readonly name: string,
    readonly members: Map<string, Val>,
    private readonly reprText: string,
  ) {
    super();
  }
  get typeName() {
    return "module";
  }
  repr() {
    return this.reprText;
  }
  override getattr(name: string) {
    return this.members.get(name);
  }
}

export function typeOf(v: Val): string {
  if (v === null) return "NoneType";
  switch (typeof v) {
    case "boolean":
      return "bool";
    case "bigint":
      return "int";
    case "number":
      return "float";
    case "string":
      return "str";
  }
  if (v instanceof Decimal) return "decimal.Decimal";
  return v.typeName;
}

export function repr(v: Val): string {
  if (v === null) return "None";
  switch (typeof v) {
    case "boolean":
      return v ? "True" : "False";
    case "bigint":
      return intStr(v);
    case "number":
      return floatRepr(v);
    case "string":
      return strRepr(v);
  }
  if (v instanceof Decimal) return v.repr();
  return v.repr();
}

/** Python's str(). */
export function str(v: Val): string {
  if (typeof v === "string") return v;
  if (v instanceof Decimal) return v.toString();
  if (v instanceof PyObj) return v.str();
  return repr(v);
}

/** CPython refuses to convert ints of more than 4300 digits to text (sys.int_info.default_max_str_digits). */
const MAX_STR_DIGITS = 4300;
export function intStr(i: bigint): string {
  const abs = i < 0n ? -i : i;
  if (abs >= pow10(MAX_STR_DIGITS)) {
    throw new PyError("ValueError", "Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit");
  }
  return i.toString();
}

export function truthy(v: Val): boolean {
  if (v === null || v === false) return false;
  if (v === true) return true;
  switch (typeof v) {
    case "bigint":
      return v !== 0n;
    case "number":
      return v !== 0; // NaN is true
    case "string":
      return v.length > 0;
  }
  if (v instanceof Decimal) return !v.isZero;
  return v.truthy();
}

export const isNumeric = (v: Val): v is boolean | bigint | number => typeof v === "boolean" || typeof v === "bigint" || typeof v === "number";

function toDecimal(v: boolean | bigint | number | Decimal): Decimal {
  if (v instanceof Decimal) return v;
  if (typeof v === "number") return decimalFromFloat(v);
  return decimalFromInt(typeof v === "boolean" ? (v ? 1n : 0n) : v);
}

/** Numeric comparison over int, float, bool and Decimal (NaN when unordered); undefined for other types. */
export function numericCmp(a: Val, b: Val): number | undefined {
  const aDec = a instanceof Decimal;
  const bDec = b instanceof Decimal;
  if (aDec || bDec) {
    if ((aDec || isNumeric(a)) && (bDec || isNumeric(b))) return decCompare(toDecimal(a as Decimal), toDecimal(b as Decimal));
    return undefined;
  }
  if (isNumeric(a) && isNumeric(b)) return numCmp(a, b);
  return undefined;
}

export function pyEquals(a: Val, b: Val): boolean {
  if (a === b) return typeof a !== "number" || !Number.isNaN(a);
  const n = numericCmp(a, b);
  if (n !== undefined) {
    if (Number.isNaN(n) && ((a instanceof Decimal && a.special === "sNaN") || (b instanceof Decimal && b.special === "sNaN")))
      throw new PyError("InvalidOperation", "[<class 'decimal.InvalidOperation'>]");
    return n === 0;
  }
  if (typeof a === "string" || typeof b === "string") return false;
  if (a instanceof PyObj) {
    const r = a.eq(b);
    if (r !== undefined) return r;
  }
  if (b instanceof PyObj) {
    const r = b.eq(a);
    if (r !== undefined) return r;
  }
  return false;
}

function seqEq(a: Val[], b: Val[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i] || pyEquals(x, b[i]!));
}

/** Lexicographic order of sequences; the first unequal pair decides (its own ordering may raise). */
function seqCmp(a: Val[], b: Val[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] === b[i] || pyEquals(a[i]!, b[i]!)) continue;
    return order(a[i]!, b[i]!, "<") ? -1 : 1;
  }
  return a.length - b.length < 0 ? -1 : a.length > b.length ? 1 : 0;
}

/** `a op b` for < <= > >=, raising TypeError when the types do not order. */
export function order(a: Val, b: Val, op: "<" | "<=" | ">" | ">="): boolean {
  let c = numericCmp(a, b);
  if (c === undefined) {
    if (typeof a === "string" && typeof b === "string") c = a < b ? -1 : a > b ? 1 : 0;
    else if (a instanceof PyObj) c = a.cmp(b);
    if (c === undefined && b instanceof PyObj) {
      const r = b.cmp(a);
      if (r !== undefined) c = -r;
    }
    if (c === undefined) throw new PyError("TypeError", `'${op}' not supported between instances of '${typeOf(a)}' and '${typeOf(b)}'`);
  } else if (Number.isNaN(c) && (a instanceof Decimal || b instanceof Decimal)) {
    throw new PyError("InvalidOperation", "[<class 'decimal.InvalidOperation'>]");
  }
  if (Number.isNaN(c)) return false;
  switch (op) {
    case "<":
      return c < 0;
    case "<=":
      return c <= 0;
    case ">":
      return c > 0;
    default:
      return c >= 0;
  }
}

/** Equal values (1 == 1.0 == True == Decimal('1.0')) hash alike; undefined when unhashable. */
export function hashKey(v: Val): string | undefined {
  if (v === null) return "None";
  if (typeof v === "string") return `s:${v}`;
  if (isNumeric(v) || v instanceof Decimal) return numberKey(v);
  return v.hashKey();
}

function numberKey(v: boolean | bigint | number | Decimal): string {
  if (typeof v === "boolean") return v ? "q:1" : "q:0";
  if (typeof v === "bigint") return `q:${v}`;
  if (typeof v === "number") {
    if (Number.isNaN(v)) return `nan:${Math.random()}`;
    if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
    if (Number.isInteger(v)) return `q:${BigInt(v)}`;
    const [n, d] = floatRatio(Math.abs(v));
    return `q:${v < 0 ? -n : n}/${d}`;
  }
  if (v.isNaN) {
    if (v.special === "sNaN") throw new PyError("TypeError", "Cannot hash a signaling NaN value.");
    return `nan:${Math.random()}`;
  }
  if (v.isInf) return v.sign ? "-inf" : "inf";
  let c = v.coef;
  let e = v.exp;
  if (c === 0n) return "q:0";
  while (e < 0 && c % 10n === 0n) {
    c /= 10n;
    e++;
  }
  const signed = v.sign ? -c : c;
  if (e >= 0) return `q:${signed * pow10(e)}`;
  // c / 10^-e reduced: only factors 2 and 5 can cancel.
  let den = pow10(-e);
  let num = signed;
  for (const f of [2n, 5n]) while (num % f === 0n && den % f === 0n) [num, den] = [num / f, den / f];
  return `q:${num}/${den}`;
}

export function mustHash(v: Val): string {
  const h = hashKey(v);
  if (h === undefined) throw new PyError("TypeError", `unhashable type: '${typeOf(v)}'`);
  return h;
}
