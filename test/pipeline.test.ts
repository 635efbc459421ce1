// `npm start`'s pipeline end to end (the --quick variant): every stage's output exists and is valid;
// a second run has nothing left to do, and a third re-runs only the stage whose output went missing.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EpisodeRow } from "../rollout/index.ts";
import { PROJECT_ROOT } from "./helpers/shared.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-pipeline-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `npm start` (the compiled pipeline; its population is cached in the test run's EHRGYM_CACHE). */
const pipeline = () => spawnSync(process.execPath, ["dist/scripts/pipeline.js", "--quick", "--out", dir], { cwd: PROJECT_ROOT, encoding: "utf8" });
/** Log file -> modification time: a stage that runs rewrites its log. */
const logTimes = () => Object.fromEntries(readdirSync(join(dir, "logs")).map((f) => [f, statSync(join(dir, "logs", f)).mtimeMs]));

const rows = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => EpisodeRow.parse(JSON.parse(l)));

describe("npm start: the offline pipeline", () => {
  it("runs teacher -> rollout -> dataset -> push --dry-run -> eval x2 -> report, and says where everything is", () => {
    const r = pipeline();
    expect(r.status, r.stdout + r.stderr).toBe(0);
    for (const stage of ["ehr", "tasks", "teacher", "rollout", "dataset", "push", "eval", "report"]) expect(r.stdout).toMatch(new RegExp(`\\] ${stage}\\s`));
    expect(r.stdout).toContain("not a model");

    const teacher = rows(join(dir, "teacher.jsonl"));
    expect(teacher.filter((x) => x.reward === 1)).toHaveLength(40);
    // Evaluation patients never reach training rows ("patient not found" tasks name nobody).
    const evalMrns = new Set(readFileSync(join(dir, "eval-tasks.jsonl"), "utf8").split("\n").filter(Boolean).flatMap((l) => (JSON.parse(l).eval_MRN as string | undefined) ?? []));
    expect(evalMrns.size).toBeGreaterThan(0);
    expect(teacher.filter((x) => x.mrn !== undefined && evalMrns.has(x.mrn))).toEqual([]);

    const manifest = JSON.parse(readFileSync(join(dir, "dataset", "manifest.json"), "utf8")) as { files: { path: string; rows: number }[] };
    expect(manifest.files.some((f) => f.path.endsWith(".arrow"))).toBe(true);
    expect(existsSync(join(dir, "dataset", "README.md"))).toBe(true);
    const validate = spawnSync(process.execPath, ["bin/ehrgym.js", "dataset", "validate", join(dir, "dataset"), "--exclude-mrns-from", join(dir, "eval-tasks.jsonl")], { cwd: PROJECT_ROOT, encoding: "utf8" });
    expect(validate.status, validate.stdout + validate.stderr).toBe(0);

    const expert = rows(join(dir, "eval-expert.jsonl"));
    expect(expert.every((x) => x.reward === 1)).toBe(true);
    const standin = rows(join(dir, "eval-stand-in.jsonl"));
    expect(standin).toHaveLength(expert.length * 2);
    expect(standin.some((x) => x.reward === 0)).toBe(true);

    expect(readFileSync(join(dir, "report", "index.html"), "utf8")).toContain("<svg");
    const summary = JSON.parse(readFileSync(join(dir, "report", "summary.json"), "utf8"));
    expect(JSON.stringify(summary)).toContain("stand-in");
  });

  it("a second run has nothing left to do: no stage runs, no teacher starts, every line says so", () => {
    const before = logTimes();
    const teacherRows = readFileSync(join(dir, "teacher.jsonl"), "utf8");
    const r = pipeline();
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const lines = r.stdout.split("\n").filter((l) => /^\[ *\d+ s\] /.test(l));
    expect(lines.map((l) => /\] (\w+)/.exec(l)![1])).toEqual(["ehr", "tasks", "tasks", "rollout", "dataset", "push", "eval", "eval", "report"]);
    expect(lines[0]).toMatch(/cached in .*\(generated before\)$/);
    for (const l of lines.slice(1)) expect(l).toMatch(/\(done before, inputs unchanged\)$/);
    expect(r.stdout).toContain("40 correct traces");
    // The dataset line: how many correct traces became how many rows, and what was left out, adding up.
    const [, traces, kept, why] = /(\d+) correct traces became (\d+) rows .*?(?:; left out: (.*))? \(done before/.exec(r.stdout)!;
    const leftOut = [...(why ?? "").matchAll(/(?:^|, )(\d+) /g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(Number(kept) + leftOut).toBe(Number(traces));
    expect(r.stderr).not.toMatch(/generating/);
    expect(logTimes()).toEqual(before);
    expect(readFileSync(join(dir, "teacher.jsonl"), "utf8")).toBe(teacherRows);
  });

  it("a run after an output went missing re-runs only the stage that wrote it", () => {
    const before = logTimes();
    rmSync(join(dir, "report"), { recursive: true });
    const r = pipeline();
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\] report +comparison -> .*index\.html \(\d+\.\d s\)/);
    expect(r.stdout.match(/done before, inputs unchanged/g)).toHaveLength(7);
    expect(existsSync(join(dir, "report", "index.html"))).toBe(true);
    const after = logTimes();
    expect(Object.keys(after).filter((f) => after[f] !== before[f])).toEqual(["report.log"]);
  });

  it("`npm start &` then `kill -INT $!` stops the pipeline and every process it started, keeping finished stages", async () => {
    const out = mkdtempSync(join(tmpdir(), "ehrgym-pipeline-int-"));
    const npm = spawn("npm", ["start", "--", "--quick", "--out", out], { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    npm.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise<void>((r) => npm.once("close", () => r()));
    // Once the first task set is written, the next stage is a child process of the pipeline.
    await new Promise<void>((resolve) => createInterface({ input: npm.stdout }).on("line", (l) => /\] tasks /.test(l) && resolve()));
    npm.kill("SIGINT");
    await closed;
    expect(stderr).toMatch(/interrupted: stopping what the pipeline started/);
    const ours = () =>
      readdirSync("/proc")
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(out);
          } catch {
            return false;
          }
        });
    while (ours().length) await new Promise((r) => setTimeout(r, 100));
    const finished = Object.keys(JSON.parse(readFileSync(join(out, "stages.json"), "utf8")) as object);
    expect(finished[0]).toBe("tasks-train");
    expect(finished).not.toContain("rollout");
    rmSync(out, { recursive: true, force: true });
  });
});
