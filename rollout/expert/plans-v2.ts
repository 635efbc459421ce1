// MedAgentBench V2 new_patient_tasks (tasks 1-10) and the relaxed v2 variants of v1 tasks 5, 9, 10.
import type { FhirResource } from "../../env/fhir/index.ts";
import { byId, DAY, dateOnly, effective, HOUR, instant, latest, medicationText, patientRef, performedText, value } from "./clinical.ts";
import { taskMrn, taskNow } from "./facts.ts";
import { mean, type Plan, type PlanContext } from "./plan.ts";
import { a1cOrder, labs, magnesiumReplacement, potassiumReplacement } from "./plans-v1.ts";

const MAX = "5000";
const CPT = "http://www.ama-assn.org/go/cpt";
const LOINC = "http://loinc.org";

const now = (ctx: PlanContext) => instant(taskNow(ctx.task));
const mrn = (ctx: PlanContext) => taskMrn(ctx.task);

function procedures(ctx: PlanContext, codes: string[]): FhirResource[] {
  return byId(ctx.search("Procedure", [["patient", mrn(ctx)], ["code", codes.join(",")], ["_count", MAX]]));
}
const performed = (r: FhirResource) => instant(performedText(r));

function activeMedications(ctx: PlanContext): FhirResource[] {
  return byId(ctx.search("MedicationRequest", [["patient", mrn(ctx)], ["status", "active"], ["_count", MAX]]));
}

/** Posts a new active order for the task's patient, authored at the task's time. */
function postOrder(ctx: PlanContext, resourceType: "ServiceRequest" | "MedicationRequest", fields: Record<string, unknown>): void {
  ctx.post(resourceType, {
    resourceType,
    status: "active",
    intent: "order",
    ...(resourceType === "ServiceRequest" ? { priority: "routine" } : {}),
    ...fields,
    authoredOn: taskNow(ctx.task),
    subject: patientRef(mrn(ctx)),
  });
}

/** Posts a medication order with one dosage instruction: its text, schedule (timing, or as needed), route and dose. */
function postMedication(ctx: PlanContext, medication: string, d: { text: string; route: string; dose: { value: number; unit: string } } & Record<string, unknown>): void {
  const { text, route, dose, ...schedule } = d;
  postOrder(ctx, "MedicationRequest", {
    medicationCodeableConcept: { text: medication },
    dosageInstruction: [{ text, ...schedule, route: { text: route }, doseAndRate: [{ doseQuantity: dose }] }],
  });
}

/** A copy of an existing medication order with a stopping status (the harness records POSTs only). */
function discontinue(ctx: PlanContext, existing: FhirResource): FhirResource {
  return {
    resourceType: "MedicationRequest",
    status: "stopped",
    intent: "order",
    medicationCodeableConcept: existing.medicationCodeableConcept,
    dosageInstruction: Array.isArray(existing.dosageInstruction) ? existing.dosageInstruction : [],
    authoredOn: taskNow(ctx.task),
    subject: patientRef(mrn(ctx)),
    note: [{ text: `Discontinue MedicationRequest/${existing.id}` }],
  };
}

const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "+00:00");

const ctFollowUp: Plan = (ctx) => {
  const last = latest(procedures(ctx, ["IMGCT0491", "IMGIL0001"]), performed);
  if (!last || performed(last) < now(ctx) - 365 * DAY) {
    postOrder(ctx, "ServiceRequest", {
      code: { coding: [{ system: CPT, code: "74177", display: "CT abdomen and pelvis with IV contrast" }], text: "CT Abdomen with IV contrast" },
      reasonCode: [{ text: "Renal mass follow-up" }],
      note: { text: "Renal mass follow-up" },
    });
  }
  return ctx.finish(last ? [performedText(last)] : [-1]);
};

const ANTICOAGULANTS = ["heparin", "enoxaparin", "dalteparin", "fondaparinux", "apixaban", "rivaroxaban", "dabigatran", "warfarin"];
const isHeparin5k = (text: string) => text.includes("heparin") && (text.includes("5,000") || text.includes("5000"));

