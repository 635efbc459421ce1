// The episode row (ROLLOUT.md "Rows"): one JSONL line per episode, written by `ehrgym eval` and
// `ehrgym rollout`, read by resume, metrics, reports and dataset build. One zod schema.
import { z } from "zod";
import { Message, ModelCall, PolicyInfo, Usage, type PlayedEpisode, type Policy } from "../env/core/index.ts";
import type { Task } from "../env/tasks/index.ts";
import { taskMrn } from "./expert/index.ts";
import { STATUSES, taskKind, totalUsage } from "./metrics.ts";
import { EHRGYM_VERSION } from "./version.ts";

export const CheckSchema = z.object({ name: z.string(), ok: z.boolean(), detail: z.string() });

/** How an episode ended. The environment's statuses plus `model_error` (the model endpoint failed for good). */
export const RowStatus = z.enum(STATUSES);
export type RowStatus = z.infer<typeof RowStatus>;

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
  /** workflows: each requested rule's checkpoint verdict. */
  checkpoints: z.array(z.object({ rule: z.string(), source: z.string(), ok: z.boolean() })).optional(),
  result: z.string().optional(),
  checks: z.array(CheckSchema),
  messages: z.array(Message),
  /** The tools offered (tool protocol only). */
  tools: z.array(z.unknown()).optional(),
  policy: PolicyField,
  usage: Usage.optional(),
  turns: z.array(ModelCall).optional(),
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

/** The row of a played episode; `sample` and `patients` as the row's fields of those names. */
export function episodeRow(played: PlayedEpisode, policy: Policy, options: { sample?: number; patients?: string } = {}): EpisodeRow {
  const { task, info, failure, calls } = played;
  const usage = totalUsage(calls.flatMap((c) => (c.usage ? [c.usage] : [])));
  const mrn = mrnOf(task);
  const error = failure?.message ?? (info.error ? info.error : played.notes.length ? played.notes.join("; ") : undefined);
  return {
    task_id: task.id,
    suite: task.suite,
    type: task.type,
    ...(task.branch ? { branch: task.branch } : {}),
    kind: taskKind(task.suite, task.type),
    ...(mrn ? { mrn } : {}),
    sample: options.sample ?? 0,
    protocol: played.protocol,
    reward: failure ? 0 : (info.reward ?? 0),
    status: failure?.status ?? (info.status === "running" ? "error" : info.status),
    rounds: info.rounds,
    ...(info.partialCredit !== undefined ? { partial_credit: info.partialCredit } : {}),
    ...(info.checkpoints ? { checkpoints: info.checkpoints } : {}),
    ...(info.result !== undefined ? { result: info.result } : {}),
    checks: info.checks ?? [],
    messages: played.messages,
    ...(played.tools ? { tools: played.tools } : {}),
    policy: policy.info ?? { kind: "scripted", model: policy.name },
    ...(usage ? { usage } : {}),
    ...(calls.length ? { turns: calls } : {}),
    started_at: played.startedAt.toISOString(),
    wall_ms: Math.round(played.wallMs * 100) / 100,
    ehrgym_version: EHRGYM_VERSION,
    ...(options.patients ? { patients: options.patients } : {}),
    ...(error ? { error } : {}),
  };
}

function mrnOf(task: Task): string | undefined {
  try {
    return taskMrn(task);
  } catch {
    return task.eval_MRN;
  }
}
