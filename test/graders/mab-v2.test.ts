import { describe, expect, it } from "vitest";
import { facts } from "../../env/tasks/index.ts";
import { API, condition, gradeText, gradeTools, medReq, MRN, obs, post, proc, serviceReq, store, task } from "./helpers.ts";

const v2 = (type: string, context = "") => task({ suite: "mab-v2", type, context });
const ok = (r: { reward: number }) => expect(r.reward).toBe(1);
const bad = (r: { reward: number; checks: { ok: boolean }[] }) => {
  expect(r.reward).toBe(0);
  expect(r.checks.some((c) => !c.ok)).toBe(true);
};
const SUBJ = { reference: `Patient/${MRN}` };
const order = (type: string, extra: Record<string, unknown>) => ({ resourceType: type, status: "active", intent: "order", subject: SUBJ, ...extra });

describe("mab-v2 task1 (CT follow-up)", () => {
  const CT = order("ServiceRequest", { code: { coding: [{ code: "74177" }] }, reasonCode: [{ text: "Renal mass follow-up" }] });
  it("recent CT: no POST at all", () => {
    const s = store(proc("IMGCT0491", "2023-01-01T00:00:00+00:00"));
    ok(gradeText(v2("task1"), s, ["FINISH([])"]));
    bad(gradeText(v2("task1"), s, [post("ServiceRequest", CT), "FINISH([])"]));
  });
  it("old or missing CT: exactly one SR with 74177 and the indication (reasonCode, note dict or list)", () => {
    const s = store(proc("IMGIL0001", "2022-11-07T22:46:00+00:00"));
    ok(gradeText(v2("task1"), s, [post("ServiceRequest", CT), "FINISH([])"]));
    ok(gradeText(v2("task1"), store(), [post("ServiceRequest", { ...CT, reasonCode: undefined, note: { text: "RENAL MASS FOLLOW-UP" } }), "FINISH([])"]));
    ok(gradeText(v2("task1"), store(), [post("ServiceRequest", { ...CT, reasonCode: undefined, note: [{ text: "x" }, { text: "renal mass follow-up" }] }), "FINISH([])"]));
    ok(gradeTools(v2("task1"), store(), [{ type: "ServiceRequest", body: CT }], []));
    bad(gradeText(v2("task1"), s, [post("ServiceRequest", { ...CT, status: "ACTIVE ", reasonCode: [{ text: "renal mass follow-up" }] }), "FINISH([])"]));
    bad(gradeText(v2("task1"), s, [post("ServiceRequest", { ...CT, reasonCode: [{ text: "follow-up" }] }), "FINISH([])"]));
    bad(gradeText(v2("task1"), s, [post("ServiceRequest", { ...CT, reasonCode: "Renal mass follow-up" }), "FINISH([])"]));
    bad(gradeText(v2("task1"), s, [post("ServiceRequest", CT), post("ServiceRequest", CT), "FINISH([])"]));
    bad(gradeText(v2("task1"), s, [post("ServiceRequest", CT), "FINISH(ordered via POST)"]));
  });
  it("status compares case-insensitively", () => {
    ok(gradeText(v2("task1"), store(), [post("ServiceRequest", { ...CT, status: "Active", intent: "ORDER" }), "FINISH([])"]));
  });
});

