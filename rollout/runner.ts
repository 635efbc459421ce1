// Many episodes with bounded concurrency, resumable through the JSONL (keys (suite, task_id, sample)),
// with a target of correct episodes, an episode budget, a stop on errors no retry fixes, and Ctrl-C.
import { setMaxListeners } from "node:events";
import { ModelError, RunAborted, runEpisode, type EpisodeEnv, type Policy, type WritesMode } from "../env/core/index.ts";
import type { Protocol } from "../env/protocol/index.ts";
import type { Task } from "../env/tasks/index.ts";
import { readRowHeads, removeRows, rowHead, type RowHead } from "./jsonl.ts";
import type { ModelStats } from "./model/index.ts";
import { createProgress } from "./progress.ts";
import { episodeRow, keyOf, rowKey, type EpisodeRow } from "./row.ts";
import { JsonlAppender, StateError } from "../env/util/index.ts";

export interface RunItem {
  task: Task;
  sample: number;
}

export interface RunOptions {
  protocol: Protocol;
  maxRounds: number;
  writes?: WritesMode;
  /** Where the EHR's patients came from (each row's `patients`). */
  patients?: string;
  /** A fresh environment per worker (they share the base store). */
  makeEnv: () => EpisodeEnv;
  policy: Policy;
  /** The (task, sample) keys to run, in order; or `tasks`, one sample each. */
  items?: RunItem[];
  tasks?: Task[];
  concurrency?: number;
  /** Append each row here and skip keys already present in it. */
  out?: string;
  /** The heads of `out`'s rows (readRowHeads), when the caller has read the file already: it is then not read again. */
  existingHeads?: RowHead[];
  /** Allow rows of another model/protocol already in `out`. */
  appendDifferent?: boolean;
  /** Re-run keys whose row in `out` is a `model_error` (their old rows are removed first). */
  retryErrors?: boolean;
  /** Stop once this many rows with reward 1 are in `out` (counting those already there). */
  targetCorrect?: number;
  /** At most this many rows in `out` (counting those already there). */
  maxEpisodes?: number;
  /** Stop after this many `model_error` episodes in a row (default 20). */
  maxConsecutiveErrors?: number;
  /** Aborts in-flight requests; finished rows stay written. */
  signal?: AbortSignal;
  /** Progress on stderr: true = bar, false = nothing, default = bar on a TTY, else a line every 10 s. */
  progress?: boolean;
  onRow?: (row: EpisodeRow) => void;
}

export type StopReason = "target" | "max-episodes" | "interrupted" | "fatal" | "errors";

/** Refused before any work (mixing rows of another model or protocol into `out`). */
export class RunRefused extends StateError {}

/** Rows in `out` before the run (after --retry-errors removed its rows), how many were correct, their keys and heads. */
type Existing = { rows: number; correct: number; retried: number; keys: Set<string>; heads: RowHead[] };

const describePolicy = (p: { kind?: unknown; model?: unknown } | string | undefined) =>
  typeof p === "string" ? p : `${String(p?.kind ?? "?")}:${String(p?.model ?? "?")}`;

async function scanExisting(o: RunOptions): Promise<Existing> {
  const existing: Existing = { keys: new Set(), heads: [], rows: 0, correct: 0, retried: 0 };
  if (!o.out) return existing;
  // A copy: the run adds its own rows' heads to it, and the caller's list stays as it gave it.
  let heads = o.existingHeads ? [...o.existingHeads] : await readRowHeads(o.out);
  if (o.retryErrors) {
    const isError = (r: RowHead) => r.status === "model_error";
    if (heads.some(isError)) {
      existing.retried = await removeRows(o.out, isError);
      heads = heads.filter((r) => !isError(r));
    }
  }
  existing.heads = heads;
  const mine = describePolicy(o.policy.info ?? { kind: "scripted", model: o.policy.name });
  const others = new Map<string, number>();
  for (const head of heads) {
    const row = head as { suite: string; task_id: string; sample?: number; reward?: number; protocol?: string; policy?: { kind?: string; model?: string } | string };
    existing.keys.add(keyOf(row));
    existing.rows++;
    if (row.reward === 1) existing.correct++;
    const theirs = `${describePolicy(row.policy)} (protocol ${row.protocol})`;
    if (theirs !== `${mine} (protocol ${o.protocol})`) others.set(theirs, (others.get(theirs) ?? 0) + 1);
  }
  if (others.size > 0 && !o.appendDifferent) {
    const [first, n] = [...others.entries()][0]!;
    throw new RunRefused(
      `${o.out} holds ${n} row(s) of ${first}; this run is ${mine} (protocol ${o.protocol}). Use another --out, or --append-different to mix them.`,
    );
  }
  return existing;
}

/**
 * Runs the items. `rows`: this run's rows in finishing order, none when `out` is given (the file holds
 * them: a week-long run must not also keep every transcript in memory; `onRow` sees each one). `heads`:
 * with `out`, the head (rowHead) of every row in `out` after the run, in file order; without, of this
 * run's rows. `ran`: this run's episodes, those with reward 1, and their tokens. `skipped`: keys `out` had.
 */
