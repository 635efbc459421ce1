// The dataset row (DATASETS.md "Row (format trl)"): one zod schema. The JSONL validator is this
// schema; the Arrow schema, the `huggingface` schema metadata and the card's
// `dataset_info.features` are all derived from it (features.ts) through its JSON Schema.
import { z } from "zod";

export const TrlToolCall = z.strictObject({
  id: z.string().min(1),
  type: z.literal("function"),
  /** `arguments` is a JSON string, as OpenAI returns it. */
  function: z.strictObject({ name: z.string().min(1), arguments: z.string() }),
});
export type TrlToolCall = z.infer<typeof TrlToolCall>;

// Every key is present (null when absent) so JSONL rows read back exactly as `datasets` gives them
// from either file (a unified schema fills missing keys with null).
export const TrlMessage = z.strictObject({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string().nullable(),
  tool_calls: z.array(TrlToolCall).nullable(),
  tool_call_id: z.string().nullable(),
  name: z.string().nullable(),
});
export type TrlMessage = z.infer<typeof TrlMessage>;

export const TrlRow = z.strictObject({
  messages: z.array(TrlMessage).min(2),
  /** The tool list offered (tool protocol) as a JSON string, so all rows share one Arrow schema. */
  tools: z.string().nullable(),
  id: z.string().regex(/^[0-9a-f]{24}$/, "24 hex digits"),
  task_id: z.string().min(1),
  suite: z.string().min(1),
  type: z.string().min(1),
  branch: z.string().nullable(),
  kind: z.enum(["query", "action"]),
  /** The MRN; empty when the episode had no patient ("Patient not found" lookups). */
  patient: z.string(),
  reward: z.number().min(0).max(1),
  partial_credit: z.number().nullable(),
  status: z.string().min(1),
  protocol: z.enum(["text", "tools"]),
  model: z.string().min(1),
  rounds: z.int().min(0),
  sample: z.int().min(0),
  prompt_tokens: z.int().min(0),
  completion_tokens: z.int().min(0),
});
export type TrlRow = z.infer<typeof TrlRow>;

/** The column tree the Arrow schema and both feature descriptions are made from. */
export type Column =
  | { kind: "string" | "int64" | "float64"; nullable: boolean }
  | { kind: "list"; nullable: boolean; item: Column }
  | { kind: "struct"; nullable: boolean; fields: [string, Column][] };

type JsonSchema = { type?: string | string[]; anyOf?: JsonSchema[]; properties?: Record<string, JsonSchema>; items?: JsonSchema; enum?: unknown[]; const?: unknown };

function columnOf(s: JsonSchema, where: string): Column {
  if (s.anyOf) {
    const rest = s.anyOf.filter((x) => x.type !== "null");
    if (rest.length !== 1 || rest.length === s.anyOf.length) throw new Error(`${where}: only T | null unions map to a column`);
    return { ...columnOf(rest[0]!, where), nullable: true };
  }
  if (Array.isArray(s.type)) {
    const rest = s.type.filter((t) => t !== "null");
    if (rest.length !== 1 || rest.length === s.type.length) throw new Error(`${where}: only T | null unions map to a column`);
    return { ...columnOf({ ...s, type: rest[0] }, where), nullable: true };
  }
  switch (s.type) {
    case "string":
      return { kind: "string", nullable: false };
    case "integer":
      return { kind: "int64", nullable: false };
    case "number":
      return { kind: "float64", nullable: false };
    case "array":
      return { kind: "list", nullable: false, item: columnOf(s.items ?? {}, `${where}[]`) };
    case "object":
      return { kind: "struct", nullable: false, fields: Object.entries(s.properties ?? {}).map(([k, v]) => [k, columnOf(v, `${where}.${k}`)]) };
    default:
      throw new Error(`${where}: no column type for JSON Schema type ${JSON.stringify(s.type)}`);
  }
}

/** The row's top-level columns, in the schema's key order. */
export function rowColumns(schema: z.ZodType = TrlRow): [string, Column][] {
  const root = columnOf(z.toJSONSchema(schema, { target: "draft-2020-12" }) as JsonSchema, "row");
  if (root.kind !== "struct") throw new Error("the row schema must be an object");
  return root.fields;
}
