import { describe, expect, it } from "vitest";
import { API, gradeText, gradeTools, MRN, obs, post, store, task } from "./helpers.ts";

const v1 = (type: string, extra: Record<string, unknown> = {}) => task({ suite: "mab-v1", type, ...extra });
const ok = (r: { reward: number }) => expect(r.reward).toBe(1);
const bad = (r: { reward: number; checks: { ok: boolean }[] }) => {
  expect(r.reward).toBe(0);
  expect(r.checks.some((c) => !c.ok)).toBe(true);
};

const BP = (over: Record<string, unknown> = {}) => ({
  resourceType: "Observation",
  category: [{ coding: [{ system: "http://hl7.org/fhir/observation-category", code: "vital-signs", display: "Vital Signs" }] }],
  code: { text: "BP" },
  effectiveDateTime: "2023-11-13T10:15:00+00:00",
  status: "final",
  valueString: "118/77 mmHg",
  subject: { reference: `Patient/${MRN}` },
  ...over,
});

const MG_ORDER = (dose: number, over: Record<string, unknown> = {}) => ({
  resourceType: "MedicationRequest",
  medicationCodeableConcept: { coding: [{ system: "http://hl7.org/fhir/sid/ndc", code: "0338-1715-40" }] },
  authoredOn: "2023-11-13T10:15:00+00:00",
  dosageInstruction: [{ route: "IV", doseAndRate: [{ doseQuantity: { value: dose, unit: "g" }, rateQuantity: { value: dose, unit: "h" } }] }],
  status: "active",
  intent: "order",
  subject: { reference: `Patient/${MRN}` },
  ...over,
});

describe("mab-v1 status and quirks", () => {
  it("only completed episodes are graded", () => {
    const r = gradeText(v1("task7"), store(), ["FINISH([-1])"], "limit_reached");
    bad(r);
    expect(r.checks[0]!.detail).toContain("limit_reached");
  });
  it("the word POST anywhere (even inside FINISH) counts as a POST for query tasks", () => {
    bad(gradeText(v1("task7"), store(), ["FINISH([-1]) no POST needed"]));
  });
  it("extract_posts raises when the last turn contains POST: action task fails even with a good POST", () => {
    const s = store();
    ok(gradeText(v1("task3", { instruction: 'It is "118/77 mmHg".' }), s, [post("Observation", BP()), "FINISH([])"]));
    const r = gradeText(v1("task3", { instruction: 'It is "118/77 mmHg".' }), s, [post("Observation", BP()), "FINISH(done, POST made)"]);
    bad(r);
    expect(r.checks.some((c) => c.detail.includes("IndexError"))).toBe(true);
  });
});

describe("mab-v1 task1 (MRN lookup)", () => {
  it("exact answer, not-found, strings only", () => {
    ok(gradeText(v1("task1", { sol: [MRN] }), store(), [`FINISH(["${MRN}"])`]));
    ok(gradeText(v1("task1", { sol: ["Patient not found"], eval_MRN: undefined }), store(), ['FINISH(["Patient not found"])']));
    bad(gradeText(v1("task1", { sol: [MRN] }), store(), [`FINISH(${MRN})`]));
    bad(gradeText(v1("task1", { sol: [MRN] }), store(), [`FINISH(['${MRN}'])`]));
    ok(gradeText(v1("task1", { sol: [MRN] }), store(), ["```\nFINISH([\"S1000001\"])\n```"]));
  });
});

describe("mab-v1 task2 (age)", () => {
  it("age on 2023-11-13, birthday not yet reached, int vs float vs string", () => {
    // patient born 1960-05-20 -> 63
    ok(gradeText(v1("task2"), store(), ["FINISH([63])"]));
    ok(gradeText(v1("task2"), store(), ["FINISH([63.0])"]));
    bad(gradeText(v1("task2"), store(), ['FINISH(["63"])']));
    bad(gradeText(v1("task2"), store(), ["FINISH(63)"]));
    bad(gradeText(v1("task2", { eval_MRN: "S9999999" }), store(), ["FINISH([63])"]));
  });
});

