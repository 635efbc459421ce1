// The report's content on hand-built runs: comparisons and McNemar p-values against hand values,
// common tasks only, protocols never merged, bad input named, the output folder swapped whole.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { writeReport, type EpisodeRowInput } from "../../rollout/index.ts";
import { buildReport } from "../../rollout/report/build.ts";
import { writeRun } from "./report-fixture.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-report-build-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const row = (task_id: string, type: string, reward: number, extra: Partial<EpisodeRowInput> = {}): EpisodeRowInput => ({
  task_id,
  suite: "mab-v1",
  type,
  kind: type === "task1" ? "query" : "action",
  sample: 0,
  protocol: "text",
  reward,
  status: reward ? "completed" : "invalid_action",
  rounds: 2,
  checks: [],
  messages: [{ role: "user", content: `question of ${task_id}` }, { role: "assistant", content: "FINISH([])" }],
  policy: { kind: "openai", model: "m" },
  ...extra,
});

/** Outcome pairs (base, other) per type: task1 has the Bentur et al. discordant pairs 1 and 7. */
function pairedRuns() {
  const base: EpisodeRowInput[] = [];
  const other: EpisodeRowInput[] = [];
  const add = (type: string, a: number, b: number, count: number) => {
    for (let i = 0; i < count; i++) {
      const id = `${type}_${a}${b}_${i}`;
      base.push(row(id, type, a));
      other.push(row(id, type, b));
    }
  };
  add("task1", 1, 1, 1); // both
  add("task1", 1, 0, 1); // broken
  add("task1", 0, 1, 7); // fixed
  add("task1", 0, 0, 12); // neither
  add("task5", 1, 0, 2);
  add("task5", 0, 1, 10);
  add("task5", 1, 1, 3);
  return { base: writeRun(join(dir, "base.jsonl"), base), other: writeRun(join(dir, "other.jsonl"), other) };
}

describe("report content", () => {
  it("compares task by task with exact McNemar p-values equal to hand values", () => {
    const { base, other } = pairedRuns();
    const r = buildReport({ runs: [{ name: "base", path: base }, { name: "sft", path: other }] });
    const [c] = r.comparisons;
    expect([c!.fixed.length, c!.broken.length, c!.both.length, c!.neither.length]).toEqual([17, 3, 4, 12]);
    const p = Object.fromEntries(c!.mcnemar.map((m) => [m.group, m]));
    // Fagerland et al. 2013 (BMC Med Res Methodol 13:91), Bentur et al. data: b=1, c=7 -> exact p = 0.070 (= 18/256).
    expect(p["mab-v1/task1"]).toMatchObject({ pairs: 21, b: 1, c: 7 });
    expect(p["mab-v1/task1"]!.p).toBeCloseTo(18 / 256, 10);
    // b=2, c=10: 2 * (C(12,0) + C(12,1) + C(12,2)) / 2^12 = 158/4096.
    expect(p["mab-v1/task5"]!.p).toBeCloseTo(158 / 4096, 10);
    // overall b=3, c=17: 2 * sum_{i<=3} C(20,i) / 2^20 = 2 * (1 + 20 + 190 + 1140) / 1048576.
    expect(p.overall).toMatchObject({ pairs: 36, b: 3, c: 17 });
    expect(p.overall!.p).toBeCloseTo((2 * 1351) / 1048576, 10);
    expect(c!.fixed.every((t) => /_01_/.test(t.task_id))).toBe(true);
    expect(c!.broken.every((t) => /_10_/.test(t.task_id))).toBe(true);
  });

  it("different task sets: only the common tasks, and says how many were left out", () => {
    const a = writeRun(join(dir, "a.jsonl"), [row("t1", "task1", 1), row("t2", "task1", 0), row("t3", "task5", 1), row("only-a", "task5", 1)]);
    const b = writeRun(join(dir, "b.jsonl"), [row("t1", "task1", 0), row("t2", "task1", 1), row("t3", "task5", 1), row("only-b1", "task5", 0), row("only-b2", "task5", 0)]);
    const r = buildReport({ runs: [{ name: "a", path: a }, { name: "b", path: b }] });
    expect(r.commonTasks).toBe(3);
    expect(r.runs.map((x) => x.summary.overall.n)).toEqual([3, 3]);
    expect(r.runs.map((x) => x.leftOut)).toEqual([{ rows: 1, tasks: 1 }, { rows: 2, tasks: 2 }]);
    expect(r.notes.join("\n")).toMatch(/a: 1 of its 4 tasks \(1 episodes\) are not in every run and were left out/);
    expect(r.notes.join("\n")).toMatch(/b: 2 of its 5 tasks \(2 episodes\) are not in every run/);
    expect(r.comparisons[0]!.pairs).toBe(3);
  });

  it("several samples: pass@k per run, comparisons on each task's first sample", () => {
    const rows = [0, 1, 2].flatMap((sample) => [row("t1", "task1", sample === 2 ? 1 : 0, { sample }), row("t2", "task1", 1, { sample })]);
    const path = writeRun(join(dir, "samples.jsonl"), rows);
    const r = buildReport({ runs: [{ name: "s", path }, { name: "s2", path }] });
    // t1: c=1 of 3, t2: 3 of 3. pass@2 = ((1 - C(2,2)/C(3,2)) + 1) / 2 = (2/3 + 1) / 2
    expect(r.runs[0]!.summary.overall.passAtK!.find((x) => x.k === 2)!.value).toBeCloseTo(5 / 6, 6);
    expect(r.comparisons[0]).toMatchObject({ pairs: 2 });
    expect(r.comparisons[0]!.neither.map((t) => t.task_id)).toEqual(["t1"]);
  });

  it("suites are never merged silently: each has its rows, and the page says overall counts both", () => {
    const path = writeRun(join(dir, "suites.jsonl"), [row("t1", "task1", 1), row("t1", "task1", 0, { suite: "mab-v2", kind: "action" })]);
    const r = buildReport({ runs: [{ name: "x", path }] });
    expect(r.runs[0]!.summary.bySuite.map((s) => [s.suite, s.rate.n, s.rate.success])).toEqual([["mab-v1", 1, 1], ["mab-v2", 1, 0]]);
    expect(r.notes.join("\n")).toMatch(/2 suites \(mab-v1, mab-v2\)/);
  });
});

