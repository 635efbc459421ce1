// Metrics, the aligned report and the resumable JSONL on real files.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { formatSummary, readRows, summarize, type RowLike } from "../../rollout/index.ts";
import { taskKind } from "../../rollout/metrics.ts";
import { prepareAppend } from "../../env/util/index.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-report-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const row = (suite: string, type: string, reward: number, id = `${type}_${Math.random()}`): RowLike => ({
  task_id: id,
  suite,
  type,
  reward,
  status: reward ? "completed" : "limit_reached",
  checks: reward ? [{ name: "answer", ok: true, detail: "" }] : [{ name: "status", ok: false, detail: "ran out of rounds" }],
});

describe("metrics and report", () => {
  it("classifies query and action types per suite", () => {
    expect(["task1", "task2", "task4", "task6", "task7"].every((t) => taskKind("mab-v1", t) === "query")).toBe(true);
    expect(["task3", "task5", "task8", "task9", "task10"].every((t) => taskKind("mab-v1", t) === "action")).toBe(true);
    expect(taskKind("mab-v2", "task3")).toBe("query");
    expect(taskKind("mab-v2", "task1")).toBe("action");
    expect(taskKind("mab-v2", "v2_task5")).toBe("action");
  });

  it("computes overall, per type (natural order) and query/action rates, and lists failed checks", () => {
    const rows = [row("mab-v1", "task10", 1), row("mab-v1", "task2", 1), row("mab-v1", "task2", 0, "task2_9"), row("mab-v2", "v2_task5", 1), row("mab-v2", "task3", 0, "task3_1")];
    const s = summarize(rows);
    expect(s.overall).toMatchObject({ n: 5, success: 3, rate: 0.6 });
    expect(s.byKind.query).toMatchObject({ n: 3, success: 1, rate: 1 / 3 });
    expect(s.byKind.action).toMatchObject({ n: 2, success: 2, rate: 1 });
    expect(s.byType.map((t) => `${t.suite}/${t.type}`)).toEqual(["mab-v1/task2", "mab-v1/task10", "mab-v2/task3", "mab-v2/v2_task5"]);
    expect(s.failures.map((f) => f.task_id)).toEqual(["task2_9", "task3_1"]);
    expect(s.failures[0]!.failed).toEqual([{ name: "status", ok: false, detail: "ran out of rounds" }]);
    const text = formatSummary(s);
    const table = text.split("\n\n")[0]!.split("\n");
    expect(table[0]).toMatch(/group\s+kind\s+success\s+n\s+rate\s+95% CI$/);
    expect(new Set(table.map((l) => l.length)).size).toBe(1); // aligned columns
    expect(text).toMatch(/overall\s+3\s+5\s+60\.0%/);
    expect(text).toContain("x status: ran out of rounds");
  });

  it("JSONL: a half-written last line from an interrupted run is ignored and cut before appending", async () => {
    const path = join(dir, "eval.jsonl");
    writeFileSync(path, `${JSON.stringify({ task_id: "a", suite: "mab-v1" })}\n{"task_id": "b", "sui`);
    expect((await readRows(path)).map((r) => r.task_id)).toEqual(["a"]);
    await prepareAppend(path);
    appendFileSync(path, `${JSON.stringify({ task_id: "c", suite: "mab-v1" })}\n`);
    expect(readFileSync(path, "utf8").trim().split("\n")).toHaveLength(2);
    expect((await readRows(path)).map((r) => r.task_id)).toEqual(["a", "c"]);
  });

  it("JSONL: a corrupt line in the middle is an error naming the line", async () => {
    const path = join(dir, "bad.jsonl");
    writeFileSync(path, `not json\n${JSON.stringify({ task_id: "a", suite: "mab-v1" })}\n`);
    await expect(readRows(path)).rejects.toThrow(/bad\.jsonl:1/);
  });
});
