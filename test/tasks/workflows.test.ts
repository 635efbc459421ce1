// The workflows generator: 4-10 rules per review, balanced over rules and branches, a review that
// needs no order, the round limit and the answer format stated, the other suites' splits and hold-out.
import { beforeAll, describe, expect, it } from "vitest";
import { generateStore } from "../../env/ehr/index.ts";
import type { FhirStore } from "../../env/fhir/index.ts";
import { generateTasks, splitOf, type Task, WORKFLOW_LATE_NOW, WORKFLOW_NOW, WORKFLOW_RULES, workflowRule } from "../../env/tasks/index.ts";

let store: FhirStore;
let tasks: Task[];

beforeAll(() => {
  ({ store } = generateStore({ seed: 7, patients: 40 }));
  tasks = generateTasks(store, { suite: "workflows", perType: 60, seed: 3 });
});

const branches = (t: Task) => new Map(t.branch!.split(",").map((b) => b.split("=") as [string, string]));

describe("workflows tasks", () => {
  it("one review per slot, each of 4 to 10 distinct known rules on one patient at the stated NOW", () => {
    expect(tasks).toHaveLength(60);
    for (const t of tasks) {
      expect(t.suite).toBe("workflows");
      expect(t.type).toBe("review");
      expect(t.rules!.length).toBeGreaterThanOrEqual(4);
      expect(t.rules!.length).toBeLessThanOrEqual(10);
      expect(new Set(t.rules).size).toBe(t.rules!.length);
      for (const r of t.rules!) expect(() => workflowRule(r)).not.toThrow();
      expect(t.instruction).toContain(t.eval_MRN!);
      expect(t.context).toContain(`It's ${t.clock} now.`);
      expect(t.context).toContain(`You have at most ${t.max_rounds} rounds`);
      expect(t.max_rounds).toBeGreaterThanOrEqual(30);
      // The answer's keys are stated.
      for (const k of t.rules!.flatMap((r) => workflowRule(r).keys ?? [])) expect(t.context).toContain(`"${k.key}"`);
      // Rules that order the same thing never share a review.
      expect(t.rules!.includes("ct-follow-up") && t.rules!.includes("renal-mass")).toBe(false);
    }
    expect(new Set(tasks.map((t) => t.rules!.length)).size).toBeGreaterThanOrEqual(5);
  });

  it("covers every rule and, per rule, its branches within a factor of 3 of each other", () => {
    const byRule = new Map<string, Map<string, number>>();
    for (const t of tasks)
      for (const [rule, branch] of branches(t)) {
        const m = byRule.get(rule) ?? new Map<string, number>();
        m.set(branch, (m.get(branch) ?? 0) + 1);
        byRule.set(rule, m);
      }
    expect([...byRule.keys()].sort()).toEqual(WORKFLOW_RULES.map((r) => r.id).sort());
    for (const [rule, m] of byRule) {
      const counts = [...m.values()];
      expect(Math.max(...counts), `${rule}: ${JSON.stringify([...m])}`).toBeLessThanOrEqual(3 * Math.min(...counts) + 2);
      // Excluded branches are never generated.
      for (const b of Object.keys(workflowRule(rule).excluded ?? {})) expect(m.has(b)).toBe(false);
    }
  });

  it("sets some reviews 6.5 h after the last charted minute, where the heart-rate rule's '12 h only' branch exists, balanced with its other two", () => {
    // Counted from the raw Observations, not the grader's facts: HEARTRATE readings in [NOW-12h, NOW-6h) and [NOW-6h, NOW].
    const readings = (mrn: string, now: string) => {
      const end = Date.parse(now);
      const times = store
        .byPatient("Observation", mrn)
        .map((o) => o as unknown as { code?: { coding?: { code?: string }[] }; effectiveDateTime?: string })
        .filter((o) => o.code?.coding?.[0]?.code === "HEARTRATE" && o.effectiveDateTime !== undefined)
        .map((o) => Date.parse(o.effectiveDateTime!));
      return { in6: times.filter((t) => end - 6 * 3_600_000 <= t && t <= end).length, only12: times.filter((t) => end - 12 * 3_600_000 <= t && t < end - 6 * 3_600_000).length };
    };
    expect(new Set(tasks.map((t) => t.clock))).toEqual(new Set([WORKFLOW_NOW, WORKFLOW_LATE_NOW]));
    const hr = tasks.filter((t) => t.rules!.includes("heart-rate"));
    const count = new Map<string, number>();
    for (const t of hr) {
      const branch = branches(t).get("heart-rate")!;
      count.set(branch, (count.get(branch) ?? 0) + 1);
      const { in6, only12 } = readings(t.eval_MRN!, t.clock!);
      expect(branch, t.id).toBe(in6 > 0 ? "hr-6h" : only12 > 0 ? "hr-12h-only" : "no-hr-12h");
    }
    expect([...count.keys()].sort()).toEqual(["hr-12h-only", "hr-6h", "no-hr-12h"]);
    expect(Math.max(...count.values())).toBeLessThanOrEqual(3 * Math.min(...count.values()));
    // At the v1 clock nobody on this population is "12 h only": why the later NOW exists.
    const patients = [...new Set(tasks.map((t) => t.eval_MRN!))];
    expect(patients.filter((m) => { const r = readings(m, WORKFLOW_NOW); return r.in6 === 0 && r.only12 > 0; })).toEqual([]);
    expect(patients.filter((m) => { const r = readings(m, WORKFLOW_LATE_NOW); return r.in6 === 0 && r.only12 > 0; }).length).toBeGreaterThan(0);
  });

  it("has reviews that need no order at all, and reviews that need several", () => {
    const store0 = store;
    const needs = (t: Task) => t.rules!.filter((r) => workflowRule(r).kind === "order" && workflowRule(r).state(store0, t.eval_MRN!, t.clock!).needsOrder).length;
    expect(tasks.filter((t) => needs(t) === 0).length).toBeGreaterThanOrEqual(6);
    expect(tasks.some((t) => needs(t) >= 4)).toBe(true);
  });

  it("is deterministic by seed, and keeps the patient split and the hold-out", () => {
    expect(generateTasks(store, { suite: "workflows", perType: 60, seed: 3 })).toEqual(tasks);
    expect(generateTasks(store, { suite: "workflows", perType: 60, seed: 4 })).not.toEqual(tasks);
    const train = generateTasks(store, { suite: "workflows", perType: 20, seed: 3, split: "train" });
    expect(train.length).toBeGreaterThan(0);
    for (const t of train) expect(splitOf(t.eval_MRN!, [0.8, 0.1, 0.1])).toBe("train");
    const held = new Set(tasks.slice(0, 10).map((t) => t.eval_MRN!));
    for (const t of generateTasks(store, { suite: "workflows", perType: 30, seed: 3, excludeMrns: held })) expect(held.has(t.eval_MRN!)).toBe(false);
  });
});
