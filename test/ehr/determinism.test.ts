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

describe("default population", () => {
  it("has ~785,000 resources (+-5%) and nothing dated after the v1 clock", async () => {
    const { CLOCK, DEFAULT_PATIENTS } = await import("../../env/ehr/index.ts");
    const iso = /"(effectiveDateTime|issued|authoredOn|performedDateTime|start|end|onsetDateTime|abatementDateTime|recordedDate|occurrenceDateTime)":"([^"]+)"/g;
    let latest = "";
    let late = 0;
    const { summary } = hashGeneration({}, (json) => {
      for (const m of json.matchAll(iso)) {
        if (Date.parse(m[2]!) > CLOCK.v1) late++;
        if (m[2]! > latest) latest = m[2]!;
      }
    });
    expect(summary.patients).toBe(DEFAULT_PATIENTS);
    expect(Math.abs(summary.resources - 785_000)).toBeLessThan(785_000 * 0.05);
    expect(late).toBe(0);
    expect(latest <= "2023-11-13T10:15:00+00:00").toBe(true);
    expect(latest > "2023-11-13T09:00:00+00:00").toBe(true);
  });
});
