// The episode row (ROLLOUT.md "Rows"): one JSONL line per episode, written by `ehrgym eval` and
// `ehrgym rollout`, read by resume, metrics, reports and dataset build. One zod schema.
import { z } from "zod";
import { Message } from "../env/core/index.ts";

export const CheckSchema = z.object({ name: z.string(), ok: z.boolean(), detail: z.string() });

/** How an episode ended. The environment's statuses plus `model_error` (the model endpoint failed for good). */
export const RowStatus = z.enum(["completed", "invalid_action", "limit_reached", "context_limit", "model_error", "error"]);
export type RowStatus = z.infer<typeof RowStatus>;

export const Usage = z.object({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
});
export type Usage = z.infer<typeof Usage>;

export const ZERO_USAGE: Usage = Object.freeze({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

/** One model call of an episode. */
export const Turn = z.object({
  latency_ms: z.number().min(0),
  finish_reason: z.string().nullable(),
  usage: Usage.optional(),
  request_id: z.string().optional(),
  /** Attempts the request took (1 = no retry). */
  attempts: z.number().int().min(1).optional(),
});
export type Turn = z.infer<typeof Turn>;

/** Sampling parameters as sent (only those given). */
export const Sampling = z.looseObject({
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  max_tokens: z.number().int().optional(),
  seed: z.number().int().optional(),
  stop: z.union([z.string(), z.array(z.string())]).optional(),
});
export type Sampling = z.infer<typeof Sampling>;

export const PolicyInfo = z.object({
  kind: z.enum(["expert", "openai", "scripted"]),
  model: z.string(),
  /** The endpoint's host[:port] only (never a path with a key in it). */
  base_url_host: z.string().optional(),
  sampling: Sampling.optional(),
});
export type PolicyInfo = z.infer<typeof PolicyInfo>;

// Rows written before the policy became an object carried its name only.
const PolicyField = z.preprocess((v) => (typeof v === "string" ? { kind: v === "expert" ? "expert" : "scripted", model: v } : v), PolicyInfo);

export const EpisodeRow = z.object({
  task_id: z.string().min(1),
  suite: z.string().min(1),
  type: z.string().min(1),
  branch: z.string().optional(),
  kind: z.enum(["query", "action"]),
  mrn: z.string().optional(),
  /** 0-based index among the task's samples. */
  sample: z.number().int().min(0).default(0),
  protocol: z.enum(["text", "tools"]),
  reward: z.number().min(0).max(1),
  status: RowStatus,
  rounds: z.number().int().min(0),
  partial_credit: z.number().optional(),
  result: z.string().optional(),
  checks: z.array(CheckSchema),
  messages: z.array(Message),
  /** The tools offered (tool protocol only). */
  tools: z.array(z.unknown()).optional(),
  policy: PolicyField,
  usage: Usage.optional(),
  turns: z.array(Turn).optional(),
  started_at: z.string().optional(),
  wall_ms: z.number().min(0).optional(),
  ehrgym_version: z.string().optional(),
  /** Where the EHR's patients came from: "synthetic (seed N, P patients)", "population FILE" or "data DIR". */
  patients: z.string().optional(),
  error: z.string().optional(),
});
export type EpisodeRow = z.infer<typeof EpisodeRow>;
export type EpisodeRowInput = z.input<typeof EpisodeRow>;

/** Rows are keyed by (suite, task_id, sample). */
export const rowKey = (suite: string, taskId: string, sample = 0) => `${suite}\u0000${taskId}\u0000${sample}`;
export const keyOf = (row: { suite: string; task_id: string; sample?: number }) => rowKey(row.suite, row.task_id, row.sample ?? 0);
