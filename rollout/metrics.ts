// Success rates over episode rows: overall, per suite, per suite/type, query vs action; each with
// its Wilson 95% interval, pass@1 and pass@k (several samples per task), status breakdown and
// rounds used; tokens and per-turn latency when the rows carry them. JSON-plain: this is also
// `eval --report` and the report's summary.json.
import type { Usage } from "../env/core/index.ts";
import type { Check } from "../env/graders/index.ts";
import { groupBy } from "../env/util/index.ts";
import { meanPassAtK, quantiles, wilson, type Interval } from "./stats.ts";
import { byRule, type CheckpointRowLike, medianToolCalls } from "./checkpoints.ts";

export type TaskKind = "query" | "action";

const V1_QUERIES = new Set(["task1", "task2", "task4", "task6", "task7"]);
const V2_QUERIES = new Set(["task3"]);

export function taskKind(suite: string, type: string): TaskKind {
  return (suite === "mab-v1" ? V1_QUERIES : V2_QUERIES).has(type) ? "query" : "action";
}

export const STATUSES = ["completed", "invalid_action", "limit_reached", "context_limit", "model_error", "error"] as const;
export type Status = (typeof STATUSES)[number];
/** How a person reads each status. */
export const STATUS_LABELS: Record<Status, string> = {
  completed: "completed",
  invalid_action: "invalid action",
  limit_reached: "round limit",
  context_limit: "context limit",
  model_error: "model error",
  error: "error",
};

export interface RowLike extends CheckpointRowLike {
  task_id: string;
  suite: string;
  type: string;
  sample?: number;
  protocol?: string;
  policy?: string | { model: string };
  reward: number;
  status: string;
  rounds?: number;
  checks?: Check[];
  error?: string;
  usage?: Usage;
  turns?: { latency_ms: number }[];
}

const round = (x: number, digits = 6) => Number(x.toFixed(digits));

function rate(rows: RowLike[]) {
  const success = rows.filter((r) => r.reward === 1).length;
  const tasks = [...groupBy(rows, (r) => `${r.suite}\u0000${r.task_id}`).values()].map((list) => ({ n: list.length, c: list.filter((r) => r.reward === 1).length, mean: list.reduce((s, r) => s + r.reward, 0) / list.length }));
  const fewest = tasks.reduce((m, t) => Math.min(m, t.n), tasks.length === 0 ? 0 : Infinity);
  const most = tasks.reduce((m, t) => Math.max(m, t.n), 0);
  const ci = wilson(success, rows.length);
  return {
    /** Episodes, and those with reward 1. */
    n: rows.length,
    success,
    rate: rows.length === 0 ? 0 : success / rows.length,
    /** Wilson 95% interval of the rate over episodes. */
    ci: { low: round(ci.low), high: round(ci.high) } as Interval,
    /** Distinct tasks (suite, task_id). */
    tasks: tasks.length,
    /** Mean reward over a task's samples, averaged over tasks (= rate with one binary sample per task). */
    pass1: tasks.length === 0 ? 0 : round(tasks.reduce((s, t) => s + t.mean, 0) / tasks.length),
    /** Unbiased pass@k for k = 1 .. the fewest samples any task has; only when some task has several. */
    ...(most > 1 ? { passAtK: Array.from({ length: fewest }, (_, i) => ({ k: i + 1, value: round(meanPassAtK(tasks, i + 1)) })) } : {}),
    /** Episodes per final status (every status present, 0 when none). */
    status: Object.fromEntries(STATUSES.map((s) => [s, rows.filter((r) => r.status === s).length])) as Record<Status, number>,
    meanRounds: rows.length === 0 ? 0 : round(rows.reduce((s, r) => s + (r.rounds ?? 0), 0) / rows.length, 3),
  };
}
export type Rate = ReturnType<typeof rate>;

const typeOrder = (type: string) => (type.startsWith("v2_") ? 100 : 0) + Number(/\d+$/.exec(type)?.[0] ?? 0);
/** Suite, then natural type order (task2 before task10, v1-style types before v2_ ones). */
export const compareTypes = (a: { suite: string; type: string }, b: { suite: string; type: string }) => a.suite.localeCompare(b.suite) || typeOrder(a.type) - typeOrder(b.type);

