// Run progress on stderr: a bar on a terminal, otherwise (a pipe, a log file) one whole line every
// few seconds, never `\r`.
// Shows episodes done/total, correct (of the target), pass rate, tokens/s, retries, errors, ETA.
import { SingleBar } from "cli-progress";

export interface ProgressState {
  done: number;
  total: number;
  correct: number;
  /** Rows already in the file when the run started (counted in `correct` toward the target). */
  target?: number;
  tokens: number;
  retries: number;
  errors: number;
}

export interface Progress {
  update(state: ProgressState): void;
  stop(): void;
}

const NONE: Progress = { update() {}, stop() {} };

function eta(state: ProgressState, correctThisRun: number, secs: number): string {
  if (state.done === 0 || secs <= 0) return "-";
  const rate = state.done / secs;
  let left = (state.total - state.done) / rate;
  if (state.target !== undefined && correctThisRun > 0) {
    const episodesPerCorrect = state.done / correctThisRun;
    left = Math.min(left, (Math.max(0, state.target - state.correct) * episodesPerCorrect) / rate);
  }
  if (!Number.isFinite(left)) return "-";
  const s = Math.round(left);
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

function fields(state: ProgressState, correctAtStart: number, started: number) {
  const secs = (performance.now() - started) / 1000;
  const correctThisRun = state.correct - correctAtStart;
  return {
    correct: `${state.correct}${state.target !== undefined ? `/${state.target}` : ""}`,
    pass: state.done ? ((100 * correctThisRun) / state.done).toFixed(1) : "-",
    tps: secs > 0 ? Math.round(state.tokens / secs).toLocaleString("en-US") : "0",
    retries: state.retries,
    errors: state.errors,
    eta: eta(state, correctThisRun, secs),
    rate: secs > 0 ? (state.done / secs).toFixed(1) : "0.0",
  };
}

/** `show`: true = bar, false = nothing, undefined = bar on a TTY, else a line every `everyMs`. */
export function createProgress(total: number, correctAtStart: number, show?: boolean, everyMs = 10_000): Progress {
  if (total === 0 || show === false) return NONE;
  const started = performance.now();
  if (show ?? process.stderr.isTTY) {
    const bar = new SingleBar({
      stream: process.stderr,
      format: "episodes {bar} {value}/{total} | {rate}/s | correct {correct} | pass {pass}% | {tps} tok/s | retries {retries} | errors {errors} | ETA {eta}",
      hideCursor: true,
      etaBuffer: 50,
    });
    bar.start(total, 0, fields({ done: 0, total, correct: correctAtStart, tokens: 0, retries: 0, errors: 0 }, correctAtStart, started));
    return {
      update: (state) => bar.update(state.done, fields(state, correctAtStart, started)),
      stop: () => bar.stop(),
    };
  }
  let last = started;
  let written: string | undefined;
  const line = (state: ProgressState) => {
    const f = fields(state, correctAtStart, started);
    const counts = `${state.done} ${state.correct} ${state.retries} ${state.errors}`;
    if (counts === written) return; // nothing new since the last line
    written = counts;
    process.stderr.write(
      `episodes ${state.done}/${state.total} (${Math.floor((100 * state.done) / state.total)}%) | ${f.rate} episodes/s | correct ${f.correct} | pass ${f.pass}% | ${f.tps} tokens/s | retries ${f.retries} | errors ${f.errors} | ETA ${f.eta}\n`,
    );
  };
  let lastState: ProgressState | undefined;
  return {
    update(state) {
      lastState = state;
      const now = performance.now();
      if (now - last < everyMs && state.done !== state.total) return;
      last = now;
      line(state);
    },
    stop() {
      if (lastState) line(lastState);
    },
  };
}
