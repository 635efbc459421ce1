// Shapes of the generated resources: zod FHIR schemas, the real samples' keys/systems/units,
// bulk-load ids and metadata, the timeline bound, and non-chronological ids within a code.
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { CLOCK, generateStore, type GeneratedStore } from "../../env/ehr/index.ts";
import { resourceSchemas, type FhirResource } from "../../env/fhir/index.ts";
import { describeShared, sharedFile } from "../helpers/shared.ts";

const TYPES = ["Observation", "Condition", "MedicationRequest", "Procedure", "ServiceRequest"] as const;
let g: GeneratedStore;
const all: FhirResource[] = [];

function keysDeep(value: unknown, prefix = ""): string[] {
  if (Array.isArray(value)) return value.length ? keysDeep(value[0], `${prefix}[]`) : [`${prefix}[]`];
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => [`${prefix}.${k}`, ...keysDeep(v, `${prefix}.${k}`)]);
  return [];
}

beforeAll(() => {
  g = generateStore({ seed: 11, patients: 8 });
  for (const mrn of g.summary.charted) {
    all.push(g.read("Patient", mrn)!);
    for (const t of TYPES) all.push(...g.byPatient(t, mrn));
  }
});

describe("generated resources", () => {
  it("parse with the zod FHIR schemas", () => {
    const failures: string[] = [];
    for (const r of all) {
      const schema = (resourceSchemas as Record<string, { safeParse(v: unknown): { success: boolean; error?: unknown } }>)[r.resourceType];
      expect(schema, r.resourceType).toBeDefined();
      const res = schema!.safeParse(r);
      if (!res.success && failures.length < 5) failures.push(`${r.resourceType}/${r.id}: ${JSON.stringify(res.error).slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
    expect(all.length).toBe(g.size);
  });

  it("carry bulk-load metadata: numeric ids in load order, lastUpdated increasing with id, random source", () => {
    const rows = all
      .filter((r) => r.resourceType !== "Patient")
      .map((r) => ({ id: Number(r.id), meta: r.meta! }))
      .sort((a, b) => a.id - b.id);
    expect(rows[0]!.id).toBe(1);
    expect(rows.at(-1)!.id).toBe(rows.length);
    const bad: string[] = [];
    for (let i = 0; i < rows.length; i++) {
      const { id, meta } = rows[i]!;
      const ok =
        meta.versionId === "1" &&
        /^2024-12-30T\d\d:\d\d:\d\d\.\d{3}\+00:00$/.test(meta.lastUpdated!) &&
        /^#[A-Za-z0-9]{16}$/.test(meta.source!) &&
        (i === 0 || meta.lastUpdated! > rows[i - 1]!.meta.lastUpdated!);
      if (!ok && bad.length < 5) bad.push(`${id}: ${JSON.stringify(meta)}`);
    }
    expect(bad).toEqual([]);
    for (const mrn of g.summary.charted) expect(g.read("Patient", mrn)!.id).toMatch(/^S\d{7}$/);
  });

  it("date nothing after the v1 clock 2023-11-13T10:15:00+00:00", () => {
    const iso = /"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?\+00:00)"/g;
    let checked = 0;
    for (const r of all) {
      const { meta: _meta, ...rest } = r;
      for (const m of JSON.stringify(rest).matchAll(iso)) {
        checked++;
        expect(Date.parse(m[1]!), `${r.resourceType}/${r.id} ${m[1]}`).toBeLessThanOrEqual(CLOCK.v1);
      }
    }
    expect(checked).toBeGreaterThan(all.length);
  });

  it("keeps lab values' lexemes (5.0 stays 5.0) in the store's rendering", () => {
    const text = g.newOverlay().search("Observation", `code=K&patient=${g.summary.charted[0]}`);
    expect(text.total).toBeGreaterThan(10);
    const res = g.search("Observation", `code=CA&patient=${g.summary.charted[0]}`);
    expect(res.resources.every((r) => typeof (r.valueQuantity as { value: unknown }).value === "number")).toBe(true);
  });

  it("has ids that are not chronological within a patient and code, often", () => {
    let groups = 0;
    let unordered = 0;
    for (const mrn of g.summary.charted) {
      const byCode = new Map<string, string[]>();
      for (const o of g.byPatient("Observation", mrn)) {
        const code = (o.code as { text: string }).text;
        (byCode.get(code) ?? byCode.set(code, []).get(code)!).push(o.effectiveDateTime as string);
      }
      for (const times of byCode.values()) {
        if (times.length < 5) continue;
        groups++;
        if (times.some((t, i) => i > 0 && t < times[i - 1]!)) unordered++;
      }
    }
    expect(groups).toBeGreaterThan(50);
    expect(unordered / groups).toBeGreaterThan(0.8);
  });

  it("puts vitals in category vital-signs with code.text = flowsheet id and BP as a valueString", () => {
    const mrn = g.summary.charted[0]!;
    const bp = g.search("Observation", `code=BP&patient=${mrn}`).resources;
    expect(bp.length).toBeGreaterThan(20);
    for (const o of bp.slice(0, 50)) {
      expect(o.category).toEqual([{ coding: [{ system: "http://hl7.org/fhir/observation-category", code: "vital-signs", display: "Vital Signs" }] }]);
      expect((o.code as { text: string }).text).toBe("BP");
      expect(o.valueString).toMatch(/^\d{2,3}\/\d{2,3} mmHg$/);
    }
    const hr = g.search("Observation", `code=HEARTRATE&patient=${mrn}`).resources;
    expect(hr.length).toBeGreaterThan(20);
  });
});

describeShared("generated resources vs the real samples", () => {
  const realObs = readFileSync(sharedFile("observations_real_sample.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as FhirResource);
  const realPatients = readFileSync(sharedFile("patients_real.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as FhirResource);

  it("labs have the same keys (in order), systems, units and interpretation shape", () => {
    const realShapes = new Set(realObs.map((o) => keysDeep(o).join(" ")));
    for (const code of ["K", "A1C"]) {
      const ours = g.summary.charted.flatMap((m) => g.search("Observation", `code=${code}&patient=${m}`).resources);
      expect(ours.length).toBeGreaterThan(0);
      for (const o of ours) expect(realShapes.has(keysDeep(o).join(" ")), JSON.stringify(o)).toBe(true);
      const real = realObs.find((o) => (o.code as { text: string }).text === code)!;
      expect(ours[0]!.category).toEqual(real.category);
      expect((ours[0]!.code as { coding: { system: string }[] }).coding[0]!.system).toBe((real.code as { coding: { system: string }[] }).coding[0]!.system);
      const unit = (o: FhirResource) => { const { value: _v, ...u } = o.valueQuantity as Record<string, unknown>; return u; };
      expect(unit(ours[0]!)).toEqual(unit(real));
      expect(ours[0]!.subject).toEqual({ reference: `Patient/${(ours[0]!.subject as { reference: string }).reference.slice(8)}`, identifier: { system: (real.subject as { identifier: { system: string } }).identifier.system, value: (ours[0]!.subject as { reference: string }).reference.slice(8) } });
    }
    const interp = all.find((r) => r.resourceType === "Observation" && r.interpretation && (r.interpretation as { coding: { code: string }[] }[])[0]!.coding[0]!.code === "LOW");
    const realInterp = realObs.find((o) => o.interpretation && (o.interpretation as { coding: { code: string }[] }[])[0]!.coding[0]!.code === "LOW");
    expect(interp!.interpretation).toEqual(realInterp!.interpretation);
  });

  it("patients have the same keys, systems and extension structure", () => {
    const realShape = keysDeep(realPatients[0]).join(" ");
    for (const mrn of g.summary.charted) {
      const p = g.read("Patient", mrn)!;
      expect(keysDeep(p).join(" ")).toBe(realShape);
      const ext = p.extension as { url: string; valueCodeableConcept: { coding: { system: string }[] } }[];
      const realExt = realPatients[0]!.extension as typeof ext;
      expect(ext.map((e) => [e.url, e.valueCodeableConcept.coding[0]!.system])).toEqual(realExt.map((e) => [e.url, e.valueCodeableConcept.coding[0]!.system]));
      expect(p.identifier).toEqual([{ ...(realPatients[0]!.identifier as object[])[0], value: mrn }]);
      expect(p.telecom).toEqual([{ system: "phone", value: expect.stringMatching(/^\d{3}-\d{3}-\d{4}$/), use: "home" }]);
    }
  });
});
