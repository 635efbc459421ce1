// The Policy: anything that plays an episode turn by turn (the scripted expert, a model client, a
// replayed transcript), what a model call costs, and how a policy's failure ends an episode.
import { z } from "zod";
import type { Protocol } from "../protocol/index.ts";
import type { Task } from "../tasks/index.ts";
import { reasoningField } from "./reasoning.ts";
import { TurnTokens } from "./tokens.ts";
import type { AgentTurn, Message } from "./types.ts";

/** Sampling parameters sent with each chat.completions request (only those given). */
export const Sampling = z
  .looseObject({
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    max_tokens: z.number().int().min(1).optional(),
    max_completion_tokens: z.number().int().min(1).optional(),
    seed: z.number().int().optional(),
    stop: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .describe("Extra chat.completions parameters passed through to the model.");
export type Sampling = z.infer<typeof Sampling>;

export const Usage = z.object({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
});
export type Usage = z.infer<typeof Usage>;

/** One model call of an episode. */
export const ModelCall = z.object({
  latency_ms: z.number().min(0),
  finish_reason: z.string().nullable(),
  usage: Usage.optional(),
  request_id: z.string().optional(),
  /** Attempts the request took (1 = no retry). */
  attempts: z.number().int().min(1).optional(),
  /** `--capture tokens`: the call's token ids and logprobs. */
  tokens: TurnTokens.optional(),
});
export type ModelCall = z.infer<typeof ModelCall>;

/** Who played an episode (a row's `policy`). */
export const PolicyInfo = z.object({
  kind: z.enum(["expert", "openai", "scripted"]),
  model: z.string(),
  /** The endpoint's host[:port] only (never a path with a key in it). */
  base_url_host: z.string().optional(),
  sampling: Sampling.optional(),
});
export type PolicyInfo = z.infer<typeof PolicyInfo>;

export interface PolicyInput {
  task: Task;
  protocol: Protocol;
  /** Every message of the episode so far (prompt, agent turns, environment replies). */
  messages: Message[];
  /** Tool protocol: the OpenAI tools the environment offered at reset. */
  tools?: unknown[];
  /** Aborts the turn (Ctrl-C, run target reached). */
  signal?: AbortSignal;
  /** The episode's key "suite/task_id/sample" (a model request's retries repeat it with the turn). */
  episodeKey?: string;
}

/** A turn with what it cost: the model call's record, and a note on anything odd about the reply. */
export interface PolicyStep {
  turn: AgentTurn;
  call?: ModelCall;
  note?: string;
}

export interface Policy {
  readonly name: string;
  /** What rows record as `policy` (default: {kind: "scripted", model: name}). */
  readonly info?: PolicyInfo;
  /** The next turn; undefined when the policy has no more turns (the episode is left as it is). */
  act(input: PolicyInput): Promise<AgentTurn | PolicyStep | undefined>;
}

/** Ends one episode: `model_error` (the endpoint failed after retries) or `context_limit`. */
export class ModelError extends Error {
  constructor(
    readonly status: "model_error" | "context_limit",
    message: string,
    /** Set when no later request can succeed either (bad key, unknown model): the run stops. */
    readonly fatal?: string,
  ) {
    super(message);
    this.name = "ModelError";
  }
}

/** The run was interrupted (Ctrl-C, target reached): the episode is dropped, not recorded. */
export class RunAborted extends Error {
  override name = "RunAborted";
  override message = "aborted";
}

/** An endpoint's error saying the conversation no longer fits the model's context. */
export function isContextLimit(err: unknown): boolean {
  const e = err as { code?: unknown; status?: unknown; message?: unknown };
  if (e?.code === "context_length_exceeded") return true;
  return e?.status === 400 && typeof e.message === "string" && /context length|maximum context|too many tokens|context_length/i.test(e.message);
}

/** A chat completion's message as the agent turn of `protocol` (text: its content; tools: the message).
 *  Reasoning the endpoint returned in a field is kept on the turn (read later by `readAgentTurn`). */
export function assistantTurn(
  message: { content?: string | null; tool_calls?: readonly { type: string; id: string; function?: { name: string; arguments: string } }[] | null },
  protocol: Protocol,
): { turn: AgentTurn; note?: string } {
  const calls = (message.tool_calls ?? []).filter((c) => c.type === "function" && c.function);
  const content = message.content ?? null;
  const reasoning = reasoningField(message as { reasoning_content?: unknown; reasoning?: unknown });
  // Servers that parse tool-call markup whether or not tools were offered (`transformers serve`) answer a
  // text-protocol turn written as a tool call with the call and empty content: said so, not "empty".
  const unread = protocol === "text" && !content && calls.length ? `the model answered with tool calls (${[...new Set(calls.map((c) => c.function!.name))].join(", ")}), which the text protocol does not read` : undefined;
  const note = unread ?? (!content && calls.length === 0 ? (reasoning ? "the model returned reasoning but empty content" : "the model returned empty content") : undefined);
  if (protocol === "text") {
    const turn: AgentTurn = reasoning ? { role: "assistant", content: content ?? "", reasoning_content: reasoning } : (content ?? "");
    return { turn, ...(note ? { note } : {}) };
  }
  const turn: Message = { role: "assistant", content: content ?? (calls.length ? null : "") };
  if (reasoning) turn.reasoning_content = reasoning;
  if (calls.length) turn.tool_calls = calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.function!.name, arguments: c.function!.arguments } }));
  return { turn, ...(note ? { note } : {}) };
}

/** The agent turns of a transcript, as they were played (text, or assistant messages with tool calls;
 *  a text turn that carried reasoning in a field stays a message so its reasoning is kept). */
export function agentTurns(messages: readonly Message[], protocol: Protocol): AgentTurn[] {
  return messages.filter((m) => m.role === "assistant").map((m) => (protocol === "text" && m.reasoning_content == null && m.reasoning == null ? (m.content ?? "") : m));
}

/** Plays `turns` in order, whatever the replies; stops when they run out. */
export function replayPolicy(turns: readonly AgentTurn[], name = "replay"): Policy & { readonly played: number } {
  let played = 0;
  return {
    name,
    get played() {
      return played;
    },
    act: async () => (played < turns.length ? turns[played++] : undefined),
  };
}
