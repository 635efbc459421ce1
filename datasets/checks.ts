// The checks of one dataset line beyond its schema: one implementation, used by `dataset build`
// (what it keeps and how it weighs turns), `dataset validate` (every file of a built dataset) and
// `dataset check` (any SFT JSONL file, in format trl or openai).
import { z } from "zod";
import { parseTextTurn } from "../env/protocol/index.ts";
import { tryJsonLoads } from "../env/python/index.ts";
import { firstIssue } from "../env/util/index.ts";
import { TrlRow, type TrlMessage } from "./schema.ts";

/** The message fields OpenAI's fine-tuning upload accepts, per role. */
export const OPENAI_MESSAGE_FIELDS: Record<TrlMessage["role"], readonly string[]> = {
  system: ["role", "content", "name"],
  user: ["role", "content", "name"],
  assistant: ["role", "content", "name", "tool_calls", "weight"],
  tool: ["role", "content", "tool_call_id"],
};
export const OPENAI_LINE_FIELDS = ["messages", "tools", "parallel_tool_calls"] as const;

/** What a training rule keeps: only trajectories whose every assistant turn is a valid action, correct ones, or all. */
export type Keep = "clean" | "correct" | "all";

interface CheckedCall {
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}
interface CheckedMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: CheckedCall[];
  tool_call_id?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Tool-call arguments as a JSON object when they are one; else the model's text as it was. */
export function argumentsValue(text: string): Record<string, unknown> | string {
  try {
    const v: unknown = JSON.parse(text);
    if (isObject(v)) return v;
  } catch {
    // not JSON: kept as the model wrote it (only in rows kept with --keep correct|all)
  }
  return text;
}

/** Whether tool-call arguments (an object, or OpenAI's JSON string form) are a JSON object. */
const argumentsAreObject = (args: unknown): boolean => isObject(args) || (typeof args === "string" && isObject(argumentsValue(args)));

/** Why one assistant turn is not a valid action of its protocol, or undefined when it is one. */
export function turnProblem(m: CheckedMessage, protocol: "text" | "tools", toolNames: ReadonlySet<string> | undefined): string | undefined {
  if (protocol === "text") {
    if (typeof m.content !== "string") return "no text (the text protocol's turns are GET, POST or FINISH)";
    const turn = parseTextTurn(m.content);
    if (turn.kind === "INVALID") return "not a GET, POST or FINISH action";
    if (turn.kind === "POST" && turn.payload === undefined) return "POST whose payload is not JSON";
    // the v1 graders read the answer with json.loads: text after FINISH([...]) makes it fail
    if (turn.kind === "FINISH" && !tryJsonLoads(turn.result).ok) return "FINISH whose answer is not JSON (text after FINISH([...])?)";
    return undefined;
  }
  if (!m.tool_calls?.length) return "no tool call (the tool protocol's turns call tools)";
  for (const [j, c] of m.tool_calls.entries()) {
    const name = c.function?.name;
    if (typeof name !== "string" || (toolNames && !toolNames.has(name))) return `tool_calls[${j}]: ${JSON.stringify(name)} is not an offered tool`;
    if (!argumentsAreObject(c.function?.arguments)) return `tool_calls[${j}] (${name}): arguments are not a JSON object`;
  }
  return undefined;
}

/** The assistant turns of a conversation that are not valid actions, by message index. */
export function invalidTurns(row: { messages: readonly CheckedMessage[]; protocol: "text" | "tools"; tools: readonly unknown[] | null }): { index: number; why: string }[] {
  const names = row.tools ? new Set(row.tools.flatMap((t) => (isObject(t) && isObject(t.function) && typeof t.function.name === "string" ? [t.function.name] : []))) : undefined;
  const out: { index: number; why: string }[] = [];
  row.messages.forEach((m, index) => {
    if (m.role !== "assistant") return;
    const why = turnProblem(m, row.protocol, names);
    if (why) out.push({ index, why });
  });
  return out;
}

/**
 * Every tool reply answers an earlier call of the conversation, and every call gets one reply,
 * except the calls of the last assistant turn (the episode ended there: `finish`).
 */
export function toolCallProblems(messages: readonly CheckedMessage[]): string[] {
  const open = new Set<string>();
  const problems: string[] = [];
  const lastAssistant = messages.map((m) => m.role).lastIndexOf("assistant");
  const final = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role === "assistant") for (const c of m.tool_calls ?? []) (i === lastAssistant ? final : open).add(String(c.id));
    if (m.role === "tool") {
      if (typeof m.tool_call_id !== "string") problems.push(`messages[${i}]: tool reply without tool_call_id`);
      else if (!open.delete(m.tool_call_id) && !final.delete(m.tool_call_id)) problems.push(`messages[${i}]: tool reply to no open call (${m.tool_call_id})`);
    }
  });
  for (const id of open) problems.push(`tool call ${id} has no reply`);
  return problems;
}

const strictSchemas = new Map<string, z.ZodType | undefined>();
/** The argument schema of each tool offered with `strict: true`, by name (a model under strict tool
 *  calling can only produce arguments it accepts); compiled once per distinct tool JSON. */
