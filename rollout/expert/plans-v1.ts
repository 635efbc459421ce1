// MedAgentBench v1 (tasks 1-10): what a careful clinician fetches, computes and orders.
import type { FhirResource } from "../../env/fhir/index.ts";
import { ageOn, byId, effective, HOUR, instant, latest, patientRef, value, yearBefore } from "./clinical.ts";
import { nameAndDob, quoted, taskMrn, taskNow } from "./facts.ts";
import { mean, type Plan, type PlanContext } from "./plan.ts";

const MAX = "5000";
const NDC = "http://hl7.org/fhir/sid/ndc";
const LOINC = "http://loinc.org";

/** The patient's `code` results in id order; `filters` (e.g. a date window) go before `_count`. */
export function labs(ctx: PlanContext, code: string, filters: [string, string][] = []): FhirResource[] {
  return byId(ctx.search("Observation", [["patient", taskMrn(ctx.task)], ["code", code], ...filters, ["_count", MAX]]));
}

/** Latest value of `code` at or after `since` (ms; -Infinity for no window). */
function latestValue(ctx: PlanContext, code: string, since = Number.NEGATIVE_INFINITY): number | undefined {
  const inWindow = labs(ctx, code).filter((o) => effective(o) >= since);
  const pick = latest(inWindow, effective);
  return pick ? value(pick) : undefined;
}

const findPatient: Plan = (ctx) => {
  const { given, family, birthDate } = nameAndDob(ctx.task);
  const found = ctx.search("Patient", [["given", given.split(" ")[0]!], ["family", family], ["birthdate", birthDate]]);
  // The server's name search is "starts with"; keep only exact name matches.
  const exact = found.filter((p) =>
    ((p.name as { given?: string[]; family?: string }[] | undefined) ?? []).some(
      (n) => n.family?.toLowerCase() === family.toLowerCase() && (n.given ?? []).join(" ").toLowerCase().startsWith(given.toLowerCase()),
    ),
  );
  const match = exact[0] ?? found[0];
  return ctx.finish([match?.id ?? "Patient not found"]);
};

function readPatient(ctx: PlanContext): FhirResource | undefined {
  return ctx.search("Patient", [["identifier", taskMrn(ctx.task)]])[0];
}

const age: Plan = (ctx) => {
  const patient = readPatient(ctx);
  if (typeof patient?.birthDate !== "string") return ctx.finish([-1]);
  const birth = (patient.birthDate as string).split("-").map(Number);
  const today = taskNow(ctx.task).slice(0, 10).split("-").map(Number);
  if (birth.length !== 3 || today.length !== 3 || [...birth, ...today].some((n) => !Number.isInteger(n))) return ctx.finish([ageOn(patient.birthDate as string, taskNow(ctx.task))]);
  // Years between, less one when the birthday has not come yet this year.
  const expression = `${today[0]} - ${birth[0]} - ((${today[1]}, ${today[2]}) < (${birth[1]}, ${birth[2]}))`;
  return ctx.finish([ctx.calculate(expression, ageOn(patient.birthDate as string, taskNow(ctx.task)))]);
};

const recordBp: Plan = (ctx) => {
  const mrn = taskMrn(ctx.task);
  ctx.post("Observation", {
    resourceType: "Observation",
    category: [{ coding: [{ system: "http://hl7.org/fhir/observation-category", code: "vital-signs", display: "Vital Signs" }] }],
    code: { text: "BP" },
    effectiveDateTime: taskNow(ctx.task),
    status: "final",
    valueString: quoted(ctx.task) ?? "",
    subject: patientRef(mrn),
  });
  return ctx.finish([]);
};

const since24h = (ctx: PlanContext) => instant(taskNow(ctx.task)) - 24 * HOUR;

const latestMagnesium: Plan = (ctx) => {
  return ctx.finish([latestValue(ctx, "MG", since24h(ctx)) ?? -1]);
};

function magnesiumOrder(ctx: PlanContext, v: number): FhirResource {
  const dose = v < 1 ? 4 : v < 1.5 ? 2 : 1;
  return {
    resourceType: "MedicationRequest",
    medicationCodeableConcept: {
      coding: [{ system: NDC, code: "0338-1715-40", display: "magnesium sulfate in water for injection" }],
      text: "magnesium sulfate IV",
    },
    authoredOn: taskNow(ctx.task),
    dosageInstruction: [
      {
        route: "IV",
        doseAndRate: [{ doseQuantity: { value: dose, unit: "g" }, rateQuantity: { value: dose, unit: "h" } }],
      },
    ],
    status: "active",
    intent: "order",
    subject: patientRef(taskMrn(ctx.task)),
  };
}

