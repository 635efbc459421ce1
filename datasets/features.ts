// What the row schema becomes in each format that describes columns: the Arrow schema (with the
// `datasets` features under the `huggingface` metadata key) and the card's dataset_info.features.
import { Field, Float64, Int64, List, Schema, Struct, Utf8, type DataType } from "apache-arrow";
import { rowColumns, type Column } from "./schema.ts";

function arrowType(c: Column): DataType {
  switch (c.kind) {
    case "string":
      return new Utf8();
    case "int64":
      return new Int64();
    case "float64":
      return new Float64();
    case "list":
      return new List(new Field("item", arrowType(c.item), true));
    case "struct":
      return new Struct(c.fields.map(([name, f]) => new Field(name, arrowType(f), true)));
  }
}

/**
 * The `datasets` Features as `Features.to_dict()` writes them: Value for scalars, a plain object
 * for a struct, a one-element array for a list (the form every `datasets` version reads).
 */
export function hfFeature(c: Column): unknown {
  switch (c.kind) {
    case "string":
    case "int64":
    case "float64":
      return { dtype: c.kind === "string" ? "string" : c.kind, _type: "Value" };
    case "list":
      return [hfFeature(c.item)];
    case "struct":
      return Object.fromEntries(c.fields.map(([name, f]) => [name, hfFeature(f)]));
  }
}

export function hfFeatures(): Record<string, unknown> {
  return Object.fromEntries(rowColumns().map(([name, c]) => [name, hfFeature(c)]));
}

/** Card YAML form (`dataset_info.features`): [{name, dtype} | {name, list} | {name, struct}]. */
function cardFeature(name: string, c: Column): Record<string, unknown> {
  switch (c.kind) {
    case "list":
      return c.item.kind === "struct"
        ? { name, list: c.item.fields.map(([n, f]) => cardFeature(n, f)) }
        : { name, sequence: cardFeature(name, c.item).dtype ?? cardFeature(name, c.item) };
    case "struct":
      return { name, struct: c.fields.map(([n, f]) => cardFeature(n, f)) };
    default:
      return { name, dtype: c.kind === "string" ? "string" : c.kind };
  }
}

export function cardFeatures(): Record<string, unknown>[] {
  return rowColumns().map(([name, c]) => cardFeature(name, c));
}

/** Every column nullable, as pyarrow and `datasets` make them; the zod schema decides what may be null. */
export function arrowSchema(): Schema {
  const fields = rowColumns().map(([name, c]) => new Field(name, arrowType(c), true));
  return new Schema(fields, new Map([["huggingface", JSON.stringify({ info: { features: hfFeatures() } })]]));
}
