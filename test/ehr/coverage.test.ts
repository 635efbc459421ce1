// Branch coverage by construction: in the default population every grading branch of every task
// type of both suites is taken by at least 3 patients (computed with env/tasks' branchOf).
import { beforeAll, describe, expect, it } from "vitest";
import { generateStore, type GeneratedStore } from "../../env/ehr/index.ts";
import { BranchError, branchOf, branchesOf, taskTypes, type Suite } from "../../env/tasks/index.ts";

let g: GeneratedStore;

beforeAll(() => {
  g = generateStore();
});

describe("default population", () => {
  it("has 100 charted patients and about 785,000 resources (+-5%)", () => {
    expect(g.summary.patients).toBe(100);
    expect(g.summary.charted).toHaveLength(100);
    expect(g.size).toBe(g.summary.resources);
    expect(g.size).toBeGreaterThan(785_000 * 0.95);
    expect(g.size).toBeLessThan(785_000 * 1.05);
  });

  for (const suite of ["mab-v1", "mab-v2"] as Suite[]) {
    for (const type of taskTypes(suite)) {
      it(`covers every branch of ${suite} ${type} with >= 3 patients`, () => {
        const counts: Record<string, number> = Object.fromEntries(branchesOf(suite, type).map((b) => [b, 0]));
        for (const mrn of g.summary.charted) {
          let branch: string;
          try {
            branch = branchOf(suite, type, g, mrn);
          } catch (err) {
            if (!(err instanceof BranchError)) throw err;
            branch = `error: ${err.message}`;
          }
          counts[branch] = (counts[branch] ?? 0) + 1;
        }
        // v1 task1's "not-found" is a name/DOB that matches nobody: no data can hold it.
        if (suite === "mab-v1" && type === "task1") {
          expect(branchOf(suite, type, g, undefined)).toBe("not-found");
          delete counts["not-found"];
        }
        for (const [branch, n] of Object.entries(counts)) expect(n, `${suite} ${type} ${branch}: ${JSON.stringify(counts)}`).toBeGreaterThanOrEqual(3);
        expect(Object.keys(counts).filter((b) => b.startsWith("error"))).toEqual([]);
      });
    }
  }

  it("has name/birth-year near-collisions, so patient search needs both fields", () => {
    const seen = new Map<string, number>();
    for (const mrn of g.summary.charted) {
      const p = g.read("Patient", mrn)!;
      const key = `${(p.name as { family: string }[])[0]!.family}|${(p.birthDate as string).slice(0, 4)}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    expect([...seen.values()].filter((n) => n > 1).length).toBeGreaterThanOrEqual(3);
  });
});
