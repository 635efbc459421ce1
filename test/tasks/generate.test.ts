import { beforeAll, describe, expect, it } from "vitest";
import { generateStore } from "../../env/ehr/index.ts";
import type { FhirStore } from "../../env/fhir/index.ts";
import { grade } from "../../env/graders/index.ts";
import { branchesOf, branchOf, eligibleMrns, generateTasks, isWinnableBranch, loadTaskFile, patientMrns, splitOf, taskTypes, type Task } from "../../env/tasks/index.ts";
import { describeShared, sharedFile } from "../helpers/shared.ts";

let store: FhirStore;
beforeAll(() => {
  store = generateStore({ seed: 11, patients: 16 });
});

const counts = (tasks: Task[], type: string) => {
  const m = new Map<string, number>();
  for (const t of tasks.filter((x) => x.type === type)) m.set(t.branch!, (m.get(t.branch!) ?? 0) + 1);
  return m;
};

describe("task generator", () => {
  it("is deterministic by seed and ids are unique across suites", () => {
    const a = generateTasks(store, { suite: "mab-v1", perType: 8, seed: 5 });
    const b = generateTasks(store, { suite: "mab-v1", perType: 8, seed: 5 });
    const c = generateTasks(store, { suite: "mab-v1", perType: 8, seed: 6 });
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const v2 = generateTasks(store, { suite: "mab-v2", perType: 4, seed: 5 });
    const ids = [...a, ...v2].map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(a[0]!.id).toBe("mab-v1/task1/5-1");
  });

  it("covers every type and balances branches (counts differ by at most 1 among branches present)", () => {
    for (const suite of ["mab-v1", "mab-v2"] as const) {
      const tasks = generateTasks(store, { suite, perType: 12, seed: 2 });
      for (const type of taskTypes(suite)) {
        const m = counts(tasks, type);
        expect([...m.values()].reduce((x, y) => x + y, 0), `${suite}/${type}`).toBe(12);
        const vals = [...m.values()];
        expect(Math.max(...vals) - Math.min(...vals), `${suite}/${type}`).toBeLessThanOrEqual(1);
        for (const b of m.keys()) expect(branchesOf(suite, type)).toContain(b);
      }
    }
  });

  it("skips branches no agent can pass unless asked for them (v2_task9 without K data)", () => {
    const types = ["v2_task9"];
    const all = generateTasks(store, { suite: "mab-v2", perType: 9, seed: 4, types, includeUnwinnable: true });
    expect(all.some((t) => t.branch === "no-k")).toBe(true);
    const winnable = generateTasks(store, { suite: "mab-v2", perType: 9, seed: 4, types });
    expect(winnable).toHaveLength(9);
    expect(winnable.some((t) => t.branch === "no-k")).toBe(false);
    expect(isWinnableBranch("mab-v2", "v2_task9", "no-k")).toBe(false);
    expect(isWinnableBranch("mab-v1", "task9", "no-k")).toBe(true);
  });

  it("the recorded branch is what branchOf computes on the task's patient and clock", () => {
    const tasks = generateTasks(store, { suite: "mab-v2", perType: 6, seed: 3 });
    for (const t of tasks) expect(branchOf(t.suite, t.type, store, t.eval_MRN, t.clock)).toBe(t.branch);
  });

  it("task1 includes Patient not found cases with names absent from the population", () => {
    const tasks = generateTasks(store, { suite: "mab-v1", perType: 10, seed: 4, types: ["task1"] });
    const missing = tasks.filter((t) => t.branch === "not-found");
    expect(missing.length).toBe(5);
    for (const t of missing) {
      expect(t.sol).toEqual(["Patient not found"]);
      expect(t.eval_MRN).toBeUndefined();
      const dob = /born (\d{4}-\d{2}-\d{2})/.exec(t.instruction)![1]!;
      expect(store.search("Patient", `birthdate=${dob}`).total).toBe(0);
    }
    for (const t of tasks.filter((x) => x.branch === "found")) expect(t.sol).toEqual([t.eval_MRN]);
  });

  it("holds out MRNs and keeps splits patient-disjoint", () => {
    const all = patientMrns(store);
    const held = all.slice(0, 5);
    const tasks = generateTasks(store, { suite: "mab-v1", perType: 10, seed: 1, excludeMrns: held });
    expect(tasks.some((t) => t.eval_MRN && held.includes(t.eval_MRN))).toBe(false);
    const fr = [0.5, 0.25, 0.25] as const;
    const bySplit = (["train", "val", "test"] as const).map((split) => new Set(eligibleMrns(store, { split, splitFractions: fr })));
    expect(bySplit.reduce((n, s) => n + s.size, 0)).toBe(all.length);
    const train = generateTasks(store, { suite: "mab-v2", perType: 6, seed: 1, split: "train", splitFractions: fr });
    const test = generateTasks(store, { suite: "mab-v2", perType: 6, seed: 2, split: "test", splitFractions: fr });
    const trainM = new Set(train.map((t) => t.eval_MRN));
    expect(test.some((t) => trainM.has(t.eval_MRN))).toBe(false);
    for (const t of train) expect(splitOf(t.eval_MRN!, fr)).toBe("train");
  });

  it("generated tasks are gradable: a finished episode with no actions gets a verdict with checks", () => {
    const tasks = generateTasks(store, { suite: "mab-v2", perType: 3, seed: 9 });
    for (const t of tasks) {
      const r = grade({ task: t, protocol: "text", status: "completed", actions: [{ kind: "FINISH", raw: "FINISH([])" }], result: "[]", base: store, apiBase: "http://x/fhir/" });
      expect(r.checks.length).toBeGreaterThan(0);
      expect(r.checks.some((c) => c.name === "grader exception")).toBe(false);
    }
  });
});

describeShared("like mode", () => {
  it("reads exactly like the official tasks with the slots replaced", () => {
    const official = loadTaskFile(sharedFile("test_data_v2.json"));
    const tasks = generateTasks(store, { suite: "mab-v1", perType: 4, seed: 1, like: official });
    const t3 = tasks.find((t) => t.type === "task3")!;
    expect(t3.instruction).toMatch(/^I just measured the blood pressure for patient with MRN of S\d{7}, and it is "\d+\/\d+ mmHg"\. Help me record it\.$/);
    expect(t3.instruction).toContain(t3.eval_MRN!);
    const t1 = tasks.find((t) => t.type === "task1")!;
    expect(t1.instruction).toMatch(/^What[’']s the MRN of the patient with name .+ and DOB of \d{4}-\d{2}-\d{2}\?/);
    const officialV2 = loadTaskFile(sharedFile("new_patient_tasks_v2.json"));
    const v2 = generateTasks(store, { suite: "mab-v2", perType: 2, seed: 1, like: officialV2, types: ["task4"] });
    expect(v2[0]!.context).toContain("It's 2023-11-11T09:00:00+00:00 now");
    expect(v2[0]!.clock).toBe("2023-11-11T09:00:00+00:00");
  });
});
