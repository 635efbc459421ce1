// Runs a policy over (task, sample) keys for `eval` and `rollout`: Ctrl-C, the stop lines,
// the summary, `<out>.meta.json`, the exit code.
import type { EpisodeEnv, Policy } from "../../env/core/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { hash32, Rng, UserError, writeFileAtomic } from "../../env/util/index.ts";
import {
  EHRGYM_VERSION,
  formatSummary,
  readRowHeads,
  rowKey,
  RowFileError,
  runEpisodes,
  RunRefused,
  summarize,
  type RunItem,
  type RowHead,
  type RunResult,
} from "../../rollout/index.ts";
import { checkOutputFile, unwritable } from "./common.ts";
import { lockOutput, OutputLocked, type OutputLock } from "./out-lock.ts";

export interface Shard {
  index: number;
  count: number;
}

/** Every (task, sample) key, samples-major (every task once before any twice); shuffled by `seed` when given; this shard's share only. */
export function runItems(tasks: readonly Task[], samples: number, options: { shuffleSeed?: number; shard?: Shard } = {}): RunItem[] {
  const order = [...tasks];
  if (options.shuffleSeed !== undefined) new Rng(hash32(`rollout-order:${options.shuffleSeed}`)).shuffle(order);
  const items: RunItem[] = [];
  for (let sample = 0; sample < samples; sample++) for (const task of order) items.push({ task, sample });
  const shard = options.shard;
  if (!shard || shard.count === 1) return items;
  return items.filter((it) => hash32(rowKey(it.task.suite, it.task.id, it.sample)) % shard.count === shard.index);
}

/** The run settings `eval` and `rollout` take from their flags alike. */
export function runFlags(o: {
  out: string;
  protocol: "text" | "tools";
  maxRounds: number;
  writes: "execute" | "record";
  concurrency: number;
  progress: boolean;
  retryErrors: boolean;
  appendDifferent: boolean;
}): Pick<RunJob, "out" | "protocol" | "maxRounds" | "writes" | "concurrency" | "progress" | "retryErrors" | "appendDifferent"> {
  const { out, protocol, maxRounds, writes, concurrency, progress, retryErrors, appendDifferent } = o;
  return { out, protocol, maxRounds, writes, concurrency, progress, retryErrors, appendDifferent };
}

export interface RunJob {
  command: "eval" | "rollout";
  out: string;
  /** What checkOut read from `out` (else the run reads it). */
  existingHeads?: RowHead[];
  policy: Policy;
  items: RunItem[];
  makeEnv: () => EpisodeEnv;
  protocol: "text" | "tools";
  maxRounds: number;
  writes: "execute" | "record";
  concurrency: number;
  progress: boolean;
  retryErrors?: boolean;
  appendDifferent?: boolean;
  targetCorrect?: number;
  maxEpisodes?: number;
  /** Where the EHR's patients came from (each row's `patients`). */
  patients?: string;
  /** Recorded in the meta file. */
  meta: Record<string, unknown>;
  /** Per million tokens, for the cost line. */
  priceIn?: number;
  priceOut?: number;
}

/** Secrets never reach the meta file; flags cannot carry keys (only the name of their variable). */
const commandLine = () => process.argv.slice(2).map((a) => (/^(sk-|hf_)/.test(a) ? "<redacted>" : a));

const money = (x: number) => `$${x < 1 ? x.toFixed(4) : x.toFixed(2)}`;

/** The files a run reads (an output must not be one of them). */
export function inputsOf(o: { tasks?: string | undefined; patientsFrom?: string | undefined; chartsFor: string[]; excludeMrnsFrom: string[] }): string[] {
  return [o.tasks, o.patientsFrom, ...o.chartsFor, ...o.excludeMrnsFrom].filter((p): p is string => p !== undefined);
}

/** What checkOut found: the rows' heads for executeRun, and the lock to release when the run ends. */
export interface CheckedOut {
  heads: RowHead[];
  release: () => void;
}

/**
 * Before any work: takes `--out`'s one-writer lock (a second run on the file is refused naming the
 * holder), then reads the file once (a corrupt file is a usage error) and reports duplicated keys.
 */
export async function checkOut(path: string, command: "eval" | "rollout", inputs: readonly string[]): Promise<CheckedOut> {
  checkOutputFile("--out", path, inputs);
  let lock: OutputLock;
  try {
    lock = lockOutput(path, `ehrgym ${command}`);
  } catch (err) {
    if (err instanceof OutputLocked) throw new UserError(`--out: ${err.message}`);
    throw unwritable("--out", path, err);
  }
  if (lock.replaced) process.stderr.write(`--out: took over the lock of pid ${lock.replaced.pid} (${lock.replaced.command}), which no longer runs\n`);
  try {
    const heads = await readRowHeads(path);
    reportDuplicates(path, heads);
    return { heads, release: lock.release };
  } catch (err) {
    lock.release();
    if (err instanceof RowFileError) throw new UserError(`--out: ${err.message}`);
    throw err;
  }
}