const dvtProphylaxis: Plan = (ctx) => {
  const anticoagulants = activeMedications(ctx).filter((m) => ANTICOAGULANTS.some((a) => medicationText(m).includes(a)));
  const heparin5k = anticoagulants.filter((m) => isHeparin5k(medicationText(m)));
  const needCreate = heparin5k.length === 0;
  if (needCreate) {
    postMedication(ctx, "heparin 5000 units SC q8h prophylaxis", {
      text: "heparin 5000 units subcutaneous every 8 hours",
      timing: { repeat: { frequency: 1, period: 8, periodUnit: "h" } },
      route: "subcutaneous",
      dose: { value: 5000, unit: "U" },
    });
  }
  // Keep the newest heparin 5,000 order (or the one just created); discontinue every other anticoagulant.
  const keep = latest(heparin5k, (m) => instant(m.authoredOn));
  const duplicates = anticoagulants.filter((m) => m !== keep);
  for (const dup of duplicates.slice(0, Math.max(1, ctx.budget))) ctx.post("MedicationRequest", discontinue(ctx, dup));
  return ctx.finish([]);
};

/** A FHIR dateTime search value for epoch ms, to the second in UTC (`2023-11-12T22:15:00Z`). */
const searchInstant = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

const heartRate: Plan = (ctx) => {
  const t0 = now(ctx);
  // Only the 12 hours the answer needs, as a clinician would ask: a patient's whole heart-rate history
  // is thousands of readings, a reply of several MB (~1M tokens) in every later turn's context. The
  // server's `ge` returns a superset of the window; the bounds are applied exactly below.
  const window: [string, string][] = Number.isFinite(t0) ? [["date", `ge${searchInstant(t0 - 12 * HOUR)}`]] : [];
  const rows = labs(ctx, "HEARTRATE", window)
    .map((o) => ({ t: effective(o), v: value(o) }))
    .filter((r): r is { t: number; v: number } => r.v !== undefined && r.t <= t0);
  const avg12 = mean(ctx, rows.filter((r) => r.t >= t0 - 12 * HOUR).map((r) => r.v));
  const avg6 = mean(ctx, rows.filter((r) => r.t >= t0 - 6 * HOUR).map((r) => r.v));
  return ctx.finish([avg6 ?? -1, avg12 ?? -1]);
};

const catheter: Plan = (ctx) => {
  const last = latest(procedures(ctx, ["NUR1373"]), performed);
  if (last && now(ctx) - performed(last) > 48 * HOUR) {
    // Without a way to list orders (tool protocol), the clinician cannot see an existing removal order.
    const removal = !ctx.canSearch("ServiceRequest") ? [] : ctx.search("ServiceRequest", [["patient", mrn(ctx)], ["code", "NUR1373"], ["status", "active"], ["_count", MAX]]);
    if (removal.length === 0) {
      postOrder(ctx, "ServiceRequest", {
        code: { coding: [{ system: "urn:ehrgym:procedure", code: "NUR1373", display: "Remove urinary catheter" }], text: "Remove urinary catheter" },
      });
    }
  }
  return ctx.finish(last ? [performedText(last)] : [-1]);
};

const renalMass: Plan = (ctx) => {
  const conditions = ctx.search("Condition", [["patient", mrn(ctx)], ["code", "C64.2"], ["_count", MAX]]);
  if (conditions.length === 0) return ctx.finish([]);
  const last = latest(procedures(ctx, ["IMGCT0491", "IMGIL0001", "74177"]), performed);
  if (!last || now(ctx) - performed(last) > 90 * DAY) {
    postOrder(ctx, "ServiceRequest", {
      code: { coding: [{ system: CPT, code: "74177", display: "CT abdomen and pelvis with IV contrast" }], text: "CT Abdomen/Pelvis with IV contrast" },
      reasonCode: [{ text: "Oncologic follow-up of malignant neoplasm of left kidney" }],
    });
    postOrder(ctx, "ServiceRequest", {
      code: { coding: [{ system: CPT, code: "CON417", display: "Referral to Interventional Radiology" }], text: "Interventional Radiology referral" },
      note: { text: "Evaluate renal mass for biopsy or ablation." },
    });
  }
  return ctx.finish(last ? [performedText(last)] : [-1]);
};

