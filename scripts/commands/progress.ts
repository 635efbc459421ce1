// Progress of a counted job on stderr, one line of counts, units, rate and ETA: redrawn in place on
// a terminal; elsewhere (a pipe, a log file) printed as whole lines, at most one every few seconds
// and never two alike, so a log reads as a history. (Rollouts and evals have their own episode
// line with pass rates and tokens: rollout/progress.ts.)

export interface MeterOptions {
  /** What is counted, e.g. "ehr: charts". */
  label: string;
  /** The unit of the counts and of the rate, e.g. "patients" (rate "patients/s"). */
  unit: string;
  total: number;
  /** Done before this run (a resumed job): left out of the rate and the ETA. */
  startAt?: number;
  /** How a count and the rate are written (default: with thousands separators). */
  format?: (n: number) => string;
  /** Lines to a non-terminal at most this often (the last one is always written). */
  everyMs?: number;
  /** Redraw in place (default: when stderr is a terminal). */
  tty?: boolean;
  stream?: NodeJS.WritableStream;
}

export interface Meter {
  /** `done` of the total; `note` is shown after the rate (e.g. "312,000 resources"). */
  update(done: number, note?: string): void;
  setTotal(total: number): void;
  /** Writes the last state if it was not written, and ends the line. */
  stop(): void;
}

/** Seconds as "7s", "2m05s" or "1h04m". */
export function duration(secs: number): string {
  const s = Math.round(secs);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${s}s`;
}

const thousands = (n: number) => Math.round(n).toLocaleString("en-US");

export function createMeter(o: MeterOptions): Meter {
  const stream = o.stream ?? process.stderr;
  const tty = o.tty ?? (stream as { isTTY?: boolean }).isTTY === true;
  const fmt = o.format ?? thousands;
  const everyMs = o.everyMs ?? (tty ? 100 : 5000);
  const started = performance.now();
  let total = o.total;
  let done = 0;
  let note: string | undefined;
  let written: string | undefined;
  // The first line comes after `everyMs` (a rate and an ETA need some history), or at the end.
  let writtenAt = tty ? -Infinity : started;
  let open = false;

  const line = (): string => {
    const secs = (performance.now() - started) / 1000;
    const rate = secs > 0 ? Math.max(0, done - (o.startAt ?? 0)) / secs : 0;
    const left = rate > 0 && total >= done ? duration((total - done) / rate) : "-";
    // 100 * x / x can come out just under 100 for a fractional count: done is 100%, not 99.
    const pct = total > 0 ? ` (${done >= total ? 100 : Math.floor((100 * done) / total)}%)` : "";
    const rateText = o.format ? o.format(rate) : rate >= 100 ? thousands(rate) : rate.toFixed(1);
    return `${o.label} ${fmt(done)}/${fmt(total)} ${o.unit}${pct} | ${rateText} ${o.unit}/s${note ? ` | ${note}` : ""} | ETA ${left}`;
  };
  const write = (): void => {
    const text = line();
    const counts = `${done}/${total}/${note ?? ""}`;
    if (counts === written) return;
    written = counts;
    writtenAt = performance.now();
    if (tty) {
      stream.write(`\r${text}\x1b[K`);
      open = true;
    } else stream.write(`${text}\n`);
  };
  return {
    update(n, text) {
      done = n;
      note = text;
      if (done >= total || performance.now() - writtenAt >= everyMs) write();
    },
    setTotal(n) {
      total = n;
    },
    stop() {
      write();
      if (open) stream.write("\n");
      open = false;
    },
  };
}
