// Success rates over episode rows: overall, per suite/type, query vs action.
import type { Check } from "../env/graders/index.ts";

export type TaskKind = "query" | "action";

const V1_QUERIES = new Set(["task1", "task2", "task4", "task6", "task7"]);
const V2_QUERIES = new Set(["task3"]);

export function taskKind(suite: string, type: string): TaskKind {
  return (suite === "mab-v1" ? V1_QUERIES : V2_QUERIES).has(type) ? "query" : "action";
}

export interface Rate {
  n: number;
  success: number;
  rate: number;
}

export interface Failure {
  task_id: string;
  suite: string;
  type: string;
  status: string;
  failed: Check[];
  error?: string;
}

export interface EvalSummary {
  overall: Rate;
  byKind: Record<TaskKind, Rate>;
  /** Keyed "suite/type", in suite then natural type order. */
  byType: { suite: string; type: string; kind: TaskKind; rate: Rate }[];
  failures: Failure[];
}

export interface RowLike {
  task_id: string;
  suite: string;
  type: string;
  reward: number;
  status: string;
  checks?: Check[];
  error?: string;
}

function rate(rows: RowLike[]): Rate {
  const success = rows.filter((r) => r.reward === 1).length;
  return { n: rows.length, success, rate: rows.length === 0 ? 0 : success / rows.length };
}

const typeOrder = (type: string) => (type.startsWith("v2_") ? 100 : 0) + Number(/\d+$/.exec(type)?.[0] ?? 0);

export function summarize(rows: RowLike[]): EvalSummary {
  const groups = new Map<string, RowLike[]>();
  for (const row of rows) {
    const key = `${row.suite}\u0000${row.type}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const byType = [...groups.entries()]
    .map(([key, list]) => {
      const [suite, type] = key.split("\u0000") as [string, string];
      return { suite, type, kind: taskKind(suite, type), rate: rate(list) };
    })
    .sort((a, b) => a.suite.localeCompare(b.suite) || typeOrder(a.type) - typeOrder(b.type));
  return {
    overall: rate(rows),
    byKind: {
      query: rate(rows.filter((r) => taskKind(r.suite, r.type) === "query")),
      action: rate(rows.filter((r) => taskKind(r.suite, r.type) === "action")),
    },
    byType,
    failures: rows
      .filter((r) => r.reward !== 1)
      .map((r) => ({
        task_id: r.task_id,
        suite: r.suite,
        type: r.type,
        status: r.status,
        failed: (r.checks ?? []).filter((c) => !c.ok),
        ...(r.error ? { error: r.error } : {}),
      })),
  };
}
