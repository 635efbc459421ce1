// The workflows suite end to end through the CLI, as a user runs it: generate reviews, the expert at
// 100% in both protocols, a rollout of the stand-in teacher (with its mistakes) over the real openai
// client, a dataset built from it that validates, and a report.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/shared.ts";

const CLI = join(PROJECT_ROOT, "bin", "ehrgym.js");
const dir = mkdtempSync(join(tmpdir(), "ehrgym-workflows-"));
const tasks = join(dir, "reviews.jsonl");
const children: ChildProcess[] = [];
const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, encoding: "utf8" });
const rows = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id?: string; suite: string; type: string; task_id: string; reward: number; checkpoints?: { rule: string; ok: boolean }[] });

async function teacher(taskFile: string): Promise<string> {
  const child = spawn(process.execPath, [CLI, "teacher", "serve", "--tasks", taskFile, "--port", "0"], { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const ready = await new Promise<{ url: string }>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", (line) => resolve(JSON.parse(line)));
    child.once("exit", (code) => reject(new Error(`teacher serve exited with ${code}`)));
  });
  return ready.url;
}

beforeAll(() => {
  const r = run("tasks", "generate", "--suite", "workflows", "--per-type", "6", "--split", "train", "--out", tasks);
  expect(r.status, r.stderr).toBe(0);
});
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("the workflows suite through the CLI", () => {
  for (const protocol of ["text", "tools"] as const)
    it(`the expert solves every review (${protocol}), rows carry the checkpoints`, () => {
      const out = join(dir, `expert-${protocol}.jsonl`);
      const r = run("eval", "--policy", "expert", "--tasks", tasks, "--protocol", protocol, "--out", out);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).toMatch(/tool calls: median \d+/);
      const got = rows(out);
      expect(got).toHaveLength(6);
      expect(got.every((x) => x.reward === 1 && (x.checkpoints?.length ?? 0) >= 4 && x.checkpoints!.every((c) => c.ok))).toBe(true);
    });

  it("a stand-in rollout becomes a dataset that validates, and a report", async () => {
    const url = await teacher(tasks);
    const out = join(dir, "rollout.jsonl");
    const r = run("rollout", "--base-url", url, "--model", "ehrgym-stand-in", "--tasks", tasks, "--samples", "2", "--protocol", "tools", "--out", out);
    expect(r.status, r.stderr).toBe(0);
    const got = rows(out);
    expect(got).toHaveLength(12);
    expect(got.every((x) => Array.isArray(x.checkpoints))).toBe(true);
    const ds = join(dir, "ds");
    const b = run("dataset", "build", "--from", out, "--out", ds, "--splits", "train");
    expect(b.status, b.stderr).toBe(0);
    const v = run("dataset", "validate", ds);
    expect(v.status, v.stderr + v.stdout).toBe(0);
    const rep = run("report", out, "--out", join(dir, "report"));
    expect(rep.status, rep.stderr).toBe(0);
    expect(existsSync(join(dir, "report", "index.html"))).toBe(true);
  });

  it("--suite all generates every suite, workflows included; --types review selects the reviews in eval and rollout", async () => {
    const mixed = join(dir, "all.jsonl");
    const g = run("tasks", "generate", "--suite", "all", "--per-type", "2", "--split", "train", "--out", mixed);
    expect(g.status, g.stderr).toBe(0);
    const all = rows(mixed);
    expect(new Set(all.map((t) => t.suite))).toEqual(new Set(["mab-v1", "mab-v2", "workflows"]));
    const reviews = all.filter((t) => t.type === "review");
    expect(reviews).toHaveLength(2);
    expect(reviews.every((t) => t.suite === "workflows")).toBe(true);

    // eval on generated tasks: --types review alone generates the workflows suite.
    const evalOut = join(dir, "eval-types.jsonl");
    const e = run("eval", "--policy", "expert", "--types", "review", "--per-type", "2", "--split", "train", "--out", evalOut);
    expect(e.status, e.stderr).toBe(0);
    const evaluated = rows(evalOut);
    expect(evaluated).toHaveLength(2);
    expect(evaluated.every((x) => x.suite === "workflows" && x.type === "review" && x.reward === 1)).toBe(true);

    // rollout on a task file of every suite: --types review keeps its reviews only.
    const url = await teacher(mixed);
    const out = join(dir, "rollout-types.jsonl");
    const r = run("rollout", "--base-url", url, "--model", "ehrgym-stand-in", "--tasks", mixed, "--types", "review", "--out", out);
    expect(r.status, r.stderr).toBe(0);
    expect(rows(out).map((x) => x.task_id).sort()).toEqual(reviews.map((t) => t.id!).sort());

    // Bad --types values: one line naming the flag and the value, exit 2.
    for (const [args, message] of [
      [["--types", "task99"], /^ehrgym: --types: unknown task type "task99" \(known: .*review \(workflows\)\) \(got "task99"\)$/],
      [["--suite", "mab-v1", "--types", "review"], /^ehrgym: --types: "review" is not a task type of --suite mab-v1 \(review is a type of workflows\)$/],
      [["--suites", "mab-v1,mab-v2", "--types", "review"], /^ehrgym: --types: "review" is not a task type of --suites mab-v1,mab-v2 \(review is a type of workflows\)$/],
      [["--tasks", mixed, "--suite", "all"], /^ehrgym: --suite: all names no one suite for the tasks of /],
    ] as const) {
      const bad = run("eval", "--policy", "expert", ...args, "--out", join(dir, "bad.jsonl"));
      expect(bad.status, `${args.join(" ")}: ${bad.stderr}`).toBe(2);
      expect(bad.stderr.trim().split("\n"), args.join(" ")).toHaveLength(1);
      expect(bad.stderr.trim(), args.join(" ")).toMatch(message);
      expect(existsSync(join(dir, "bad.jsonl"))).toBe(false);
    }
  });
});
