// pydantic v2's lax (Python-mode) validation of `model_validate(json.loads(text))`, for the argument
// models of the original V2 tools: what each field type accepts and turns it into, as zod schemas whose
// output is `model_dump()` (declared fields only, coerced). Values arrive as JSON.parse gives them.
import { z } from "zod";
import { type Py, PyError } from "./values.ts";

/** A Rust `f64::from_str` literal (what pydantic-core parses a string with): sign, digits with an
 *  optional point, exponent; or inf/infinity/nan in any case. */
const FLOAT_TEXT = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i;

/** `float` in lax mode: numbers, booleans (1.0/0.0), and strings holding a float literal, either trimmed
 *  or, untrimmed, with single `_` between characters (`"1_0.5"`; not `"_1"`, `"1__0"` or `" 1_0"`).
 *  `undefined` when pydantic raises. */
export function laxFloat(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v !== "string") return undefined;
  const text = v.trim();
  const separated = /^[^_](?:[^_]|_(?!_))*[^_]$/.test(v) ? v.replaceAll("_", "") : undefined;
  const plain = FLOAT_TEXT.test(text) ? text : separated !== undefined && FLOAT_TEXT.test(separated) ? separated : undefined;
  if (plain === undefined) return undefined;
  const lower = plain.toLowerCase().replace(/^\+/, "");
  if (lower === "nan" || lower === "-nan") return NaN;
  if (/^-?inf(inity)?$/.test(lower)) return lower.startsWith("-") ? -Infinity : Infinity;
  return Number(plain);
}

const required = (v: unknown) => v === undefined;

/** `float` field, offered to the model as `{"type": "number"}`. */
export const floatField = () =>
  z
    .any()
    .transform((v, ctx) => {
      const f = laxFloat(v);
      if (f === undefined) ctx.addIssue({ code: "custom", message: required(v) ? "Field required" : typeof v === "string" ? "Input should be a valid number, unable to parse string as a number" : "Input should be a valid number" });
      return f as number;
    })
    .meta({ type: "number" });

/** `str` field: only strings (pydantic never turns a number into a string). */
export const strField = () => z.string({ error: (i) => (i.input === undefined ? "Field required" : "Input should be a valid string") });

/** `Optional[str]`: a string or null; required unless it has a default (`.optional()`). */
export const optionalStrField = () => z.string({ error: (i) => (i.input === undefined ? "Field required" : "Input should be a valid string") }).nullable();

/** `list[X]`. */
export const listField = <T extends z.ZodType>(item: T) => z.array(item, { error: (i) => (i.input === undefined ? "Field required" : "Input should be a valid list") });

/** A model with the default config (`extra="ignore"`): unknown keys are accepted and left out of the dump. */
export const ignoreModel = <S extends z.ZodRawShape>(shape: S) => z.object(shape, { error: (i) => (i.input === undefined ? "Field required" : "Input should be a valid dictionary or instance of the model") });

/** A model with `extra="forbid"`. */
export const forbidModel = <S extends z.ZodRawShape>(shape: S) => z.strictObject(shape, { error: (i) => (i.input === undefined ? "Field required" : i.code === "unrecognized_keys" ? "Extra inputs are not permitted" : "Input should be a valid dictionary or instance of the model") });

/** `list[str | int | float | None]` items (finish's `value`): the JSON types it accepts. */
export const scalarListField = () =>
  listField(
    z.custom((v) => v === null || ["string", "number", "boolean"].includes(typeof v), { error: "Input should be a valid string, integer, number or None" }),
  ).meta({ type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }, { type: "number" }, { type: "null" }] } });

/** What the smart union `str | int | float | None` makes of each item, on Python values: no type matches
 *  a bool exactly, and among the lax matches `int` comes first, so `True` becomes `1`. */
export function scalarUnionItems(items: Py): Py[] {
  if (!Array.isArray(items)) throw new PyError("ValidationError", "value: Input should be a valid list");
  return items.map((v) => {
    if (typeof v === "boolean") return v ? 1n : 0n;
    if (v === null || typeof v === "string" || typeof v === "bigint" || typeof v === "number") return v;
    throw new PyError("ValidationError", "value: Input should be a valid string, integer, number or None");
  });
}