describe("mab-v1 task3 (record BP)", () => {
  const t = v1("task3", { instruction: 'I just measured it, and it is "118/77 mmHg". Help me record it.' });
  const s = store();
  it("exact payload passes (text and tools)", () => {
    ok(gradeText(t, s, ["GET Patient?identifier=S1000001", post("Observation", BP()), "FINISH([])"]));
    ok(gradeTools(t, s, [{ type: "Observation", body: BP() }], []));
  });
  it("fails on each deviation", () => {
    for (const over of [
      { code: { text: "BP", coding: [] } },
      { valueString: "118/77" },
      { effectiveDateTime: "2023-11-13T10:15:00Z" },
      { status: "preliminary" },
      { subject: { reference: "Patient/S0000000" } },
      { category: [] },
      { category: "x" },
    ])
      bad(gradeText(t, s, [post("Observation", BP(over)), "FINISH([])"]));
    bad(gradeText(t, s, [post("Observation", BP()), post("Observation", BP()), "FINISH([])"]));
    bad(gradeText(t, s, ["FINISH([])"]));
    bad(gradeText(t, s, [`POST ${API}Observation/\n${JSON.stringify(BP())}`, "FINISH([])"]));
    bad(gradeText(t, s, ["```\n" + post("Observation", BP()) + "\n```", "FINISH([])"]));
  });
  it("an unparseable POST is not an accepted POST", () => {
    bad(gradeText(t, s, [`POST ${API}Observation\n{bad json`, "FINISH([])"]));
  });
});

describe("mab-v1 task4/6/7 (queries)", () => {
  it("task4: latest in the 24 h window, boundary inclusive, -1 when none", () => {
    const s = store(obs("MG", "2023-11-12T10:15:00+00:00", 2.1), obs("MG", "2023-11-12T10:14:59+00:00", 9), obs("MG", "2023-11-13T01:00:00+00:00", 1.8), obs("MG", "2023-11-12T20:00:00+00:00", 1.2));
    ok(gradeText(v1("task4"), s, ["FINISH([1.8])"]));
    bad(gradeText(v1("task4"), s, ["FINISH([1.80001])"]));
    const old = store(obs("MG", "2023-11-12T10:14:59+00:00", 2.1));
    ok(gradeText(v1("task4"), old, ["FINISH([-1])"]));
    ok(gradeText(v1("task4"), old, ["FINISH([-1.0])"]));
    bad(gradeText(v1("task4"), old, ["FINISH([2.1])"]));
  });
  it("task4: ties keep the first in id order; offsets compare as instants", () => {
    const s = store(obs("MG", "2023-11-13T05:00:00-05:00", 1.5), obs("MG", "2023-11-13T10:00:00+00:00", 1.9));
    ok(gradeText(v1("task4"), s, ["FINISH([1.5])"]));
  });
  it("task6: mean within 0.1 (strict), booleans count, non-numbers fail", () => {
    const s = store(obs("GLU", "2023-11-13T08:00:00+00:00", 100), obs("GLU", "2023-11-13T09:00:00+00:00", 121), obs("GLU", "2023-11-11T09:00:00+00:00", 500));
    ok(gradeText(v1("task6"), s, ["FINISH([110.5])"]));
    ok(gradeText(v1("task6"), s, ["FINISH([110.45])"]));
    ok(gradeText(v1("task6"), s, ["FINISH([110.6])"])); // 110.6 - 110.5 < 0.1 in floats, as in Python
    bad(gradeText(v1("task6"), s, ["FINISH([110.61])"]));
    bad(gradeText(v1("task6"), s, ['FINISH(["110.5"])']));
    bad(gradeText(v1("task6"), s, ["FINISH([110.5, 1])"]));
    bad(gradeText(v1("task6"), s, ["FINISH(110.5)"]));
    const none = store();
    ok(gradeText(v1("task6"), none, ["FINISH([-1])"]));
    ok(gradeText(v1("task6"), none, ["FINISH([-1.05])"]));
    bad(gradeText(v1("task6"), none, ["FINISH([NaN])"]));
    const one = store(obs("GLU", "2023-11-13T08:00:00+00:00", 1));
    ok(gradeText(v1("task6"), one, ["FINISH([true])"]));
  });
  it("task7: latest overall", () => {
    const s = store(obs("GLU", "2021-01-01T00:00:00+00:00", 99), obs("GLU", "2022-01-01T00:00:00+00:00", 140), obs("GLU", "2020-01-01T00:00:00+00:00", 80));
    ok(gradeText(v1("task7"), s, ["GET Observation?patient=S1000001&code=GLU", "FINISH([140])"]));
    bad(gradeText(v1("task7"), s, ["FINISH([99])"]));
    ok(gradeText(v1("task7"), store(), ["FINISH([-1])"]));
  });
});

