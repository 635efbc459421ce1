// An episode row (ROLLOUT.md) as a dataset row (format trl), and a dataset row as a line of format
// openai. Ids are content-free: hash of (suite, task_id, sample, source run).
import { createHash } from "node:crypto";
import type { EpisodeRow } from "../rollout/index.ts";
import { argumentsValue, invalidTurns } from "./checks.ts";
import type { TrlMessage, TrlRow, TrlToolCall } from "./schema.ts";

type RunFields = Pick<EpisodeRow, "suite" | "task_id" | "sample" | "policy" | "protocol">;
type EpisodeMessage = EpisodeRow["messages"][number];

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

/** Keys sorted at every depth, so equal objects always give the same text. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(",")}}`;
}

/**
 * The run a row came from, as the row itself states it: policy kind and model, protocol and
 * sampling. Never the file it was read from, so the same rows give the same ids however they were
 * sharded or named; the endpoint host is left out (one teacher behind several hosts is one source).
 */
export function sourceRun(row: RunFields): string {
  return canonicalJson([row.policy.kind, row.policy.model, row.protocol, row.policy.sampling ?? {}]);
}

export function rowId(row: RunFields): string {
  return sha(JSON.stringify([row.suite, row.task_id, row.sample, sourceRun(row)])).slice(0, 24);
}

/** What --dedupe compares: the assistant turns (text and tool calls, tool-call ids left out). */
export function assistantHash(messages: readonly EpisodeMessage[]): string {
  const turns = messages.filter((m) => m.role === "assistant").map((m) => [m.content ?? null, (m.tool_calls ?? []).map((c) => [c.function.name, c.function.arguments])]);
  return sha(JSON.stringify(turns));
}

/** Whether assistant turns keep their reasoning (`reasoning_content`) in the dataset. */
export type ReasoningRule = "keep" | "drop";

/** Messages with only the keys they have (no nulls for absent fields) and arguments as objects. */
export function toTrlMessages(messages: readonly EpisodeMessage[], reasoning: ReasoningRule = "drop"): TrlMessage[] {
  return messages.map((m) => ({
    role: m.role,
    // a tool-call turn without text says "": several chat templates in TRL (DeepSeek-V3, Phi-3, Cohere, LFM2) fail on null
    content: m.content ?? (m.tool_calls?.length ? "" : null),
    ...(m.tool_calls?.length
      ? { tool_calls: m.tool_calls.map((c): TrlToolCall => ({ id: c.id, type: "function", function: { name: c.function.name, arguments: argumentsValue(c.function.arguments) } })) }
      : {}),
    ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
    ...(m.name ? { name: m.name } : {}),
    ...(reasoning === "keep" && m.role === "assistant" && typeof m.reasoning_content === "string" ? { reasoning_content: m.reasoning_content } : {}),
  }));
}

export function toTrlRow(row: EpisodeRow, reasoning: ReasoningRule = "drop"): TrlRow {
  return {
    messages: toTrlMessages(row.messages, reasoning),
    tools: row.tools && row.tools.length ? (row.tools as TrlRow["tools"]) : null,
    id: rowId(row),
    task_id: row.task_id,
    suite: row.suite,
    type: row.type,
    branch: row.branch ?? null,
    kind: row.kind,
    patient: row.mrn ?? "",
    patient_source: row.patients ?? "not recorded",
    reward: row.reward,
    partial_credit: row.partial_credit ?? null,
    status: row.status,
    protocol: row.protocol,
    model: row.policy.model,
    rounds: row.rounds,
    sample: row.sample,
    prompt_tokens: row.usage?.prompt_tokens ?? 0,
    completion_tokens: row.usage?.completion_tokens ?? 0,
  };
}

/**
 * A row in format openai, or undefined when it has no turn to train on. Assistant turns weigh 1
 * when the episode was correct and the turn is a valid action, else 0; `arguments` are JSON
 * strings; `tools` and `parallel_tool_calls` only in the tool protocol, the latter true when a turn
 * calls several tools. A conversation ends on the assistant's last turn: the environment's replies
 * to its final calls (`finish`) are left out, as OpenAI's function-calling fine-tuning examples end
 * on the assistant message that makes the calls.
 */
export function toOpenAiRecord(row: TrlRow) {
  const invalid = new Set(invalidTurns(row).map((t) => t.index));
  let trainable = 0;
  const last = row.messages.map((m) => m.role).lastIndexOf("assistant");
  const messages = row.messages.slice(0, last + 1).map((m, i) => {
    const out: Record<string, unknown> = { role: m.role, content: m.tool_calls && m.content === "" ? null : m.content };
    if (m.name !== undefined && m.role !== "tool") out.name = m.name;
    if (m.role === "assistant") {
      if (m.tool_calls)
        out.tool_calls = m.tool_calls.map((c) => ({
          id: c.id,
          type: c.type,
          function: { name: c.function.name, arguments: typeof c.function.arguments === "string" ? c.function.arguments : JSON.stringify(c.function.arguments) },
        }));
      out.weight = row.reward === 1 && !invalid.has(i) ? 1 : 0;
      trainable += out.weight as number;
    }
    if (m.role === "tool") out.tool_call_id = m.tool_call_id;
    return out;
  });
  if (!trainable) return undefined;
  if (row.tools === null) return { messages };
  return { messages, tools: row.tools, parallel_tool_calls: row.messages.some((m) => (m.tool_calls?.length ?? 0) > 1) };
}