/** Magnesium replacement where the last 24 h's latest value is `low` (v1: at most 1.9; the relaxed v2: below 2). */
export const magnesiumReplacement =
  (low: (v: number) => boolean): Plan =>
  (ctx) => {
    const v = latestValue(ctx, "MG", since24h(ctx));
    if (v === undefined) return ctx.finish([-1]);
    if (low(v)) ctx.post("MedicationRequest", magnesiumOrder(ctx, v));
    return ctx.finish([v]);
  };

const averageGlucose: Plan = (ctx) => {
  const since = since24h(ctx);
  const values = labs(ctx, "GLU")
    .filter((o) => effective(o) >= since)
    .map(value)
    .filter((v): v is number => v !== undefined);
  return ctx.finish([mean(ctx, values) ?? -1]);
};

const latestGlucose: Plan = (ctx) => {
  return ctx.finish([latestValue(ctx, "GLU") ?? -1]);
};

const orthopedicReferral: Plan = (ctx) => {
  ctx.post("ServiceRequest", {
    resourceType: "ServiceRequest",
    code: { coding: [{ system: "http://snomed.info/sct", code: "306181000000106", display: "Referral to orthopedic surgery service" }] },
    authoredOn: taskNow(ctx.task),
    status: "active",
    intent: "order",
    priority: "stat",
    subject: patientRef(taskMrn(ctx.task)),
    note: { text: quoted(ctx.task) ?? "" },
  });
  return ctx.finish([]);
};

/** The next day at 08:00 in the clock's own offset, e.g. 2023-11-14T08:00:00+00:00. */
export function nextMorning(now: string): string {
  const offset = /(Z|[+-]\d{2}:\d{2})$/.exec(now)?.[1] ?? "+00:00";
  const day = new Date(Date.parse(`${now.slice(0, 10)}T00:00:00Z`) + 24 * HOUR).toISOString().slice(0, 10);
  return `${day}T08:00:00${offset}`;
}

function potassiumOrders(ctx: PlanContext, v: number): FhirResource[] {
  const mrn = taskMrn(ctx.task);
  const now = taskNow(ctx.task);
  // 10 mEq per 0.1 below 3.5, rounded to 0.01 mEq.
  const dose = Math.round(ctx.calculate(`(3.5 - ${v}) / 0.1 * 10`, ((3.5 - v) / 0.1) * 10) * 100) / 100;
  return [
    {
      resourceType: "MedicationRequest",
      medicationCodeableConcept: {
        coding: [{ system: NDC, code: "40032-917-01", display: "potassium chloride ER oral" }],
        text: "potassium chloride oral",
      },
      authoredOn: now,
      dosageInstruction: [{ route: "oral", doseAndRate: [{ doseQuantity: { value: dose, unit: "mEq" } }] }],
      status: "active",
      intent: "order",
      subject: patientRef(mrn),
    },
    {
      resourceType: "ServiceRequest",
      code: { coding: [{ system: LOINC, code: "2823-3", display: "Potassium [Moles/volume] in Serum or Plasma" }] },
      authoredOn: now,
      status: "active",
      intent: "order",
      priority: "stat",
      subject: patientRef(mrn),
      occurrenceDateTime: nextMorning(now),
    },
  ];
}

export const potassiumReplacement: Plan = (ctx) => {
  const v = latestValue(ctx, "K");
  if (v === undefined) return ctx.finish([-1]);
  if (v < 3.5) for (const order of potassiumOrders(ctx, v)) ctx.post(order.resourceType, order);
  return ctx.finish([v]);
};

export function a1cOrder(ctx: PlanContext): FhirResource {
  return {
    resourceType: "ServiceRequest",
    code: { coding: [{ system: LOINC, code: "4548-4", display: "Hemoglobin A1c/Hemoglobin.total in Blood" }] },
    authoredOn: taskNow(ctx.task),
    status: "active",
    intent: "order",
    priority: "stat",
    subject: patientRef(taskMrn(ctx.task)),
  };
}

const hba1c: Plan = (ctx) => {
  const last = latest(labs(ctx, "A1C"), effective);
  if (!last || effective(last) < yearBefore(taskNow(ctx.task))) ctx.post("ServiceRequest", a1cOrder(ctx));
  return ctx.finish(last ? [value(last), last.effectiveDateTime] : [-1]);
};

export const V1_PLANS: Record<string, Plan> = {
  task1: findPatient,
  task2: age,
  task3: recordBp,
  task4: latestMagnesium,
  task5: magnesiumReplacement((v) => v <= 1.9),
  task6: averageGlucose,
  task7: latestGlucose,
  task8: orthopedicReferral,
  task9: potassiumReplacement,
  task10: hba1c,
};