describe("bad input", () => {
  const ok = writeRun(join(dir, "ok.jsonl"), [row("t1", "task1", 1)]);
  const build = (path: string, extra: object = {}) => () => buildReport({ runs: [{ name: "x", path }], ...extra });

  it.each([
    ["missing.jsonl", null, /cannot read run file .*missing\.jsonl: no such file/],
    ["empty.jsonl", "", /run file .*empty\.jsonl has no episode rows/],
    ["blank.jsonl", "\n\n", /has no episode rows/],
    ["garbage.jsonl", `${JSON.stringify(row("t1", "task1", 1))}\nnot json\n`, /garbage\.jsonl:2: not a JSON line/],
    ["field.jsonl", `${JSON.stringify(row("t1", "task1", 1))}\n${JSON.stringify({ ...row("t2", "task1", 1), reward: 7 })}\n`, /field\.jsonl:2: not an episode row: reward: .*\(got 7\)/],
    ["status.jsonl", `${JSON.stringify({ ...row("t2", "task1", 1), status: "done" })}\n`, /status\.jsonl:1: not an episode row: status: .*\(got "done"\)/],
    ["dup.jsonl", `${JSON.stringify(row("t1", "task1", 1))}\n${JSON.stringify(row("t1", "task1", 0))}\n`, /dup\.jsonl:2: a second row for mab-v1 t1 sample 0 \(the first is line 1\)/],
    ["mixed.jsonl", [row("t1", "task1", 1), row("t2", "task1", 1, { protocol: "tools" })].map((r) => JSON.stringify(r)).join("\n") + "\n", /mixes protocols \(text 1 rows, tools 1 rows\).*--protocol/],
  ])("%s", (name, text, message) => {
    const path = join(dir, name);
    if (text !== null) writeFileSync(path, text);
    expect(build(path)).toThrow(message);
  });

  it("a half-written last line is skipped and said", () => {
    const path = join(dir, "torn.jsonl");
    writeFileSync(path, `${JSON.stringify(row("t1", "task1", 1))}\n{"task_id": "t2", "sui`);
    const r = buildReport({ runs: [{ name: "x", path }] });
    expect(r.runs[0]!.summary.overall.n).toBe(1);
    expect(r.notes.join("\n")).toMatch(/half-written/);
  });

  it("--protocol keeps one protocol of a mixed file and says how many rows it left out", () => {
    const path = writeRun(join(dir, "mixed2.jsonl"), [row("t1", "task1", 1), row("t2", "task1", 0, { protocol: "tools" })]);
    const r = buildReport({ runs: [{ name: "x", path }], protocol: "tools" });
    expect(r.runs[0]!.summary.overall).toMatchObject({ n: 1, success: 0 });
    expect(r.notes.join("\n")).toMatch(/1 rows of another protocol than tools were left out/);
  });

  it("no common task, duplicate names", () => {
    const other = writeRun(join(dir, "other-task.jsonl"), [row("t9", "task1", 1)]);
    expect(() => buildReport({ runs: [{ name: "a", path: ok }, { name: "b", path: other }] })).toThrow(/no task in common \(a: 1 tasks, b: 1 tasks\)/);
    expect(() => buildReport({ runs: [{ name: "a", path: ok }, { name: "a", path: ok }] })).toThrow(/two runs are named "a"/);
  });

  it.each([
    [{ source: "paper", models: [{ name: "m", overall: 69.7 }] }, /models\.0\.overall: a success rate is a fraction in \[0, 1\] \(write 0\.69, not 69\)/],
    [{ source: "paper", models: [{ name: "m", by_type: { lab: 0.5 } }] }, /models\.0\.by_type\.lab: a task type like task1/],
    [{ source: "paper", models: [{ name: "m", overal: 0.5 }] }, /models\.0: .*overal/],
    [{ models: [{ name: "m" }] }, /--reference: .*source/],
    [{ source: "paper", models: [] }, /models: /],
  ])("a bad reference file is named with its field: %j", (ref, message) => {
    const path = join(dir, "ref.json");
    writeFileSync(path, JSON.stringify(ref));
    expect(build(ok, { reference: path })).toThrow(message);
  });
});

