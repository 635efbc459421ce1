// Python value model used to reproduce the official (Python) graders exactly.
// int -> bigint (arbitrary precision), float -> number, bool -> boolean, None -> null,
// str -> string, list -> Py[], dict -> PyDict (insertion ordered), plus tuple/set/complex/bytes
// that only ast.literal_eval can produce.

export class PyError extends Error {
  constructor(
    readonly pyType: string,
    message: string,
  ) {
    super(`${pyType}: ${message}`);
    this.name = "PyError";
  }
}

export class PyDict {
  readonly map = new Map<PyKey, Py>();
  constructor(entries: Iterable<[PyKey, Py]> = []) {
    for (const [k, v] of entries) this.map.set(k, v);
  }
}
export class PyTuple {
  constructor(readonly items: Py[]) {}
}
export class PySet {
  constructor(readonly items: Py[]) {}
}
export class PyComplex {
  constructor(
    readonly re: number,
    readonly im: number,
  ) {}
}
export class PyBytes {
  constructor(readonly bytes: number[]) {}
}

/** Dict keys: JSON gives strings; literal_eval may give numbers/None/bool too. */
export type PyKey = string | bigint | number | boolean | null;
export type Py = null | boolean | bigint | number | string | Py[] | PyDict | PyTuple | PySet | PyComplex | PyBytes;

export function typeName(v: Py): string {
  if (v === null) return "NoneType";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return "float";
  if (typeof v === "string") return "str";
  if (Array.isArray(v)) return "list";
  if (v instanceof PyDict) return "dict";
  if (v instanceof PyTuple) return "tuple";
  if (v instanceof PySet) return "set";
  if (v instanceof PyComplex) return "complex";
  return "bytes";
}

export const isDict = (v: Py): v is PyDict => v instanceof PyDict;
export const isList = (v: Py): v is Py[] => Array.isArray(v);
export const isStr = (v: Py): v is string => typeof v === "string";

/** Convert a plain JS value (JSON.parse output, FHIR resources) to a Python value.
 *  Integral numbers become int unless `floats` is set (base data values compare numerically anyway). */
export function fromJs(value: unknown, opts: { floats?: boolean } = {}): Py {
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean" || typeof value === "string" || typeof value === "bigint") return value;
  if (typeof value === "number") return !opts.floats && Number.isInteger(value) && Number.isSafeInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map((v) => fromJs(v, opts));
  if (typeof value === "object") {
    if (value instanceof PyDict || value instanceof PyTuple || value instanceof PySet || value instanceof PyComplex || value instanceof PyBytes)
      return value;
    const maybeDecimal = value as { toJSON?: () => unknown };
    if (typeof maybeDecimal.toJSON === "function") return fromJs(maybeDecimal.toJSON(), opts);
    const d = new PyDict();
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (v !== undefined) d.map.set(k, fromJs(v, opts));
    return d;
  }
  return null;
}

/** Python values back to plain JS, for details, task files and action logs. Ints become numbers when
 *  safe, else decimal strings; with `intsAsNumbers` always numbers (what JSON.parse would give). */
export function toJs(v: Py, opts: { intsAsNumbers?: boolean } = {}): unknown {
  if (typeof v === "bigint") return opts.intsAsNumbers || Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (Array.isArray(v)) return v.map((x) => toJs(x, opts));
  if (v instanceof PyDict) return Object.fromEntries([...v.map].map(([k, x]) => [String(k), toJs(x, opts)]));
  if (v instanceof PyTuple || v instanceof PySet) return v.items.map((x) => toJs(x, opts));
  if (v instanceof PyComplex || v instanceof PyBytes) return String(v);
  return v;
}