function strictTools(tools: readonly unknown[] | null): Map<string, z.ZodType> {
  const out = new Map<string, z.ZodType>();
  for (const t of tools ?? []) {
    const f = isObject(t) && isObject(t.function) ? t.function : undefined;
    if (!f || f.strict !== true || typeof f.name !== "string" || !isObject(f.parameters)) continue;
    const key = JSON.stringify(f.parameters);
    if (!strictSchemas.has(key)) {
      let schema: z.ZodType | undefined;
      try {
        schema = z.fromJSONSchema(f.parameters as Parameters<typeof z.fromJSONSchema>[0]);
      } catch {
        schema = undefined; // a schema zod cannot read is not checked
      }
      strictSchemas.set(key, schema);
    }
    const schema = strictSchemas.get(key);
    if (schema) out.set(f.name, schema);
  }
  return out;
}

/** Tool calls whose arguments the strict schema offered for them refuses: a model under strict tool
 *  calling can never produce them, so they should not be trained on. */
export function strictSchemaProblems(row: { messages: readonly CheckedMessage[]; tools: readonly unknown[] | null }): string[] {
  const schemas = strictTools(row.tools);
  if (!schemas.size) return [];
  const problems: string[] = [];
  row.messages.forEach((m, i) => {
    if (m.role !== "assistant") return;
    (m.tool_calls ?? []).forEach((c, j) => {
      const name = c.function?.name;
      const schema = typeof name === "string" ? schemas.get(name) : undefined;
      const args = c.function?.arguments;
      const value = typeof args === "string" ? argumentsValue(args) : args;
      if (!schema || !isObject(value)) return;
      const parsed = schema.safeParse(value);
      if (!parsed.success) problems.push(`messages[${i}].tool_calls[${j}] (${name}): arguments its strict schema refuses: ${firstIssue(parsed.error, "(arguments)")}`);
    });
  });
  return problems;
}

/** Problems of one line of format trl (the dataset row). */
export function trlLineProblems(json: unknown, keep: Keep): string[] {
  const parsed = TrlRow.safeParse(json);
  if (!parsed.success) return [`field ${firstIssue(parsed.error, "(row)")}`];
  const row = parsed.data;
  const problems = toolCallProblems(row.messages);
  if (!row.messages.some((m) => m.role === "assistant")) problems.push("no assistant turn");
  if (keep === "clean") for (const t of invalidTurns(row)) problems.push(`messages[${t.index}]: invalid action in a --keep clean dataset: ${t.why}`);
  if (keep !== "all") problems.push(...strictSchemaProblems(row));
  return problems;
}

/** Problems of one line of format openai (OpenAI's fine-tuning upload). */
export function openAiLineProblems(json: unknown): string[] {
  if (!isObject(json)) return ["not a JSON object"];
  const problems: string[] = [];
  for (const k of Object.keys(json)) if (!(OPENAI_LINE_FIELDS as readonly string[]).includes(k)) problems.push(`field ${k} is not accepted by OpenAI`);
  const messages = json.messages;
  if (!Array.isArray(messages) || !messages.length) return [...problems, "no messages list"];
  const tools = json.tools;
  if (tools !== undefined && (!Array.isArray(tools) || !tools.length)) problems.push("tools: not a non-empty list");
  const several = messages.some((m) => isObject(m) && Array.isArray(m.tool_calls) && m.tool_calls.length > 1);
  if (json.parallel_tool_calls !== undefined) {
    if (tools === undefined) problems.push("parallel_tool_calls without tools");
    else if (json.parallel_tool_calls !== several) problems.push(`parallel_tool_calls is ${String(json.parallel_tool_calls)} but ${several ? "a turn calls several tools" : "no turn calls several tools"}`);
  } else if (several) problems.push("a turn calls several tools, but parallel_tool_calls is not true");
  let trainable = 0;
  const ok: CheckedMessage[] = [];
  messages.forEach((m, i) => {
    if (!isObject(m) || typeof m.role !== "string" || !(m.role in OPENAI_MESSAGE_FIELDS)) return problems.push(`messages[${i}]: no valid role`);
    const allowed = OPENAI_MESSAGE_FIELDS[m.role as keyof typeof OPENAI_MESSAGE_FIELDS];
    for (const k of Object.keys(m)) if (!allowed.includes(k)) problems.push(`messages[${i}].${k} is not accepted by OpenAI`);
    const calls = m.tool_calls;
    if (typeof m.content !== "string" && !(m.role === "assistant" && Array.isArray(calls) && calls.length)) problems.push(`messages[${i}] (${m.role}): neither content nor tool_calls`);
    if (m.role === "assistant") {
      if (m.weight !== 0 && m.weight !== 1) problems.push(`messages[${i}]: weight must be 0 or 1`);
      if (Array.isArray(calls))
        calls.forEach((c, j) => {
          if (!isObject(c) || !isObject(c.function) || typeof c.function.arguments !== "string") problems.push(`messages[${i}].tool_calls[${j}]: arguments must be a JSON string`);
        });
      if (m.weight === 1) {
        trainable++;
        const why = turnProblem(m as CheckedMessage, tools === undefined ? "text" : "tools", undefined);
        if (why) problems.push(`messages[${i}]: a trained turn (weight 1) that is not a valid action: ${why}`);
      }
    }
    ok.push(m as CheckedMessage);
  });
  problems.push(...toolCallProblems(ok));
  if (Array.isArray(tools)) problems.push(...strictSchemaProblems({ messages: ok.map((m) => ((m as { weight?: unknown }).weight === 0 ? { role: "assistant" } : m)), tools }));
  if (!trainable) problems.push("no assistant turn with weight 1: nothing to train on");
  return problems;
}
