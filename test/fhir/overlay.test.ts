import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FhirResource, Overlay } from "../../env/fhir/index.ts";
import { buildFixtureStore } from "./fixture.ts";

const PATIENTS = ["S1000001", "S1000002", "S1000003"];

function vital(patient: string, code: string, day: number): FhirResource {
  return {
    resourceType: "Observation",
    status: "final",
    category: [{ coding: [{ code: "vital-signs" }] }],
    code: { coding: [{ system: "http://loinc.org", code }] },
    subject: { reference: `Patient/${patient}` },
    effectiveDateTime: `2024-01-${String(day).padStart(2, "0")}T08:00:00+00:00`,
  };
}

describe("overlays", () => {
  it("merge base and own writes in id order, and drop cleanly", () => {
    const store = buildFixtureStore();
    const o = store.newOverlay();
    const a = o.create(vital("S1000001", "K", 2));
    const b = o.create(vital("S1000001", "K", 1));
    expect(Number(b.id)).toBe(Number(a.id) + 1);
    expect(o.search("Observation", "patient=S1000001&code=K").resources.map((r) => r.id)).toEqual(["101", "102", "105", "106", a.id, b.id]);
    expect(o.search("Observation", "patient=S1000001&code=K&_sort=-date&_count=2").resources.map((r) => r.id)).toEqual([a.id, b.id]);
    expect(o.byPatient("Observation", "S1000001").map((r) => r.id)).toEqual(["101", "102", "103", "105", "106", a.id, b.id]);
    o.update("Observation", "102", { ...store.read("Observation", "102")!, code: { coding: [{ code: "NA" }] } });
    expect(o.search("Observation", "code=K").resources.map((r) => r.id)).toEqual(["101", "104", "105", "106", a.id, b.id]);
    expect(o.search("Observation", "code=NA").resources.map((r) => r.id)).toEqual(["102"]);
    expect(o.delete("Observation", a.id!)).toBe(true);
    expect(o.read("Observation", a.id!)).toBeUndefined();
    expect(o.writes).toBe(4);
    expect(store.search("Observation", "code=K").total).toBe(5);
    expect(store.newOverlay().search("Observation", "code=K").total).toBe(5);
  });

  it("stamps each write with a fresh meta.source of 16 letters and digits, as HAPI does", () => {
    const o = buildFixtureStore().newOverlay();
    // more writes than one 4 KB draw of random bytes serves
    const sources = Array.from({ length: 600 }, () => (o.create(vital("S1000001", "K", 1)).meta as { source: string }).source);
    for (const s of sources) expect(s).toMatch(/^#[A-Za-z0-9]{16}$/);
    expect(new Set(sources).size).toBe(sources.length);
    // every character of the alphabet turns up (the bytes are spread over it)
    expect(new Set(sources.flatMap((s) => [...s.slice(1)])).size).toBe(62);
  });

  it("created ids never collide with base ids", () => {
    const store = buildFixtureStore();
    const baseIds = new Set(Object.keys(store.countsByType()).flatMap((t) => store.search(t, "_count=50").resources.map((r) => r.id)));
    const o1 = store.newOverlay();
    const o2 = store.newOverlay();
    for (let i = 0; i < 20; i++) {
      expect(baseIds.has(o1.create(vital("S1000001", "K", 1)).id)).toBe(false);
      expect(baseIds.has(o2.create({ resourceType: "Condition", subject: { reference: "Patient/S1000002" } }).id)).toBe(false);
    }
  });

  it("random writes in two overlays never show in each other or in the base (property)", () => {
    const store = buildFixtureStore();
    const baseSnapshot = JSON.stringify(PATIENTS.map((p) => store.byPatient("Observation", p)));
    const write = fc.oneof(
      fc.record({ kind: fc.constant("create" as const), patient: fc.constantFrom(...PATIENTS), code: fc.constantFrom("K", "A1C", "X"), day: fc.integer({ min: 1, max: 28 }) }),
      fc.record({ kind: fc.constant("update" as const), id: fc.constantFrom("101", "102", "103", "104", "105", "106", "107"), code: fc.constantFrom("K", "Z") }),
      fc.record({ kind: fc.constant("delete" as const), id: fc.constantFrom("101", "102", "103", "104", "105", "106", "107") }),
    );
    type Write = typeof write extends fc.Arbitrary<infer T> ? T : never;
    const apply = (o: Overlay, w: Write, mine: Set<string>) => {
      if (w.kind === "create") mine.add(o.create(vital(w.patient, w.code, w.day)).id!);
      else if (w.kind === "update" && o.read("Observation", w.id)) o.update("Observation", w.id, { ...o.read("Observation", w.id)!, code: { coding: [{ code: w.code }] } });
      else if (w.kind === "delete") o.delete("Observation", w.id);
    };
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), write), { maxLength: 25 }), (writes) => {
        const o1 = store.newOverlay();
        const o2 = store.newOverlay();
        const mine1 = new Set<string>();
        const mine2 = new Set<string>();
        for (const [first, w] of writes) apply(first ? o1 : o2, w, first ? mine1 : mine2);
        for (const [o, others, otherOverlay] of [[o1, mine2, o2], [o2, mine1, o1]] as const) {
          const seen = PATIENTS.flatMap((p) => o.byPatient("Observation", p).map((r) => r.id!));
          for (const id of others) {
            expect(seen).not.toContain(id);
            expect(o.read("Observation", id)).toBeUndefined();
          }
          // what one overlay deleted/updated is untouched in the other unless it wrote it too
          for (const id of ["101", "102", "103", "104", "105", "106", "107"]) {
            const own = writes.some(([f, w]) => (f === (o === o1)) && "id" in w && w.id === id);
            if (!own) expect(o.read("Observation", id)).toEqual(store.read("Observation", id));
          }
          expect(otherOverlay).not.toBe(o);
        }
        expect(JSON.stringify(PATIENTS.map((p) => store.byPatient("Observation", p)))).toBe(baseSnapshot);
      }),
      { seed: 20261123, numRuns: 150 },
    );
  });

  it("patient searches see exactly the overlay's live writes of that patient, across moves and deletes (property)", () => {
    const store = buildFixtureStore();
    const op = fc.oneof(
      fc.record({ kind: fc.constant("create" as const), patient: fc.constantFrom(...PATIENTS), code: fc.constantFrom("K", "X") }),
      fc.record({ kind: fc.constant("move" as const), pick: fc.nat(), patient: fc.constantFrom(...PATIENTS) }),
      fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const o = store.newOverlay();
        const ids: string[] = ["101", "102", "103", "104", "105", "106", "107"];
        for (const w of ops) {
          if (w.kind === "create") ids.push(o.create(vital(w.patient, w.code, 3)).id!);
          else {
            const id = ids[w.pick % ids.length]!;
            const current = o.read("Observation", id);
            if (!current) continue;
            if (w.kind === "delete") o.delete("Observation", id);
            else o.update("Observation", id, { ...current, subject: { reference: `Patient/${w.patient}` } });
          }
        }
        const all = o.search("Observation", "_count=50").resources;
        for (const p of PATIENTS) {
          const expected = all.filter((r) => (r.subject as { reference?: string } | undefined)?.reference === `Patient/${p}`).map((r) => r.id);
          expect(o.search("Observation", `patient=${p}&_count=50`).resources.map((r) => r.id)).toEqual(expected);
          expect(o.search("Observation", `subject=Patient/${p}&code=K&_count=50`).resources.map((r) => r.id)).toEqual(
            all.filter((r) => expected.includes(r.id) && JSON.stringify(r.code).includes('"K"')).map((r) => r.id),
          );
        }
      }),
      { seed: 4242, numRuns: 150 },
    );
  });
});
