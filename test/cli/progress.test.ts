// Progress written to a pipe or a log file (not a terminal): whole lines with counts, units, a rate
// and an ETA, never a carriage return, never the same line twice.
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createMeter } from "../../scripts/commands/progress.ts";
import { PROJECT_ROOT } from "../helpers/shared.ts";

const BIN = join(PROJECT_ROOT, "bin", "ehrgym.js");
const dir = mkdtempSync(join(tmpdir(), "ehrgym-progress-"));

/** Runs the compiled CLI with stderr on a pipe; returns stderr. */
function stderrOf(...args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: PROJECT_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).not.toContain("\r");
  return r.stderr;
}

/** The lines of `text` that match `pattern`; none may repeat another. */
function progressLines(text: string, pattern: RegExp): RegExpExecArray[] {
  const lines = text.split("\n").filter((l) => pattern.test(l));
  expect(new Set(lines).size).toBe(lines.length);
  return lines.map((l) => pattern.exec(l)!);
}

const RATE_ETA = String.raw`\| [\d.,]+ UNIT/s(?: \| [^|]+)? \| ETA (?:\d+h\d\dm|\d+m\d\ds|\d+s)$`;
const line = (head: string, unit: string) => new RegExp(`^${head} ([\\d.,]+)/([\\d.,]+) ${unit} \\(\\d+%\\) ${RATE_ETA.replace("UNIT", unit)}`);

describe("progress on a pipe", () => {
  it("ehr generate, tasks generate, a load and an eval each end on a whole line of counts, units, rate and ETA", () => {
    const ehr = join(dir, "ehr");
    const charts = progressLines(stderrOf("ehr", "generate", "--patients", "3", "--seed", "7", "--out", ehr), line("ehr: charts", "patients"));
    expect(charts.length).toBeGreaterThan(0);
    expect(charts.at(-1)!.slice(1, 3)).toEqual(["3", "3"]);

    const tasksFile = join(dir, "tasks.jsonl");
    const tasks = stderrOf("tasks", "generate", "--data", ehr, "--per-type", "1", "--out", tasksFile);
    for (const suite of ["mab-v1", "mab-v2"]) {
      const types = progressLines(tasks, line(`tasks ${suite}:`, "task types"));
      expect(types.length).toBeGreaterThan(0);
      expect(types.at(-1)![1]).toBe(types.at(-1)![2]);
    }
    const loads = progressLines(tasks, line("loading", "MB"));
    expect(loads.at(-1)![1]).toBe(loads.at(-1)![2]);

    const evalOut = stderrOf("eval", "--policy", "expert", "--data", ehr, "--tasks", tasksFile, "--limit", "3", "--out", join(dir, "eval.jsonl"));
    const episodes = progressLines(evalOut, /^episodes (\d+)\/(\d+) \(\d+%\) \| [\d.]+ episodes\/s \| correct \d+ \| pass [\d.]+% \| [\d,]+ tokens\/s \| retries \d+ \| errors \d+ \| ETA \S+$/);
    expect(episodes).toHaveLength(1);
    expect(episodes[0]!.slice(1, 3)).toEqual(["3", "3"]);
  });

  it("writes one line per update that changed a count, and the last state on stop", () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (d: Buffer) => (text += d.toString()));
    const meter = createMeter({ label: "copy", unit: "files", total: 4, everyMs: 0, tty: false, stream: out });
    for (const n of [1, 2, 2, 3]) meter.update(n);
    meter.stop();
    const lines = text.split("\n").filter(Boolean);
    expect(lines.map((l) => /^copy (\d)\/4 files/.exec(l)?.[1])).toEqual(["1", "2", "3"]);
    for (const l of lines) expect(l).toMatch(line("copy", "files"));
  });

  it("shows a finished count as 100% when the counts are fractions (100 * x / x can round under 100)", () => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (d: Buffer) => (text += d.toString()));
    const total = 10.300003; // 10,300,003 bytes in MB: 100 * x / x = 99.99999999999999
    expect(Math.floor((100 * total) / total)).toBe(99);
    const meter = createMeter({ label: "read", unit: "MB", total, everyMs: 0, tty: false, stream: out });
    meter.update(total);
    meter.stop();
    expect(text).toContain("(100%)");
  });
});