/** One warning line when a key holds more than one row (two runs once wrote to the file at once). */
function reportDuplicates(path: string, heads: RowHead[]): void {
  const seen = new Set<string>();
  let duplicated = 0;
  let first: RowHead | undefined;
  for (const h of heads) {
    const key = rowKey(String(h.suite), String(h.task_id), typeof h.sample === "number" ? h.sample : 0);
    if (!seen.has(key)) seen.add(key);
    else if (duplicated++ === 0) first = h;
  }
  if (duplicated === 0) return;
  process.stderr.write(
    `warning: ${path} holds ${duplicated} duplicate row(s): ${heads.length} rows for ${seen.size} keys (first: ${String(first!.task_id)} sample ${String(first!.sample ?? 0)}); ` +
      `resume skips those keys, summaries count every row\n`,
  );
}

export async function executeRun(job: RunJob): Promise<{ result: RunResult; code: number; summary: ReturnType<typeof summarize> }> {
  const started = new Date();
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    process.stderr.write("\ninterrupted: ending in-flight requests (Ctrl-C again to quit at once)\n");
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigint);
  let result: RunResult;
  try {
    result = await runEpisodes({
      makeEnv: job.makeEnv,
      policy: job.policy,
      items: job.items,
      protocol: job.protocol,
      maxRounds: job.maxRounds,
      writes: job.writes,
      concurrency: job.concurrency,
      ...(job.patients ? { patients: job.patients } : {}),
      out: job.out,
      ...(job.existingHeads ? { existingHeads: job.existingHeads } : {}),
      signal: controller.signal,
      ...(job.progress ? {} : { progress: false }),
      ...(job.retryErrors ? { retryErrors: true } : {}),
      ...(job.appendDifferent ? { appendDifferent: true } : {}),
      ...(job.targetCorrect !== undefined ? { targetCorrect: job.targetCorrect } : {}),
      ...(job.maxEpisodes !== undefined ? { maxEpisodes: job.maxEpisodes } : {}),
    });
  } catch (err) {
    if (err instanceof RunRefused) throw new UserError(`--out: ${err.message}`);
    throw err;
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
  }
  const all = result.heads;
  const summary = summarize(all as never);
  const out = process.stdout;
  out.write(`${formatSummary(summary)}\n\n`);
  const { ran } = result;
  const correct = ran.correct;
  const seconds = (Date.now() - started.getTime()) / 1000;
  out.write(
    `${ran.episodes} episodes run (${correct} correct${ran.episodes ? `, ${((100 * correct) / ran.episodes).toFixed(1)}%` : ""}) in ${seconds.toFixed(1)} s` +
      `${result.skipped ? `; ${result.skipped} already in the file` : ""}${result.existing.retried ? `; ${result.existing.retried} model_error rows re-run` : ""}` +
      `; ${all.length} rows in ${job.out} (${all.filter((r) => r.reward === 1).length} correct)\n`,
  );
  const tokensIn = ran.promptTokens;
  const tokensOut = ran.completionTokens;
  if (tokensIn + tokensOut > 0) {
    const cost = job.priceIn !== undefined || job.priceOut !== undefined ? ((job.priceIn ?? 0) * tokensIn + (job.priceOut ?? 0) * tokensOut) / 1e6 : undefined;
    out.write(
      `tokens: ${tokensIn.toLocaleString("en-US")} in, ${tokensOut.toLocaleString("en-US")} out (${Math.round((tokensIn + tokensOut) / Math.max(seconds, 0.001)).toLocaleString("en-US")}/s)${cost !== undefined ? `; cost ${money(cost)}` : ""}\n`,
    );
  }
  let code = 0;
  if (result.stopped) {
    const { reason, message } = result.stopped;
    if (reason === "interrupted") {
      process.stderr.write(`interrupted: ${all.length} rows in ${job.out}; re-run the same command to resume\n`);
      code = 130;
    } else if (reason === "fatal" || reason === "errors") {
      process.stderr.write(`ehrgym ${job.command}: ${message}\n`);
      code = 1;
    } else {
      process.stderr.write(`${message}\n`);
    }
  } else if (job.targetCorrect !== undefined) {
    const have = all.filter((r) => r.reward === 1).length;
    if (have < job.targetCorrect) process.stderr.write(`target not reached: ${have} of ${job.targetCorrect} correct after every task and sample; add tasks (--per-type) or --samples\n`);
  }
  writeFileAtomic(
    `${job.out}.meta.json`,
    `${JSON.stringify(
      {
        command: ["ehrgym", ...commandLine()],
        ehrgym_version: EHRGYM_VERSION,
        policy: job.policy.info ?? { kind: "scripted", model: job.policy.name },
        protocol: job.protocol,
        max_rounds: job.maxRounds,
        ...job.meta,
        counts: {
          keys: job.items.length,
          run: ran.episodes,
          correct_run: correct,
          skipped: result.skipped,
          retried_errors: result.existing.retried,
          rows: all.length,
          correct_rows: all.filter((r) => r.reward === 1).length,
          prompt_tokens: tokensIn,
          completion_tokens: tokensOut,
        },
        ...(result.stopped ? { stopped: result.stopped } : {}),
        started_at: started.toISOString(),
        finished_at: new Date().toISOString(),
      },
      null,
      2,
    )}\n`,
  );
  return { result, code, summary };
}