describe("mab-v2 task2 (DVT prophylaxis)", () => {
  const HEP = order("MedicationRequest", { medicationCodeableConcept: { text: "heparin 5000 units SC q8h" } });
  const STOP = { resourceType: "MedicationRequest", status: "stopped", intent: "order", subject: SUBJ, medicationCodeableConcept: { text: "enoxaparin" } };
  it("one heparin 5,000: no accepted posts", () => {
    const s = store(medReq("heparin 5,000 unit/mL injection"));
    ok(gradeText(v2("task2"), s, ["FINISH([])"]));
    bad(gradeText(v2("task2"), s, [post("MedicationRequest", HEP), "FINISH([])"]));
    ok(gradeText(v2("task2"), s, [`POST ${API}MedicationRequest\n{not json`, "FINISH([])"])); // not accepted
  });
  it("none: create heparin 5000 (blob), every post with the subject", () => {
    const s = store(medReq("heparin 5,000 unit/mL injection", "stopped"));
    ok(gradeText(v2("task2"), s, [post("MedicationRequest", HEP), "FINISH([])"]));
    bad(gradeText(v2("task2"), s, [post("MedicationRequest", { ...HEP, medicationCodeableConcept: { text: "heparin 5,000 units" } }), "FINISH([])"]));
    bad(gradeText(v2("task2"), s, [post("MedicationRequest", { ...HEP, subject: { reference: "Patient/S0000001" } }), "FINISH([])"]));
    bad(gradeText(v2("task2"), s, [`POST ${API}MedicationRequest\n[1, 2]`, post("MedicationRequest", HEP), "FINISH([])"]));
  });
  it("duplicates: a stop is required", () => {
    const s = store(medReq("heparin 5000 unit/mL injection"), medReq("enoxaparin 40 mg/0.4 mL"));
    ok(gradeText(v2("task2"), s, [post("MedicationRequest", STOP), "FINISH([])"]));
    bad(gradeText(v2("task2"), s, ["FINISH([])"]));
    const both = store(medReq("apixaban 5 mg tablet"), medReq("warfarin 5 mg tablet"));
    bad(gradeText(v2("task2"), both, [post("MedicationRequest", STOP), "FINISH([])"]));
    ok(gradeText(v2("task2"), both, [post("MedicationRequest", STOP), post("MedicationRequest", HEP), "FINISH([])"]));
  });
});

describe("mab-v2 task3 (heart-rate averages)", () => {
  const ctx = "The code for heart rate is 'HEARTRATE'. It's 2023-11-07T22:47:00+00:00 now";
  const s = store(obs("HEARTRATE", "2023-11-07T22:00:00+00:00", 80), obs("HEARTRATE", "2023-11-07T16:47:00+00:00", 90), obs("HEARTRATE", "2023-11-07T12:00:00+00:00", 70), obs("HEARTRATE", "2023-11-07T10:46:59+00:00", 10));
  it("[6 h, 12 h] within 0.1 via literal_eval or JSON; windows inclusive", () => {
    ok(gradeText(v2("task3", ctx), s, ["FINISH([85, 80])"]));
    ok(gradeText(v2("task3", ctx), s, ["FINISH((85.05, 80.0))"]));
    ok(gradeText(v2("task3", ctx), s, ["FINISH(85, 80)"]));
    ok(gradeText(v2("task3", ctx), s, ["FINISH(['85', ' 80 '])"]));
    bad(gradeText(v2("task3", ctx), s, ["FINISH([80, 85])"]));
    bad(gradeText(v2("task3", ctx), s, ["FINISH([85])"]));
    bad(gradeText(v2("task3", ctx), s, ["FINISH(85 and 80)"]));
    bad(gradeText(v2("task3", ctx), s, ["FINISH([85, 80]) no POST"]));
  });
  it("none matches -1, \"-1\", null only", () => {
    const later = "It's 2023-11-09T00:00:00+00:00 now";
    ok(gradeText(v2("task3", later), s, ["FINISH([-1, -1])"]));
    ok(gradeText(v2("task3", later), s, ['FINISH([null, "-1"])']));
    bad(gradeText(v2("task3", later), s, ["FINISH([null, '-1'])"])); // neither a Python literal nor JSON
    ok(gradeText(v2("task3", later), s, ["FINISH([None, -1.0])"]));
    bad(gradeText(v2("task3", later), s, ["FINISH([0, 0])"]));
    bad(gradeText(v2("task3", ctx), s, ["FINISH([-1, 80])"]));
  });
});