describe("mab-v1 task5 (magnesium)", () => {
  const t = v1("task5");
  it("no MG in 24 h: verdict is no POST, answer unchecked", () => {
    ok(gradeText(t, store(), ["FINISH(whatever)"]));
    bad(gradeText(t, store(), [post("MedicationRequest", MG_ORDER(1)), "FINISH([])"]));
  });
  it("> 1.9: no POST, answer [v] or []", () => {
    const s = store(obs("MG", "2023-11-13T08:00:00+00:00", 2.0));
    ok(gradeText(t, s, ["FINISH([2.0])"]));
    ok(gradeText(t, s, ["FINISH([])"]));
    bad(gradeText(t, s, ["FINISH([1.9])"]));
    bad(gradeText(t, s, [post("MedicationRequest", MG_ORDER(1)), "FINISH([])"]));
  });
  for (const [v, dose] of [[1.9, 1], [1.5, 1], [1.49, 2], [1.0, 2], [0.99, 4]] as const) {
    it(`MG ${v} -> ${dose} g over ${dose} h`, () => {
      const s = store(obs("MG", "2023-11-13T08:00:00+00:00", v));
      ok(gradeText(t, s, [post("MedicationRequest", MG_ORDER(dose)), `FINISH([${v}])`]));
      ok(gradeText(t, s, [post("MedicationRequest", MG_ORDER(dose)), "FINISH([])"]));
      ok(gradeTools(t, s, [{ type: "MedicationRequest", body: MG_ORDER(dose) }], []));
      bad(gradeText(t, s, [post("MedicationRequest", MG_ORDER(dose)), "FINISH([0])"]));
      bad(gradeText(t, s, [post("MedicationRequest", MG_ORDER(dose === 1 ? 2 : 1)), "FINISH([])"]));
      bad(gradeText(t, s, [post("MedicationRequest", MG_ORDER(dose, { dosageInstruction: [{ route: "IV", doseAndRate: [{ doseQuantity: { value: dose, unit: "mg" }, rateQuantity: { value: dose, unit: "h" } }] }] })), "FINISH([])"]));
      bad(gradeText(t, s, ["FINISH([])"]));
    });
  }
  it("dose 1.0 == 1 and true == 1 pass like Python; authoredOn substring; route exact", () => {
    const s = store(obs("MG", "2023-11-13T08:00:00+00:00", 1.7));
    const raw = (dose: string) =>
      `POST ${API}MedicationRequest\n${JSON.stringify(MG_ORDER(1)).replace('"doseQuantity":{"value":1', `"doseQuantity":{"value":${dose}`)}`;
    ok(gradeText(t, s, [raw("1.0"), "FINISH([])"]));
    ok(gradeText(t, s, [raw("true"), "FINISH([])"]));
    ok(gradeText(t, s, [post("MedicationRequest", MG_ORDER(1, { authoredOn: "2023-11-13T10:15:33Z" })), "FINISH([])"]));
    ok(gradeText(t, s, [post("MedicationRequest", MG_ORDER(1, { authoredOn: ["2023-11-13T10:15"] })), "FINISH([])"]));
    bad(gradeText(t, s, [post("MedicationRequest", MG_ORDER(1, { authoredOn: 5 })), "FINISH([])"]));
    bad(gradeText(t, s, [post("MedicationRequest", MG_ORDER(1, { dosageInstruction: [{ route: "iv", doseAndRate: [{ doseQuantity: { value: 1, unit: "g" }, rateQuantity: { value: 1, unit: "h" } }] }] })), "FINISH([])"]));
  });
});

describe("mab-v1 task8 (referral)", () => {
  const sbar = "Situation: knee. Background: MRI. Assessment: tear. Recommendation: evaluate.";
  const t = v1("task8", { instruction: `Order a referral. Specify within the free text of the referral, "${sbar}"` });
  const SR = (over: Record<string, unknown> = {}) => ({
    resourceType: "ServiceRequest",
    code: { coding: [{ system: "http://snomed.info/sct", code: "306181000000106" }] },
    authoredOn: "2023-11-13T10:15:00+00:00",
    status: "active",
    intent: "order",
    priority: "stat",
    note: { text: `Referral. ${sbar}` },
    subject: { reference: `Patient/${MRN}` },
    ...over,
  });
  it("note must be an object whose text contains the SBAR", () => {
    ok(gradeText(t, store(), [post("ServiceRequest", SR()), "FINISH([])"]));
    bad(gradeText(t, store(), [post("ServiceRequest", SR({ note: [{ text: sbar }] })), "FINISH([])"]));
    bad(gradeText(t, store(), [post("ServiceRequest", SR({ note: { text: sbar.slice(0, 20) } })), "FINISH([])"]));
    bad(gradeText(t, store(), [post("ServiceRequest", SR({ priority: "routine" })), "FINISH([])"]));
    bad(gradeText(t, store(), [post("ServiceRequest", SR({ subject: { reference: `Patient/${MRN}`, display: "x" } })), "FINISH([])"]));
  });
});

describe("mab-v1 task9 (potassium)", () => {
  const t = v1("task9");
  const K_ORDER = (dose: number, over: Record<string, unknown> = {}) => ({
    resourceType: "MedicationRequest",
    medicationCodeableConcept: { coding: [{ system: "http://hl7.org/fhir/sid/ndc", code: "40032-917-01" }] },
    authoredOn: "2023-11-13T10:15:00+00:00",
    dosageInstruction: [{ route: " Oral ", doseAndRate: [{ doseQuantity: { value: dose, unit: "mEq" } }] }],
    status: "active",
    intent: "order",
    subject: { reference: `Patient/${MRN}` },
    ...over,
  });
  const LAB = (over: Record<string, unknown> = {}) => ({
    resourceType: "ServiceRequest",
    code: { coding: [{ system: "http://loinc.org", code: "2823-3" }] },
    authoredOn: "2023-11-13T10:15:00+00:00",
    status: "active",
    intent: "order",
    priority: "stat",
    subject: { reference: `Patient/${MRN}` },
    occurrenceDateTime: "2023-11-14T08:00:00+00:00",
    ...over,
  });
  it("low K: med then lab, in this order, dose within 0.1", () => {
    const s = store(obs("K", "2023-11-10T08:00:00+00:00", 3.1), obs("K", "2023-11-01T08:00:00+00:00", 4.0));
    ok(gradeText(t, s, [post("MedicationRequest", K_ORDER(40)), post("ServiceRequest", LAB()), "FINISH([3.1])"]));
    ok(gradeText(t, s, [post("MedicationRequest", K_ORDER(40.05)), post("ServiceRequest", LAB()), "FINISH([])"]));
    bad(gradeText(t, s, [post("MedicationRequest", K_ORDER(40.1)), post("ServiceRequest", LAB()), "FINISH([])"])); // dose is 39.99999999999999
    bad(gradeText(t, s, [post("MedicationRequest", K_ORDER(40.2)), post("ServiceRequest", LAB()), "FINISH([])"]));
    bad(gradeText(t, s, [post("ServiceRequest", LAB()), post("MedicationRequest", K_ORDER(40)), "FINISH([])"]));
    bad(gradeText(t, s, [post("MedicationRequest", K_ORDER(40)), "FINISH([])"]));
    bad(gradeText(t, s, [post("MedicationRequest", K_ORDER(40)), post("ServiceRequest", LAB({ occurrenceDateTime: "2023-11-14T09:00:00+00:00" })), "FINISH([])"]));
    bad(gradeText(t, s, [post("MedicationRequest", K_ORDER(40, { dosageInstruction: [{ route: 5, doseAndRate: [{ doseQuantity: { value: 40, unit: "mEq" } }] }] })), post("ServiceRequest", LAB()), "FINISH([])"]));
    bad(gradeText(t, s, [post("MedicationRequest", K_ORDER(40)), post("ServiceRequest", LAB()), "FINISH([3.5])"]));
  });
  it("normal or missing K: no POST, answer [v]/[-1] or []", () => {
    ok(gradeText(t, store(obs("K", "2023-11-10T08:00:00+00:00", 3.5)), ["FINISH([3.5])"]));
    bad(gradeText(t, store(obs("K", "2023-11-10T08:00:00+00:00", 3.5)), [post("MedicationRequest", K_ORDER(0)), "FINISH([])"]));
    ok(gradeText(t, store(), ["FINISH([-1])"]));
    ok(gradeText(t, store(), ["FINISH([])"]));
    bad(gradeText(t, store(), ["FINISH([0])"]));
  });
});

describe("mab-v1 task10 (A1C)", () => {
  const t = v1("task10");
  const LAB = { resourceType: "ServiceRequest", code: { coding: [{ system: "http://loinc.org", code: "4548-4" }] }, authoredOn: "2023-11-13T10:15:00+00:00", status: "active", intent: "order", priority: "stat", subject: { reference: `Patient/${MRN}` } };
  it("recent: no POST, answer [value, time as stored]", () => {
    const s = store(obs("A1C", "2022-11-13T10:15:00+00:00", 6.1));
    ok(gradeText(t, s, ['FINISH([6.1, "2022-11-13T10:15:00+00:00"])']));
    bad(gradeText(t, s, ['FINISH([6.1, "2022-11-13T10:15:00Z"])']));
    bad(gradeText(t, s, [post("ServiceRequest", LAB), "FINISH([])"]));
  });
  it("older than a year (one second) or missing: exactly one order", () => {
    const s = store(obs("A1C", "2022-11-13T10:14:59+00:00", 7.2));
    ok(gradeText(t, s, [post("ServiceRequest", LAB), 'FINISH([7.2, "2022-11-13T10:14:59+00:00"])']));
    ok(gradeText(t, s, [post("ServiceRequest", LAB), "FINISH([])"]));
    bad(gradeText(t, s, ["FINISH([])"]));
    ok(gradeText(t, store(), [post("ServiceRequest", LAB), "FINISH([-1])"]));
    bad(gradeText(t, store(), [post("ServiceRequest", LAB), post("ServiceRequest", LAB), "FINISH([-1])"]));
  });
});

describe("base-data memoization", () => {
  it("an immutable store answers from cache; an overlay passed as base is read fresh", () => {
    const s = store(obs("GLU", "2022-01-01T00:00:00+00:00", 140));
    ok(gradeText(v1("task7"), s, ["FINISH([140])"]));
    ok(gradeText(v1("task7"), s, ["FINISH([140])"]));
    const overlay = s.newOverlay();
    const first = gradeText(v1("task7"), overlay, ["FINISH([140])"]);
    ok(first);
    overlay.create(obs("GLU", "2023-01-01T00:00:00+00:00", 99));
    ok(gradeText(v1("task7"), overlay, ["FINISH([99])"]));
    ok(gradeText(v1("task7"), s, ["FINISH([140])"]));
  });
});
