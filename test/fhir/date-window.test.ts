// Large per-patient lists take the date-sorted path; its answers must equal the plain matcher's.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createStoreBuilder } from "../../env/fhir/index.ts";
import { matchesAll } from "../../env/fhir/matcher.ts";
import { parseSearch } from "../../env/fhir/query.ts";

function store() {
  const b = createStoreBuilder();
  b.addText(`{"resourceType":"Patient","id":"S1"}`);
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let i = 0; i < 400; i++) {
    const t = Date.UTC(2023, 0, 1) + Math.floor(rand() * 60) * 86_400_000 + Math.floor(rand() * 86_400) * 1000;
    const when = i % 7 === 0 ? new Date(t).toISOString().slice(0, 10) : new Date(t).toISOString().replace(".000Z", "+00:00");
    const code = i % 3 === 0 ? "K" : "vital";
    b.addText(`{"resourceType":"Observation","id":"${1000 + i}","status":"final","category":[{"coding":[{"code":"${code === "K" ? "laboratory" : "vital-signs"}"}]}],"code":{"coding":[{"code":"${code}"}]},"subject":{"reference":"Patient/S1"},"effectiveDateTime":"${when}"}`);
  }
  return b.build();
}

describe("date-sorted search path", () => {
  const s = store();
  const all = s.byPatient("Observation", "S1");
  it("agrees with the plain matcher for random date windows (property)", () => {
    const day = fc.integer({ min: -5, max: 65 }).map((d) => new Date(Date.UTC(2023, 0, 1) + d * 86_400_000).toISOString().slice(0, 10));
    const value = fc.oneof(
      day,
      fc.tuple(day, fc.integer({ min: 0, max: 23 })).map(([d, h]) => `${d}T${String(h).padStart(2, "0")}:30:00Z`),
    );
    const prefix = fc.constantFrom("", "eq", "ge", "gt", "le", "lt", "sa", "eb", "ne");
    fc.assert(
      fc.property(fc.array(fc.tuple(prefix, value), { minLength: 1, maxLength: 2 }), fc.constantFrom("category=vital-signs", "code=K", ""), (dates, other) => {
        const q = [`patient=S1`, other, ...dates.map(([p, v]) => `date=${p}${v}`)].filter(Boolean).join("&");
        const parsed = parseSearch("Observation", q, { maxCount: 5000 });
        const expected = all.filter((r) => matchesAll(r, parsed.criteria)).map((r) => r.id);
        expect(s.search("Observation", q).resources.map((r) => r.id), q).toEqual(expected);
      }),
      { seed: 99, numRuns: 300 },
    );
  });
});