describe("mab-v2 task4 (catheter)", () => {
  const ctx = "It's 2023-11-11T09:00:00+00:00 now.";
  const RM = order("ServiceRequest", { code: { text: "Remove urinary catheter NUR1373" } });
  it("> 48 h without removal order: some SR mentioning NUR1373", () => {
    const s = store(proc("NUR1373", "2023-11-09T08:59:00+00:00"));
    ok(gradeText(v2("task4", ctx), s, [post("ServiceRequest", RM), "FINISH([])"]));
    ok(gradeText(v2("task4", ctx), s, [post("ServiceRequest", RM), `POST ${API}X\n[1]`, "FINISH([])"]));
    bad(gradeText(v2("task4", ctx), s, [`POST ${API}X\n[1]`, post("ServiceRequest", RM), "FINISH([])"]));
    bad(gradeText(v2("task4", ctx), s, [post("ServiceRequest", { ...RM, code: { text: "remove catheter" } }), "FINISH([])"]));
  });
  it("exactly 48 h, or an active removal order: silent", () => {
    ok(gradeText(v2("task4", ctx), store(proc("NUR1373", "2023-11-09T09:00:00+00:00")), ["FINISH([])"]));
    const ordered = store(proc("NUR1373", "2023-11-01T09:00:00+00:00"), serviceReq("NUR1373"));
    ok(gradeText(v2("task4", ctx), ordered, ["FINISH([])"]));
    bad(gradeText(v2("task4", ctx), ordered, [post("ServiceRequest", RM), "FINISH([])"]));
  });
});

describe("mab-v2 task5 (renal mass)", () => {
  const CT = order("ServiceRequest", { code: { coding: [{ code: "74177" }] } });
  const IR = order("ServiceRequest", { code: { coding: [{ code: "CON417" }] } });
  it("no C64.2: no POST at all", () => {
    ok(gradeText(v2("task5"), store(), ["FINISH([])"]));
    bad(gradeText(v2("task5"), store(), [post("ServiceRequest", CT), "FINISH([])"]));
  });
  it("C64.2 with an old CT: both orders (case-sensitive codes)", () => {
    const s = store(condition("C64.2"), proc("74177", "2023-08-01T00:00:00+00:00"));
    ok(gradeText(v2("task5"), s, [post("ServiceRequest", CT), post("ServiceRequest", IR), "FINISH([])"]));
    bad(gradeText(v2("task5"), s, [post("ServiceRequest", CT), "FINISH([])"]));
    bad(gradeText(v2("task5"), s, [post("ServiceRequest", CT), post("ServiceRequest", order("ServiceRequest", { code: { text: "con417" } })), "FINISH([])"]));
    bad(gradeText(v2("task5"), s, [post("ServiceRequest", CT), post("ServiceRequest", { ...IR, resourceType: ["ServiceRequest"] }), "FINISH([])"]));
  });
  it("C64.2 with a recent CT: no accepted posts", () => {
    const s = store(condition("C64.2"), proc("IMGCT0491", "2023-10-01T00:00:00+00:00"));
    ok(gradeText(v2("task5"), s, ["FINISH([])"]));
    bad(gradeText(v2("task5"), s, [post("ServiceRequest", CT), "FINISH([])"]));
  });
});

describe("mab-v2 task6 (thyroid)", () => {
  const MED = order("MedicationRequest", { medicationCodeableConcept: { text: "Levothyroxine 25 mcg PO daily" } });
  const LAB = (t: string) => order("ServiceRequest", { code: { text: t } });
  it("branch A: med + two labs", () => {
    const s = store(obs("TSH", "2023-06-01T00:00:00+00:00", 12), obs("TSH", "2023-07-01T00:00:00+00:00", 11));
    ok(gradeText(v2("task6"), s, [post("MedicationRequest", MED), post("ServiceRequest", LAB("TSH")), post("ServiceRequest", LAB("Free T4 (FT4)")), "FINISH([])"]));
    bad(gradeText(v2("task6"), s, [post("MedicationRequest", MED), post("ServiceRequest", LAB("TSH")), "FINISH([])"]));
    const short = store(obs("TSH", "2023-06-01T00:00:01+00:00", 12), obs("TSH", "2023-07-01T00:00:00+00:00", 11));
    ok(gradeText(v2("task6"), short, ["FINISH([])"])); // 29.99 days apart: no branch
  });
  it("branch B: labs and no medication", () => {
    const s = store(obs("TSH", "2023-06-01T00:00:00+00:00", 7), obs("FT4", "2023-06-01T00:00:00+00:00", 1.2));
    ok(gradeText(v2("task6"), s, [post("ServiceRequest", LAB("tsh")), post("ServiceRequest", LAB("ft4")), "FINISH([])"]));
    bad(gradeText(v2("task6"), s, [post("MedicationRequest", MED), post("ServiceRequest", LAB("tsh")), post("ServiceRequest", LAB("ft4")), "FINISH([])"]));
  });
});

