// The dataset row (DATASETS.md "Row (format trl)", as issue 26 settles the representation): one zod
// schema. The JSONL validator is this schema; the Arrow schema, the `huggingface` schema metadata and
// the card's `dataset_info.features` are all derived from it (features.ts) through its JSON Schema.
//
// Messages and the tool list are JSON values (the `datasets` Json feature): each message keeps only
// the keys it has (no `tool_calls: null`, which Llama 3.x templates reject) and tool-call `arguments`
// are JSON objects, so chat templates that render them with `tojson` (Qwen2.5, Llama 3.x, TRL's)
// print an object, not a quoted string. Format openai (convert.ts) keeps OpenAI's string form.
import { z } from "zod";

/** Marks a schema whose value is stored as JSON text in Arrow (datasets' `Json` feature). */
const JSON_VALUE = "ehrgymJson";
export const jsonValue = <T extends z.ZodType>(schema: T): T => schema.meta({ [JSON_VALUE]: true }) as T;

export const TrlToolCall = z.strictObject({
  id: z.string().min(1),
  type: z.literal("function"),
  /** A JSON object; the model's text only when it was not one (an invalid turn, kept only by --keep correct|all). */
  function: z.strictObject({ name: z.string().min(1), arguments: z.union([z.record(z.string(), z.unknown()), z.string()]) }),
});
export type TrlToolCall = z.infer<typeof TrlToolCall>;

export const TrlMessage = z.strictObject({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string().nullable(),
  tool_calls: z.array(TrlToolCall).min(1).optional(),
  tool_call_id: z.string().min(1).optional(),
  name: z.string().min(1).optional(),
  /** Assistant turns, `--reasoning keep` only: the turn's reasoning, where reasoning chat templates (Qwen3's) read it. */
  reasoning_content: z.string().optional(),
});
export type TrlMessage = z.infer<typeof TrlMessage>;

/** One tool of the offered list, as OpenAI's `tools` entries are written. */
export const TrlTool = z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string().min(1) }) });

export const TrlRow = z.strictObject({
  messages: z.array(jsonValue(TrlMessage)).min(2),
  /** The tool list offered (tool protocol); null in the text protocol. */
  tools: jsonValue(z.array(TrlTool)).nullable(),
  id: z.string().regex(/^[0-9a-f]{24}$/, "24 hex digits"),
  task_id: z.string().min(1),
  suite: z.string().min(1),
  type: z.string().min(1),
  branch: z.string().nullable(),
  kind: z.enum(["query", "action"]),
  /** The MRN; empty when the episode had no patient ("Patient not found" lookups). */
  patient: z.string(),
  /** Where the patients came from: "synthetic (seed N)", "population FILE", or "not recorded" (older rows). */
  patient_source: z.string().min(1),
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
  | { kind: "string" | "int64" | "float64" | "bool" | "json"; nullable: boolean }
  | { kind: "list"; nullable: boolean; item: Column };

type JsonSchema = { type?: string | string[]; anyOf?: JsonSchema[]; items?: JsonSchema; [JSON_VALUE]?: boolean };

function columnOf(s: JsonSchema, where: string): Column {
  if (s[JSON_VALUE]) return { kind: "json", nullable: false };
  // A union is written as anyOf (objects, arrays) or as a list of types (primitives).
  const union = s.anyOf ?? (Array.isArray(s.type) ? s.type.map((type) => ({ ...s, type })) : undefined);
  if (union) {
    const rest = union.filter((x) => x.type !== "null");
    if (rest.length !== 1 || rest.length === union.length) throw new Error(`${where}: only T | null unions map to a column`);
    return { ...columnOf(rest[0]!, where), nullable: true };
  }
  switch (s.type) {
    case "string":
      return { kind: "string", nullable: false };
    case "integer":
      return { kind: "int64", nullable: false };
    case "number":
      return { kind: "float64", nullable: false };
    case "boolean":
      return { kind: "bool", nullable: false };
    case "array":
      return { kind: "list", nullable: false, item: columnOf(s.items ?? {}, `${where}[]`) };
    default:
      throw new Error(`${where}: no column type for JSON Schema type ${JSON.stringify(s.type)}`);
  }
}

/** A row's top-level columns, in the schema's key order (the SFT row unless another config's schema is given). */
export function rowColumns(schema: z.ZodObject = TrlRow): [string, Column][] {
  const root = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as { properties: Record<string, JsonSchema> };
  return Object.entries(root.properties).map(([k, v]) => [k, columnOf(v, `row.${k}`)]);
}