describe("shipped references", () => {
  const run = writeRun(join(dir, "for-reference.jsonl"), [row("t1", "task1", 1), row("t2", "task5", 0)]);

  it("medagentbench-v1 loads by name: the published leaderboard, each overall the mean of query and action (150 tasks each)", () => {
    const r = buildReport({ runs: [{ name: "x", path: run }], reference: "medagentbench-v1" });
    expect(r.reference?.suite).toBe("mab-v1");
    expect(r.reference?.models.map((m) => m.name)).toContain("GPT-4o");
    expect(r.reference?.models.length).toBeGreaterThanOrEqual(7);
    for (const m of r.reference!.models) expect(Math.abs(m.overall! - (m.query! + m.action!) / 2), m.name).toBeLessThan(0.0001);
  });

  it("an unknown name that is no file either lists the shipped ones", () => {
    expect(() => buildReport({ runs: [{ name: "x", path: run }], reference: "medagentbench-v9" })).toThrow(/--reference: no file medagentbench-v9 and no shipped reference of that name \(shipped: .*medagentbench-v1/);
  });
});

describe("the output folder", () => {
  const run = writeRun(join(dir, "one.jsonl"), [row("t1", "task1", 1), row("t2", "task5", 0)]);

  it("is replaced whole; a failed build leaves the old report and no temp folder", async () => {
    const out = join(dir, "out", "report");
    await writeReport({ runs: [{ name: "first", path: run }], out });
    writeFileSync(join(out, "stale.txt"), "from before");
    await writeReport({ runs: [{ name: "second", path: run }], out });
    expect(existsSync(join(out, "stale.txt"))).toBe(false);
    expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8")).runs[0].name).toBe("second");
    await expect(writeReport({ runs: [{ name: "bad", path: join(dir, "missing.jsonl") }], out })).rejects.toThrow(/no such file/);
    expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8")).runs[0].name).toBe("second");
    expect(readdirSync(join(dir, "out"))).toEqual(["report"]);
  });

  it("refuses to replace a folder that is not a report, or a file", async () => {
    const foreign = join(dir, "foreign");
    mkdirSync(foreign);
    writeFileSync(join(foreign, "thesis.tex"), "precious");
    await expect(writeReport({ runs: [{ name: "x", path: run }], out: foreign })).rejects.toThrow(/holds no report \(no summary\.json\); refusing to replace it/);
    expect(readFileSync(join(foreign, "thesis.tex"), "utf8")).toBe("precious");
    await expect(writeReport({ runs: [{ name: "x", path: run }], out: run })).rejects.toThrow(/exists and is not a folder/);
  });
});
