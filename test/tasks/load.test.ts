import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clockFromContext, defaultClock, loadTaskFile, parseTaskFile, TaskFileError, typeFromId } from "../../env/tasks/index.ts";
import { describeShared, sharedFile } from "../helpers/shared.ts";

describeShared("loading the official task files", () => {
  it("test_data_v2.json: 300 mab-v1 tasks, 10 types x 30, fixed clock, task1 sol", () => {
    const tasks = loadTaskFile(sharedFile("test_data_v2.json"));
    expect(tasks).toHaveLength(300);
    expect(new Set(tasks.map((t) => t.suite))).toEqual(new Set(["mab-v1"]));
    for (let n = 1; n <= 10; n++) expect(tasks.filter((t) => t.type === `task${n}`)).toHaveLength(30);
    expect(new Set(tasks.map((t) => t.clock))).toEqual(new Set(["2023-11-13T10:15:00+00:00"]));
    expect(tasks.filter((t) => t.type === "task1").every((t) => Array.isArray(t.sol))).toBe(true);
  });
  it("test_data_v1.json: 100 mab-v1 tasks; the two not-found lookups have no eval_MRN", () => {
    const tasks = loadTaskFile(sharedFile("test_data_v1.json"));
    expect(tasks).toHaveLength(100);
    expect(tasks.every((t) => t.suite === "mab-v1")).toBe(true);
    const missing = tasks.filter((t) => t.eval_MRN === undefined);
    expect(missing.length).toBeGreaterThanOrEqual(2);
    expect(missing.every((t) => t.type === "task1")).toBe(true);
  });
  it("new_patient_tasks_v2.json: 300 mab-v2 tasks with clocks read from the context", () => {
    const tasks = loadTaskFile(sharedFile("new_patient_tasks_v2.json"));
    expect(tasks).toHaveLength(300);
    expect(tasks.every((t) => t.suite === "mab-v2")).toBe(true);
    const t4 = tasks.find((t) => t.id === "task4_1")!;
    expect(t4.clock).toBe("2023-11-16T10:00:00+00:00");
    expect(tasks.find((t) => t.id === "task1_1")!.clock).toBe("2023-11-07T22:47:00+00:00");
    expect(tasks.find((t) => t.id === "task9_1")!.clock).toBe("2024-01-09T00:00:00+00:00");
  });
  it("the suite can be forced", () => {
    expect(loadTaskFile(sharedFile("test_data_v1.json"), { suite: "mab-v2" })[0]!.suite).toBe("mab-v2");
  });
});

describe("task files", () => {
  it("types from ids, clocks from contexts", () => {
    expect(typeFromId("task10_3")).toBe("task10");
    expect(typeFromId("v2_task9_1")).toBe("v2_task9");
    expect(typeFromId("mab-v2/v2_task5/7-3")).toBe("v2_task5");
    expect(clockFromContext("it's 2023-11-13T02:01:00+00:00 NOW.")).toBe("2023-11-13T02:01:00+00:00");
    expect(clockFromContext("a 2020-01-01T00:00:00+00:00 then 2021-01-01T00:00:00-05:00 end")).toBe("2021-01-01T00:00:00-05:00");
    expect(clockFromContext("It's 2023-13-01T00:00:00+00:00 now")).toBe("2023-11-07T22:47:00+00:00");
    expect(clockFromContext("nothing")).toBe("2023-11-07T22:47:00+00:00");
    expect(defaultClock("mab-v2", "task4")).toBe("2023-11-11T09:00:00+00:00");
    expect(defaultClock("mab-v1", "task4")).toBe("2023-11-13T10:15:00+00:00");
  });
  it("JSONL with full Task rows round-trips", () => {
    const row = { id: "mab-v2/task3/1-1", suite: "mab-v2", type: "task3", instruction: "x", context: "It's 2023-11-07T22:47:00+00:00 now.", eval_MRN: "S1", clock: "2023-11-07T22:47:00+00:00", branch: "hr-6h" };
    expect(parseTaskFile(`${JSON.stringify(row)}\n\n`)).toEqual([row]);
  });
  it("bad input names the row and field", () => {
    expect(() => parseTaskFile('[{"id": "task1_1"}]')).toThrow(/task #1: field instruction/);
    expect(() => parseTaskFile('[{"id": "foo", "instruction": "x"}]')).toThrow(/field id: cannot tell the task type/);
    expect(() => parseTaskFile('{"id": "task1_1", "instruction": "x"}\n{oops')).toThrow(/:2: invalid JSON line/);
    expect(() => parseTaskFile('[{"id": "task1_1", "instruction": "x"}, {"id": "task1_1", "instruction": "y"}]')).toThrow(/duplicate id/);
    expect(() => parseTaskFile('[{"id": "task1_1", "instruction": "x", "eval_MRN": 5}]')).toThrow(TaskFileError);
    const dir = mkdtempSync(join(tmpdir(), "ehrgym-tasks-"));
    expect(() => loadTaskFile(join(dir, "missing.json"))).toThrow(/cannot read task file/);
    writeFileSync(join(dir, "obj.json"), '[1');
    expect(() => loadTaskFile(join(dir, "obj.json"))).toThrow(/invalid JSON/);
  });
});