export async function runEpisodes(o: RunOptions) {
  const items = o.items ?? (o.tasks ?? []).map((task) => ({ task, sample: 0 }));
  const existing = await scanExisting(o);
  const todo = items.filter((it) => !existing.keys.has(rowKey(it.task.suite, it.task.id, it.sample)));
  const skipped = items.length - todo.length;
  const budget = o.maxEpisodes === undefined ? todo.length : Math.max(0, Math.min(todo.length, o.maxEpisodes - existing.rows));
  const appender = o.out ? new JsonlAppender(o.out) : undefined;
  const stats = (o.policy as { stats?: ModelStats }).stats;
  const progress = createProgress(budget, existing.correct, o.progress);
  const controller = new AbortController();
  setMaxListeners(0, controller.signal); // every in-flight request listens to it
  const onOuterAbort = () => stop("interrupted", "interrupted");
  o.signal?.addEventListener("abort", onOuterAbort, { once: true });

  const rows: EpisodeRow[] = [];
  const heads = existing.heads;
  const ran = { episodes: 0, correct: 0, promptTokens: 0, completionTokens: 0 };
  let correct = existing.correct;
  let errors = 0;
  let consecutiveErrors = 0;
  let anySuccess = false;
  let next = 0;
  let stopped: { reason: StopReason; message: string } | undefined;
  /** What a worker threw (a failed write of `out`, a bug): thrown once every worker has ended. */
  let failure: { error: unknown } | undefined;
  function stop(reason: StopReason, message: string) {
    if (stopped) return;
    stopped = { reason, message };
    controller.abort(new RunAborted());
  }
  if (o.targetCorrect !== undefined && correct >= o.targetCorrect) stop("target", `target reached: ${correct} correct rows already in ${o.out}`);
  if (budget === 0 && o.maxEpisodes !== undefined && todo.length > 0) stop("max-episodes", `--max-episodes ${o.maxEpisodes} reached (${existing.rows} rows in ${o.out})`);

  const maxConsecutive = o.maxConsecutiveErrors ?? 20;
  const record = async (row: EpisodeRow) => {
    if (stopped) return;
    if (stats ? stats.succeeded > 0 : row.status !== "model_error") anySuccess = true;
    if (row.status === "model_error" && !anySuccess) {
      stop("fatal", `the model endpoint failed every request so far: ${row.error ?? "model error"}`);
      return;
    }
    if (!appender) rows.push(row);
    heads.push(rowHead(row));
    ran.episodes++;
    if (row.reward === 1) ran.correct++;
    ran.promptTokens += row.usage?.prompt_tokens ?? 0;
    ran.completionTokens += row.usage?.completion_tokens ?? 0;
    if (row.reward === 1) correct++;
    if (row.status === "model_error" || row.status === "error") errors++;
    consecutiveErrors = row.status === "model_error" ? consecutiveErrors + 1 : 0;
    // Decided before the write: a row finishing while this one is written must see the stop.
    if (o.targetCorrect !== undefined && correct >= o.targetCorrect) stop("target", `target reached: ${correct} correct rows`);
    else if (consecutiveErrors >= maxConsecutive) stop("errors", `stopping: ${consecutiveErrors} episodes in a row failed at the model endpoint; last: ${row.error ?? "model error"}`);
    await appender?.append(row);
    o.onRow?.(row);
    progress.update({
      done: ran.episodes,
      total: budget,
      correct,
      ...(o.targetCorrect !== undefined ? { target: o.targetCorrect } : {}),
      tokens: stats ? stats.promptTokens + stats.completionTokens : 0,
      retries: stats?.retries ?? 0,
      errors,
    });
  };

  const worker = async () => {
    const env = o.makeEnv();
    while (!stopped && next < budget) {
      const item = todo[next++]!;
      try {
        const { task, sample } = item;
        const played = await runEpisode(env, o.policy, {
          task,
          protocol: o.protocol,
          maxRounds: o.maxRounds,
          ...(o.writes ? { writes: o.writes } : {}),
          signal: controller.signal,
          episodeKey: `${task.suite}/${task.id}/${sample}`,
        });
        await record(episodeRow(played, o.policy, { sample, ...(o.patients ? { patients: o.patients } : {}) }));
      } catch (err) {
        if (err instanceof RunAborted) continue;
        if (err instanceof ModelError && err.fatal) {
          stop("fatal", err.fatal);
          continue;
        }
        // The other workers end their episodes (aborted) before the run throws, so none is left running.
        failure ??= { error: err };
        stop("fatal", err instanceof Error ? err.message : String(err));
      }
    }
  };
  const n = Math.max(1, Math.min(o.concurrency ?? 4, budget));
  try {
    await Promise.all(Array.from({ length: n }, worker));
  } finally {
    progress.stop();
    o.signal?.removeEventListener("abort", onOuterAbort);
    await appender?.close();
  }
  if (failure) throw failure.error;
  if (!stopped && o.maxEpisodes !== undefined && budget < todo.length) stopped = { reason: "max-episodes", message: `--max-episodes ${o.maxEpisodes} reached` };
  return { rows, heads, ran, skipped, existing: { rows: existing.rows, correct: existing.correct, retried: existing.retried }, ...(stopped ? { stopped } : {}) };
}
export type RunResult = Awaited<ReturnType<typeof runEpisodes>>;
