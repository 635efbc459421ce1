// An episode row (ROLLOUT.md) as a dataset row (format trl), and a dataset row as a line of
// format openai. Ids are content-free: hash of (suite, task_id, sample, source run).
import { createHash } from "node:crypto";
import type { EpisodeRow } from "../rollout/index.ts";
import { plainText, type Text } from "./rowline.ts";
import type { TrlMessage, TrlRow } from "./schema.ts";

type EpisodeMessage = EpisodeRow["messages"][number];
/** Rows and messages whose contents may be LongText (read by parseRowLine); `string` gives the plain types. */
export type MessageOf<C extends Text> = Omit<EpisodeMessage, "content"> & { content: C | null };
export type EpisodeRowOf<C extends Text> = Omit<EpisodeRow, "messages"> & { messages: MessageOf<C>[] };
export type TrlMessageOf<C extends Text> = Omit<TrlMessage, "content"> & { content: C | null };
export type TrlRowOf<C extends Text> = Omit<TrlRow, "messages"> & { messages: TrlMessageOf<C>[] };
type RunFields = Pick<EpisodeRow, "suite" | "task_id" | "sample" | "policy" | "protocol">;

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
export function assistantHash(messages: readonly TrlMessageOf<Text>[]): string {
  const turns = messages.filter((m) => m.role === "assistant").map((m) => [m.content, (m.tool_calls ?? []).map((c) => [c.function.name, c.function.arguments])]);
  return sha(JSON.stringify(turns));
}

export function toTrlMessages<C extends Text = string>(messages: readonly MessageOf<C>[]): TrlMessageOf<C>[] {
  return messages.map((m) => ({
    role: m.role,
    content: m.content ?? null,
    tool_calls: m.tool_calls?.length ? m.tool_calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.function.name, arguments: c.function.arguments } })) : null,
    tool_call_id: m.tool_call_id ?? null,
    name: m.name ?? null,
  }));
}

export function toTrlRow<C extends Text = string>(row: EpisodeRowOf<C>): TrlRowOf<C> {
  return {
    messages: toTrlMessages(row.messages),
    tools: row.tools && row.tools.length ? JSON.stringify(row.tools) : null,
    id: rowId(row),
    task_id: row.task_id,
    suite: row.suite,
    type: row.type,
    branch: row.branch ?? null,
    kind: row.kind,
    patient: row.mrn ?? "",
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

/** The row with every LongText content made one string (to show it, not to write it). */
export function plainRow(row: TrlRowOf<Text>): TrlRow {
  return { ...row, messages: row.messages.map((m) => ({ ...m, content: m.content === null ? null : plainText(m.content) })) };
}

/** The message fields OpenAI's fine-tuning upload accepts, per role. */
export const OPENAI_MESSAGE_FIELDS: Record<TrlMessage["role"], readonly string[]> = {
  system: ["role", "content", "name"],
  user: ["role", "content", "name"],
  assistant: ["role", "content", "name", "tool_calls", "weight"],
  tool: ["role", "content", "tool_call_id"],
};
export const OPENAI_LINE_FIELDS = ["messages", "tools", "parallel_tool_calls"] as const;

/** One line of format openai: only what the upload accepts; assistant turns weighted 1 when the episode was correct. */
export function toOpenAiLine(row: TrlRow): string {
  return JSON.stringify(toOpenAiRecord(row));
}

/** The object toOpenAiLine serializes (messages first). */
export function toOpenAiRecord(row: TrlRowOf<Text>): { messages: Record<string, unknown>[]; tools?: unknown[]; parallel_tool_calls: false } {
  const weight = row.reward === 1 ? 1 : 0;
  const messages = row.messages.map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.content };
    if (m.name !== null && m.role !== "tool") out.name = m.name;
    if (m.role === "assistant") {
      if (m.tool_calls) out.tool_calls = m.tool_calls;
      out.weight = weight;
    }
    if (m.role === "tool") out.tool_call_id = m.tool_call_id;
    return out;
  });
  return { messages, ...(row.tools !== null ? { tools: JSON.parse(row.tools) as unknown[] } : {}), parallel_tool_calls: false };
}