/** Rows per key, in first-seen order; rows without a key are not counted. */
function countBy(rows: RowLike[], key: (r: RowLike) => string | undefined): Record<string, number> {
  const groups = groupBy(rows, key);
  groups.delete(undefined);
  return Object.fromEntries([...groups].map(([k, list]) => [k, list.length]));
}

/** The sum of the usages given, or undefined for none. */
export function totalUsage(list: readonly Usage[]): Usage | undefined {
  if (list.length === 0) return undefined;
  const sum = (f: keyof Usage) => list.reduce((s, u) => s + u[f], 0);
  return { prompt_tokens: sum("prompt_tokens"), completion_tokens: sum("completion_tokens"), total_tokens: sum("total_tokens") };
}

/** Tokens over the episodes that carried usage. */
function usageOf(rows: RowLike[]) {
  const withUsage = rows.flatMap((r) => (r.usage ? [r.usage] : []));
  const t = totalUsage(withUsage);
  if (!t) return undefined;
  const per = (x: number) => round(x / withUsage.length, 1);
  return { episodes: withUsage.length, ...t, perEpisode: { prompt_tokens: per(t.prompt_tokens), completion_tokens: per(t.completion_tokens), total_tokens: per(t.total_tokens) } };
}

/** Per-turn latency over the model calls that carried one. */
function latencyOf(rows: RowLike[]) {
  const latencies = rows.flatMap((r) => (r.turns ?? []).map((t) => t.latency_ms));
  const [p50, p95] = quantiles(latencies, [0.5, 0.95]) ?? [];
  if (p50 === undefined || p95 === undefined) return undefined;
  return { turns: latencies.length, p50_ms: round(p50, 1), p95_ms: round(p95, 1) };
}

export function summarize(rows: RowLike[]) {
  const byType = [...groupBy(rows, (r) => `${r.suite}\u0000${r.type}`).values()]
    .map((list) => {
      const { suite, type } = list[0]!;
      return { suite, type, kind: taskKind(suite, type), rate: rate(list) };
    })
    .sort(compareTypes);
  const suites = [...new Set(rows.map((r) => r.suite))].sort();
  const perTask = countBy(rows, (r) => `${r.suite}\u0000${r.task_id}`);
  const usage = usageOf(rows);
  const latency = latencyOf(rows);
  const rules = byRule(rows);
  const medianCalls = medianToolCalls(rows);
  return {
    overall: rate(rows),
    byKind: {
      query: rate(rows.filter((r) => taskKind(r.suite, r.type) === "query")),
      action: rate(rows.filter((r) => taskKind(r.suite, r.type) === "action")),
    },
    bySuite: suites.map((suite) => ({ suite, rate: rate(rows.filter((r) => r.suite === suite)) })),
    /** In suite then natural type order. */
    byType,
    /** Most samples any task has. */
    samples: Object.values(perTask).reduce((m, n) => Math.max(m, n), 0),
    /** Episodes per protocol: more than one key means the run mixes protocols. */
    protocols: countBy(rows, (r) => r.protocol),
    /** Episodes per policy model. */
    models: countBy(rows, (r) => (r.policy === undefined ? undefined : typeof r.policy === "string" ? r.policy : r.policy.model)),
    ...(usage ? { usage } : {}),
    ...(latency ? { latency } : {}),
    /** Tool calls per episode, median (text: one per turn). */
    ...(medianCalls !== undefined ? { medianToolCalls: medianCalls } : {}),
    /** workflows rows: each rule's checkpoint success and the mean partial credit of the episodes asking for it. */
    ...(rules ? { byRule: rules } : {}),
    failures: rows
      .filter((r) => r.reward !== 1)
      .map((r) => ({
        task_id: r.task_id,
        suite: r.suite,
        type: r.type,
        ...(r.sample ? { sample: r.sample } : {}),
        status: r.status,
        failed: (r.checks ?? []).filter((c) => !c.ok),
        ...(r.error ? { error: r.error } : {}),
      })),
  };
}
export type EvalSummary = ReturnType<typeof summarize>;