describe("mab-v2 task7 (QTc)", () => {
  const ECG = order("ServiceRequest", { code: { text: "12-lead ECG" } });
  const STOP = { resourceType: "MedicationRequest", status: "stopped", intent: "order", subject: SUBJ, medicationCodeableConcept: { text: "ondansetron 4 mg" } };
  it("prolonged: ECG + stop, every post SR/MR with subject", () => {
    const s = store(obs("QTCINTERVAL", "2023-11-01T00:00:00+00:00", 520));
    ok(gradeText(v2("task7"), s, [post("ServiceRequest", ECG), post("MedicationRequest", STOP), "FINISH([])"]));
    bad(gradeText(v2("task7"), s, [post("ServiceRequest", ECG), "FINISH([])"]));
    bad(gradeText(v2("task7"), s, [post("ServiceRequest", ECG), post("MedicationRequest", STOP), post("Observation", { resourceType: "Observation", subject: SUBJ }), "FINISH([])"]));
  });
  it("not prolonged or absent: silent", () => {
    ok(gradeText(v2("task7"), store(obs("QTCINTERVAL", "2023-11-01T00:00:00+00:00", 500)), ["FINISH([])"]));
    ok(gradeText(v2("task7"), store(), ["FINISH([])"]));
    bad(gradeText(v2("task7"), store(), ["FINISH(no POST)"]));
  });
});

describe("mab-v2 tasks 8-10 (single orders)", () => {
  it("task8 naloxone", () => {
    const s = store(medReq("oxycodone 5 mg tablet"));
    const N = order("MedicationRequest", { medicationCodeableConcept: { text: "Naloxone 4 mg nasal spray" } });
    ok(gradeText(v2("task8"), s, [post("MedicationRequest", N), "FINISH([])"]));
    bad(gradeText(v2("task8"), s, [post("MedicationRequest", N), post("MedicationRequest", N), "FINISH([])"]));
    ok(gradeText(v2("task8"), store(medReq("oxycodone 5 mg tablet"), medReq("NARCAN 4 mg")), ["FINISH([])"]));
  });
  it("task9 flu: code 90686 or flu wording; > 365 days", () => {
    const ctx = "It's 2024-01-09T00:00:00+00:00 now.";
    const s = store(proc("90686", "2023-01-09T00:00:00+00:00"));
    ok(gradeText(v2("task9", ctx), s, ["FINISH([])"]));
    const old = store(proc("90686", "2023-01-08T23:59:00+00:00"));
    ok(gradeText(v2("task9", ctx), old, [post("ServiceRequest", order("ServiceRequest", { code: { coding: [{ code: "90686" }] } })), "FINISH([])"]));
    ok(gradeText(v2("task9", ctx), old, [post("MedicationRequest", order("MedicationRequest", { medicationCodeableConcept: { text: "Influenza vaccine" } })), "FINISH([])"]));
    bad(gradeText(v2("task9", ctx), old, [post("ServiceRequest", order("ServiceRequest", { code: "coding 90686" })), "FINISH([])"]));
  });
  it("task10 covid: dates from procedures and completed COVID-19 VAC orders, calendar days", () => {
    const ctx = "It's 2023-11-07T12:00:00+00:00 now.";
    const B = order("MedicationRequest", { medicationCodeableConcept: { text: "COVID booster" } });
    const recent = store(medReq("COVID-19 VACCINE mRNA", "completed", MRN, "2022-11-07T23:00:00+00:00"));
    ok(gradeText(v2("task10", ctx), recent, ["FINISH([])"]));
    const old = store(proc("COVIDVACCINE", "2022-11-06T23:00:00+00:00"));
    ok(gradeText(v2("task10", ctx), old, [post("MedicationRequest", B), "FINISH([])"]));
    bad(gradeText(v2("task10", ctx), old, [post("MedicationRequest", { ...B, medicationCodeableConcept: { text: "booster" }, note: "covid" }), "FINISH([])"]));
  });
});

