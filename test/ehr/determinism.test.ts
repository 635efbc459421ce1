import { describe, expect, it } from "vitest";
import { hashGeneration } from "./helpers.ts";

describe("ehr generator determinism", () => {
  it("gives byte-identical output for the same seed and options", () => {
    const a = hashGeneration({ seed: 7, patients: 6 });
    const b = hashGeneration({ seed: 7, patients: 6 });
    expect(a.sha256).toBe(b.sha256);
    expect(a.summary).toEqual(b.summary);
    expect(a.summary.resources).toBeGreaterThan(20_000);
  });

  it("gives different output for different seeds", () => {
    const a = hashGeneration({ seed: 7, patients: 6 });
    const c = hashGeneration({ seed: 8, patients: 6 });
    expect(c.sha256).not.toBe(a.sha256);
    expect(c.summary.charted).not.toEqual(a.summary.charted);
  });

  it("rejects bad options with a clear error", () => {
    expect(() => hashGeneration({ patients: 0 })).toThrow(/patients must be an integer/);
    expect(() => hashGeneration({ patients: 100_001 })).toThrow(/patients must be an integer/);
    expect(() => hashGeneration({ seed: -1 })).toThrow(/seed must be/);
    expect(() => hashGeneration({ patients: 3, chartsFor: ["S0000000"] })).toThrow(/not in the population: S0000000/);
  });
});