/** Repeat TSH and free T4 at `when`. The short name is in the display too: the original's create
 *  declares no `code.text`, and its grader looks for "tsh" or "ft4" in the code. */
function orderThyroidLabs(ctx: PlanContext, when: string): void {
  for (const [code, text, display] of [
    ["3016-3", "TSH", "Thyrotropin (TSH) [Units/volume] in Serum or Plasma"],
    ["3024-7", "FT4", "Thyroxine (T4) free (FT4) [Mass/volume] in Serum or Plasma"],
  ])
    postOrder(ctx, "ServiceRequest", {
      code: { coding: [{ system: LOINC, code, display }], text: `${text} (repeat)` },
      occurrenceDateTime: when,
    });
}

/** Whole days from `a`'s to `b`'s effective time, with the calculator's datetime where both carry an offset. */
function daysBetween(ctx: PlanContext, a: FhirResource, b: FhirResource): number {
  const days = Math.floor((effective(b) - effective(a)) / DAY);
  const [from, to] = [a.effectiveDateTime, b.effectiveDateTime];
  const aware = (t: unknown): t is string => typeof t === "string" && /T\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/.test(t);
  if (!aware(from) || !aware(to)) return days;
  return ctx.calculate(`(datetime.datetime.fromisoformat('${to}') - datetime.datetime.fromisoformat('${from}')).days`, days);
}

const thyroid: Plan = (ctx) => {
  const tsh = labs(ctx, "TSH");
  const ft4 = labs(ctx, "FT4");
  const high = tsh.filter((o) => (value(o) ?? 0) > 10 && !Number.isNaN(effective(o))).sort((a, b) => effective(a) - effective(b));
  const branchA = high.length >= 2 && daysBetween(ctx, high[0]!, high.at(-1)!) >= 30;
  const lastTsh = latest(tsh, effective);
  const lastFt4 = latest(ft4, effective);
  const tshValue = lastTsh ? value(lastTsh) : undefined;
  const ft4Value = lastFt4 ? value(lastFt4) : undefined;
  if (branchA) {
    postMedication(ctx, "levothyroxine 25 mcg tablet", {
      text: "levothyroxine 25 mcg PO daily",
      timing: { repeat: { frequency: 1, period: 1, periodUnit: "d" } },
      route: "oral",
      dose: { value: 25, unit: "mcg" },
    });
    orderThyroidLabs(ctx, iso(now(ctx) + 42 * DAY));
  } else if (tshValue !== undefined && ft4Value !== undefined && tshValue >= 4.5 && tshValue <= 10 && ft4Value >= 0.8 && ft4Value <= 1.8) {
    orderThyroidLabs(ctx, iso(now(ctx) + 90 * DAY));
  }
  return ctx.finish([tshValue ?? -1, ft4Value ?? -1]);
};

const QT_DRUGS = ["ondansetron", "prochlorperazine", "haloperidol", "quetiapine", "olanzapine", "risperidone", "ziprasidone", "clozapine", "chlorpromazine"];