describe("mab-v2 relaxed variants", () => {
  const ctx = "It's 2023-11-13T10:15:00+00:00 now.";
  it("v2_task5: < 2.0 needs a magnesium order; otherwise no accepted POST", () => {
    const low = store(obs("MG", "2023-11-13T08:00:00+00:00", 1.95));
    ok(gradeText(v2("v2_task5", ctx), low, [post("MedicationRequest", order("MedicationRequest", { medicationCodeableConcept: { text: "magnesium sulfate" } })), "FINISH([])"]));
    bad(gradeText(v2("v2_task5", ctx), low, ["FINISH([])"]));
    ok(gradeText(v2("v2_task5", ctx), store(obs("MG", "2023-11-13T08:00:00+00:00", 2.0)), ["FINISH([2.0])"]));
  });
  it("v2_task9: no K data is false", () => {
    bad(gradeText(v2("v2_task9", ctx), store(), ["FINISH([])"]));
    ok(gradeText(v2("v2_task9", ctx), store(obs("K", "2023-11-13T08:00:00+00:00", 3.2)), [post("MedicationRequest", order("MedicationRequest", { medicationCodeableConcept: { coding: [{ code: "40032-917-01" }] } })), "FINISH([])"]));
  });
  it("v2_task10: old A1C needs an A1C ServiceRequest", () => {
    const s = store(obs("A1C", "2022-01-01T00:00:00+00:00", 7));
    ok(gradeText(v2("v2_task10", ctx), s, [post("ServiceRequest", order("ServiceRequest", { code: { text: "HbA1c" } })), "FINISH([])"]));
    bad(gradeText(v2("v2_task10", ctx), s, ["FINISH([])"]));
  });
});

describe("base facts are kept per immutable store", () => {
  const clock = "2023-11-07T22:47:00+00:00";
  const s = store(obs("HEARTRATE", "2023-11-07T22:00:00+00:00", 80), obs("HEARTRATE", "2023-11-07T12:00:00+00:00", 70));
  it("the same arguments share one result on a base store; another clock or an overlay is computed afresh", () => {
    const first = facts.v2.heartRateAverages(s, MRN, clock);
    expect(first).toEqual({ avg6: 80, avg12: 75, n6: 1, n12: 2 });
    expect(facts.v2.heartRateAverages(s, MRN, clock)).toBe(first);
    expect(facts.v2.heartRateAverages(s, MRN, "2023-11-08T22:47:00+00:00")).toEqual({ avg6: null, avg12: null, n6: 0, n12: 0 });
    const overlay = s.newOverlay();
    const onOverlay = facts.v2.heartRateAverages(overlay, MRN, clock);
    expect(onOverlay).toEqual(first);
    expect(facts.v2.heartRateAverages(overlay, MRN, clock)).not.toBe(onOverlay);
  });
  it("an overlay's writes are seen, and the base store's answer stays its own", () => {
    const latest = () => facts.v1.latestObservation(s, MRN, "HEARTRATE")?.value;
    expect(latest()).toBe(80n);
    const overlay = s.newOverlay();
    overlay.create(obs("HEARTRATE", "2023-11-07T22:30:00+00:00", 110));
    expect(facts.v1.latestObservation(overlay, MRN, "HEARTRATE")?.value).toBe(110n);
    expect(latest()).toBe(80n);
  });
  it("a datetime argument is part of the key", () => {
    const since = (iso: string) => facts.v1.latestObservation(s, MRN, "HEARTRATE", facts.v1.hoursBefore(iso, 1));
    expect(since(clock)?.value).toBe(80n);
    expect(since("2023-11-07T23:30:00+00:00")).toBeUndefined();
    expect(since("2023-11-07T12:30:00+00:00")?.value).toBe(80n);
    expect(facts.v1.observationsSince(s, MRN, "HEARTRATE", facts.v1.hoursBefore(clock, 1))).toEqual([80n]);
    expect(facts.v1.observationsSince(s, MRN, "HEARTRATE", facts.v1.hoursBefore(clock, 11))).toEqual([80n, 70n]);
  });
});
