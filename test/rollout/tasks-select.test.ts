// `ehrgym tasks select` (the GRPO curriculum) as a child process on the rows of `ehrgym eval --samples 4`
// against the stand-in (seeded mistakes on about half the episodes): it keeps the tasks whose samples
// disagree, counts what it dropped and why, writes a task file the other commands read, and refuses
// bad input with exit 2. The selection rule itself on hand-made rows.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadTaskFile } from "../../env/tasks/index.ts";
import { EpisodeRow, selectByPassRate, type SampleRow } from "../../rollout/index.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { cli, EHR_FLAGS, smallWorld } from "./rollout-fixture.ts";

const world = smallWorld(2);
const evalOut = join(world.dir, "eval.jsonl");
let teacher: TeacherServer;

beforeAll(async () => {
  teacher = await startTeacherServer({ tasks: world.tasks, seed: 9, errorRate: 0.5 });
  const r = await cli(["eval", "--policy", "openai", "--model", "ehrgym-stand-in", "--base-url", teacher.url, "--tasks", world.tasksFile, ...EHR_FLAGS, "--samples", "4", "--out", evalOut, "--no-progress"]);
  expect(r.status, r.stderr).toBe(0);
});
afterAll(async () => {
  await teacher.close();
});

const rows = () =>
  readFileSync(evalOut, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => EpisodeRow.parse(JSON.parse(l)));

function ratesByTask(): Map<string, number> {
  const m = new Map<string, number[]>();
  for (const r of rows()) m.set(r.task_id, [...(m.get(r.task_id) ?? []), r.reward]);
  return new Map([...m].map(([id, rs]) => [id, rs.reduce((a, b) => a + b, 0) / rs.length]));
}

describe("ehrgym tasks select", () => {
  it("keeps the tasks whose samples disagree, as a task file, and says what it dropped (the task file from <out>.meta.json)", async () => {
    const out = join(world.dir, "curriculum.jsonl");
    const r = await cli(["tasks", "select", "--from", evalOut, "--pass-rate", "0.1:0.9", "--out", out]);
    expect(r.status, r.stderr).toBe(0);
    const rates = ratesByTask();
    const mixed = [...rates].filter(([, p]) => p >= 0.1 && p <= 0.9).map(([id]) => id);
    const always = [...rates].filter(([, p]) => p === 1).length;
    const never = [...rates].filter(([, p]) => p === 0).length;
    expect(mixed.length).toBeGreaterThan(0);
    expect(always + never).toBeGreaterThan(0);
    const selected = loadTaskFile(out);
    expect(selected.map((t) => t.id).sort()).toEqual(mixed.sort());
    // The tasks as the source file has them, in its order.
    expect(selected).toEqual(world.tasks.filter((t) => mixed.includes(t.id)));
    expect(r.stdout).toContain(`kept ${mixed.length} of ${rates.size} tasks with a pass rate from 0.1 to 0.9`);
    expect(r.stdout).toContain(`dropped ${always} solved too often (pass rate above 0.9; ${always} always solved)`);
    expect(r.stdout).toContain(`dropped ${never} solved too rarely (pass rate below 0.1; ${never} never solved)`);
  });

  it("--pass-rate 0:1 keeps every task with enough samples", async () => {
    const out = join(world.dir, "all.jsonl");
    const r = await cli(["tasks", "select", "--from", evalOut, "--tasks", world.tasksFile, "--pass-rate", "0:1", "--out", out]);
    expect(r.status, r.stderr).toBe(0);
    expect(loadTaskFile(out)).toHaveLength(ratesByTask().size);
  });

  it.each([
    [["--pass-rate", "0.9:0.1"], /--pass-rate: expected 0 <= MIN <= MAX <= 1/],
    [["--pass-rate", "half"], /--pass-rate: expected MIN:MAX like 0.1:0.9/],
    [["--min-samples", "1"], /--min-samples: /],
    [["--from", "no-such.jsonl"], /--from: no such file/],
  ])("exits 2 on %j, writing nothing", async (bad, message) => {
    const out = join(world.dir, "bad.jsonl");
    const args = ["tasks", "select", "--from", evalOut, "--out", out];
    const i = args.indexOf(bad[0]!);
    if (i >= 0) args.splice(i, 2, ...bad);
    else args.push(...bad);
    const r = await cli(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(existsSync(out)).toBe(false);
  });

  it("exits 2 on rows that are not episode rows, and without a task file to select from", async () => {
    const broken = join(world.dir, "broken.jsonl");
    writeFileSync(broken, '{"suite": "mab-v1", "task_id": "t", "status": "completed"}\n');
    const r = await cli(["tasks", "select", "--from", broken, "--tasks", world.tasksFile, "--out", join(world.dir, "x.jsonl")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--from: .*row 1: reward/);
    const copy = join(world.dir, "copy.jsonl");
    writeFileSync(copy, readFileSync(evalOut));
    const r2 = await cli(["tasks", "select", "--from", copy, "--out", join(world.dir, "y.jsonl")]);
    expect(r2.status).toBe(2);
    expect(r2.stderr).toMatch(/--tasks: give the task file the eval ran on/);
  });
});

describe("selectByPassRate", () => {
  const row = (task_id: string, sample: number, reward: number, status = "completed"): SampleRow => ({ suite: "mab-v1", task_id, sample, reward, status });
  it("keeps rates in [min, max] (both ends), counts the rest, leaves model errors out, and takes a repeated key's last row", () => {
    const rows = [
      ...[1, 1, 1, 1].map((r, i) => row("always", i, r)),
      ...[0, 0, 0, 0].map((r, i) => row("never", i, r)),
      ...[1, 0, 0, 0, 0, 0, 0, 0, 0, 0].map((r, i) => row("edge", i, r)),
      ...[1, 1, 1, 0].map((r, i) => row("mostly", i, r)),
      row("lonely", 0, 1),
      row("errors", 0, 1),
      row("errors", 1, 0, "model_error"),
      row("repeat", 0, 1),
      row("repeat", 1, 1),
      row("repeat", 1, 0),
    ];
    const s = selectByPassRate(rows, { min: 0.1, max: 0.75 });
    expect(s.kept.map((t) => [t.task_id, t.rate])).toEqual([
      ["edge", 0.1],
      ["mostly", 0.75],
      ["repeat", 0.5],
    ]);
    expect(s.above).toEqual({ count: 1, always: 1 });
    expect(s.below).toEqual({ count: 1, never: 1 });
    expect(s.tooFew).toBe(2);
    expect(s.modelErrors).toBe(1);
  });
});
