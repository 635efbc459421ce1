// Many episodes with bounded concurrency, progress on stderr, resumable through the JSONL.
import { SingleBar } from "cli-progress";
import type { Task } from "../env/tasks/index.ts";
import { runEpisode, type EpisodeEnv, type EpisodeOptions, type EpisodeRow } from "./episode.ts";
import type { Policy } from "./expert/index.ts";
import { JsonlAppender, prepareAppend, readRows } from "./jsonl.ts";
import { rowKey } from "./row.ts";

export interface RunOptions extends EpisodeOptions {
  /** A fresh environment per worker (they share the base store). */
  makeEnv: () => EpisodeEnv;
  policy: Policy;
  tasks: Task[];
  concurrency?: number;
  /** Append each row here and skip tasks already present in it. */
  out?: string;
  /** Progress on stderr: true = bar, false = nothing, default = bar on a TTY, else a line every 10%. */
  progress?: boolean;
  onRow?: (row: EpisodeRow) => void;
}

export interface RunResult {
  /** Rows of this run only. */
  rows: EpisodeRow[];
  skipped: number;
}

export async function runEpisodes(options: RunOptions): Promise<RunResult> {
  let todo = options.tasks;
  let skipped = 0;
  let appender: JsonlAppender | undefined;
  if (options.out) {
    await prepareAppend(options.out);
    const done = new Set((await readRows(options.out)).map((r) => rowKey(String(r.suite), String(r.task_id))));
    todo = options.tasks.filter((t) => !done.has(rowKey(t.suite, t.id)));
    skipped = options.tasks.length - todo.length;
    appender = new JsonlAppender(options.out);
  }
  const bar = makeProgress(todo.length, options.progress);
  const rows: EpisodeRow[] = [];
  let next = 0;
  let passed = 0;
  const worker = async () => {
    const env = options.makeEnv();
    while (next < todo.length) {
      const task = todo[next++]!;
      const row = await runEpisode(env, options.policy, task, options);
      rows.push(row);
      if (row.reward === 1) passed++;
      await appender?.append(row);
      options.onRow?.(row);
      bar.tick(passed);
    }
  };
  const n = Math.max(1, Math.min(options.concurrency ?? 4, todo.length));
  try {
    await Promise.all(Array.from({ length: n }, worker));
  } finally {
    bar.stop();
  }
  return { rows, skipped };
}

function makeProgress(total: number, show?: boolean): { tick(passed: number): void; stop(): void } {
  if (total === 0 || show === false) return { tick() {}, stop() {} };
  if (show ?? process.stderr.isTTY) {
    const bar = new SingleBar({
      stream: process.stderr,
      format: "episodes {bar} {value}/{total} | {rate}/s | pass {passed} | ETA {eta_formatted}",
      hideCursor: true,
    });
    const started = Date.now();
    let value = 0;
    bar.start(total, 0, { rate: "0.0", passed: 0 });
    return {
      tick(passed) {
        value++;
        bar.update(value, { rate: (value / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(1), passed });
      },
      stop: () => bar.stop(),
    };
  }
  // Not a terminal: a plain line every 10% (and at the end).
  let count = 0;
  const started = Date.now();
  const step = Math.max(1, Math.ceil(total / 10));
  return {
    tick(passed) {
      count++;
      if (count % step !== 0 && count !== total) return;
      const secs = (Date.now() - started) / 1000;
      const rate = count / Math.max(0.001, secs);
      process.stderr.write(`episodes ${count}/${total} pass ${passed} ${rate.toFixed(1)}/s ETA ${Math.round((total - count) / rate)}s\n`);
    },
    stop() {},
  };
}
