import { z } from "zod";
import type { Check, Checkpoint } from "../graders/index.ts";
import { Protocol, type Action, type EpisodeStatus } from "../protocol/index.ts";
import type { Task } from "../tasks/index.ts";

// OpenAI chat messages (the trace format of datasets and the reward server).
export const ToolCall = z.object({
  id: z.string(),
  type: z.literal("function").default("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const Message = z.object({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string().nullable(),
  tool_calls: z.array(ToolCall).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
  /** Assistant turns: the reasoning, kept apart from the action text (where reasoning chat templates such as Qwen3's read it). */
  reasoning_content: z.string().nullish(),
  /** Accepted on input (vLLM's newer spelling of the same field); read into `reasoning_content`. */
  reasoning: z.string().nullish(),
});
export type Message = z.infer<typeof Message>;

export const WritesMode = z.enum(["execute", "record"]);
export type WritesMode = z.infer<typeof WritesMode>;

/** reset()'s options (protocol default "text"; maxRounds and writes default to the EnvConfig's). */
export const ResetOptions = z.object({
  task: z.custom<Task>().optional(),
  taskId: z.string().min(1).optional(),
  protocol: Protocol.default("text"),
  maxRounds: z.number().int().min(1).max(10_000).optional(),
  writes: WritesMode.optional(),
});
export type ResetOptions = z.input<typeof ResetOptions>;

export interface EpisodeInfo {
  taskId: string;
  status: EpisodeStatus;
  rounds: number;
  invalidActions: number;
  /** Set once the episode ended. */
  reward?: 0 | 1;
  checks?: Check[];
  partialCredit?: number;
  /** workflows: each requested rule's verdict. */
  checkpoints?: Checkpoint[];
  /** The FINISH string, when the agent finished. */
  result?: string;
  /** Why the episode ended with status "error" (backend failure, grader failure). */
  error?: string;
  /** The rubric's per-function values (set once the episode ended). */
  metrics?: Record<string, number>;
  /** The rubric's weighted reward (equals `reward` with the default rubric); StepResult.reward carries it. */
  score?: number;
}

export interface ResetResult {
  /** The first messages (text: one user message; tools: system? + user). */
  observation: Message[];
  /** OpenAI `tools` JSON (tool protocol only). */
  tools?: unknown[];
  info: EpisodeInfo;
}

export interface StepResult {
  /** New chat messages since the previous call (env replies). */
  observation: Message[];
  reward: number;
  terminated: boolean;
  truncated: boolean;
  info: EpisodeInfo;
}

/** Text protocol: the assistant turn text (or the assistant message, when it carries reasoning). Tool protocol: the assistant message with tool_calls. */
export type AgentTurn = string | Message;

/** What a finished episode leaves behind (rollout/datasets consume it). */
export interface EpisodeRecord {
  task: Task;
  protocol: Protocol;
  messages: Message[];
  actions: Action[];
  info: EpisodeInfo;
}