const qtc: Plan = (ctx) => {
  const qt = labs(ctx, "QTCINTERVAL");
  if (qt.length === 0) return ctx.finish([-1]);
  // The latest by meta.lastUpdated as written (first wins on ties).
  let pick = qt[0]!;
  for (const o of qt) if (String(o.meta?.lastUpdated ?? "") > String(pick.meta?.lastUpdated ?? "")) pick = o;
  const v = value(pick);
  if (v !== undefined && v > 500) {
    const qtDrugs = activeMedications(ctx).filter((m) => QT_DRUGS.some((d) => medicationText(m).includes(d)));
    postOrder(ctx, "ServiceRequest", {
      code: { coding: [{ system: "http://snomed.info/sct", code: "445118002", display: "12-lead ECG" }], text: "12-lead ECG" },
      occurrenceDateTime: iso(now(ctx) + 24 * HOUR),
    });
    for (const drug of qtDrugs.slice(0, Math.max(1, ctx.budget))) ctx.post("MedicationRequest", discontinue(ctx, drug));
  }
  return ctx.finish([v ?? -1]);
};

const OPIOIDS = ["hydromorphone", "oxycodone", "fentanyl", "hydrocodone", "morphine"];

const naloxone: Plan = (ctx) => {
  const texts = activeMedications(ctx).map(medicationText);
  const opioid = texts.some((t) => OPIOIDS.some((o) => t.includes(o)));
  const covered = texts.some((t) => t.includes("naloxone") || t.includes("narcan"));
  if (opioid && !covered) {
    postMedication(ctx, "naloxone 4 mg/actuation nasal spray", {
      text: "naloxone nasal spray 4 mg as needed for opioid overdose",
      asNeededBoolean: true,
      route: "nasal",
      dose: { value: 4, unit: "mg" },
    });
  }
  return ctx.finish([]);
};

const fluVaccine: Plan = (ctx) => {
  const last = latest(procedures(ctx, ["90686"]), performed);
  if (!last || now(ctx) - performed(last) > 365 * DAY) {
    postOrder(ctx, "ServiceRequest", {
      code: { coding: [{ system: CPT, code: "90686", display: "Influenza vaccine, quadrivalent, preservative free, IM" }], text: "influenza vaccine" },
      occurrenceDateTime: taskNow(ctx.task),
    });
  }
  return ctx.finish(last ? [performedText(last)] : [-1]);
};

const covidBooster: Plan = (ctx) => {
  const dates: string[] = [];
  for (const p of procedures(ctx, ["COVIDVACCINE"])) {
    const t = performedText(p);
    if (t) dates.push(t);
  }
  const completed = byId(ctx.search("MedicationRequest", [["patient", mrn(ctx)], ["status", "completed"], ["_count", MAX]]));
  for (const m of completed) {
    if (medicationText(m).includes("covid-19 vac") && typeof m.authoredOn === "string") dates.push(m.authoredOn);
  }
  const last = latest(dates, dateOnly);
  const days = last ? (dateOnly(taskNow(ctx.task)) - dateOnly(last)) / DAY : Number.POSITIVE_INFINITY;
  if (days > 365) {
    postOrder(ctx, "ServiceRequest", {
      code: { coding: [{ system: CPT, code: "91320", display: "COVID-19 vaccine booster, single dose" }], text: "COVID-19 vaccine booster" },
      occurrenceDateTime: taskNow(ctx.task),
    });
  }
  return ctx.finish(last ? [last] : [-1]);
};

// Relaxed v2 variants of v1 tasks 5, 9 (the same plan as v1's) and 10.

const a1cV2: Plan = (ctx) => {
  const last = latest(labs(ctx, "A1C"), effective);
  if (!last || now(ctx) - effective(last) > 365 * DAY) ctx.post("ServiceRequest", a1cOrder(ctx));
  return ctx.finish(last ? [value(last), last.effectiveDateTime] : [-1]);
};

export const V2_PLANS: Record<string, Plan> = {
  task1: ctFollowUp,
  task2: dvtProphylaxis,
  task3: heartRate,
  task4: catheter,
  task5: renalMass,
  task6: thyroid,
  task7: qtc,
  task8: naloxone,
  task9: fluVaccine,
  task10: covidBooster,
  v2_task5: magnesiumReplacement((v) => v < 2.0),
  v2_task9: potassiumReplacement,
  v2_task10: a1cV2,
};
