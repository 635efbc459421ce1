// What the row schema becomes in each format that describes columns: the Arrow schema (with the
// `datasets` features under the `huggingface` metadata key) and the card's dataset_info.features.
// A JSON value is Utf8 text tagged with Arrow's canonical `arrow.json` extension, which is how
// pyarrow stores `datasets`' Json feature.
import { Bool, Field, Float64, Int64, List, Schema, Utf8, type DataType } from "apache-arrow";
import type { z } from "zod";
import { rowColumns, TrlRow, type Column } from "./schema.ts";

const JSON_EXTENSION = new Map([
  ["ARROW:extension:name", "arrow.json"],
  ["ARROW:extension:metadata", ""],
]);

function arrowField(name: string, c: Column): Field {
  return new Field(name, arrowType(c), true, c.kind === "json" ? JSON_EXTENSION : undefined);
}

function arrowType(c: Column): DataType {
  switch (c.kind) {
    case "string":
    case "json":
      return new Utf8();
    case "int64":
      return new Int64();
    case "float64":
      return new Float64();
    case "bool":
      return new Bool();
    case "list":
      return new List(arrowField("item", c.item));
  }
}

/** The `datasets` Features as `Features.to_dict()` writes them. */
export function hfFeature(c: Column): unknown {
  switch (c.kind) {
    case "string":
    case "int64":
    case "float64":
    case "bool":
      return { dtype: c.kind, _type: "Value" };
    case "json":
      return { _type: "Json" };
    case "list":
      return { feature: hfFeature(c.item), _type: "List" };
  }
}

export function hfFeatures(schema: z.ZodObject = TrlRow): Record<string, unknown> {
  return Object.fromEntries(rowColumns(schema).map(([name, c]) => [name, hfFeature(c)]));
}

/** Card YAML form (`dataset_info.features`), as `Features._to_yaml_list()` writes it. */
function cardFeature(name: string, c: Column): Record<string, unknown> {
  return c.kind === "list" ? { name, list: c.item.kind } : { name, dtype: c.kind };
}

export function cardFeatures(schema: z.ZodObject = TrlRow): Record<string, unknown>[] {
  return rowColumns(schema).map(([name, c]) => cardFeature(name, c));
}

/** Every column nullable, as pyarrow and `datasets` make them; the zod schema decides what may be null. */
export function arrowSchema(schema: z.ZodObject = TrlRow): Schema {
  return new Schema(
    rowColumns(schema).map(([name, c]) => arrowField(name, c)),
    new Map([["huggingface", JSON.stringify({ info: { features: hfFeatures(schema) } })]]),
  );
}
