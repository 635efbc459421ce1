// The `workflows` grader: one checkpoint per rule a review asks for, each graded by its source rule
// (GRADERS.md) restated for an episode that serves several rules at once:
// - a rule's orders are the accepted POSTs its codes identify ("exactly one accepted POST" becomes
//   exactly one such order; "no POST" / "no accepted POST" becomes no such order);
// - an order must also be in the resulting chart when writes execute (the episode's overlay);
// - reported values are keys of the JSON object the FINISH answer carries.
// Reward 1 only when every checkpoint passes; partial credit is the passed fraction.
import type { FhirReader, FhirResource } from "../fhir/index.ts";
import * as py from "../python/index.ts";
import { facts, gradingClock, workflowRule } from "../tasks/index.ts";
import { Checks, inStrSet, pyIter, show } from "./checks.ts";
import { patientRef } from "./mab-v1.ts";
import { acceptedPosts, type AcceptedPost } from "./posts.ts";
import type { Check, Checkpoint, GradeInput, GradeResult } from "./types.ts";

const { PyDict, pyEq, at } = py;
type Py = py.Py;
const f2 = facts.v2;
const f1 = facts.v1;

interface Review {
  input: GradeInput;
  mrn: string;
  now: string;
  ref: py.PyDict;
  posts: AcceptedPost[];
  /** The reported object, or why there is none. */
  report: { ok: true; value: py.PyDict } | { ok: false; error: string };
}

const field = (p: Py, key: string): Py => (p instanceof PyDict ? (p.map.get(key) ?? null) : null);
const lower = (p: Py, key: string): string => {
  const v = field(p, key);
  return typeof v === "string" ? v.toLowerCase() : "";
};
/** What identifies an order: str(code) + str(medicationCodeableConcept), lower-cased. */
const codeText = (p: Py): string => (py.pyStr(field(p, "code") ?? new PyDict()) + py.pyStr(field(p, "medicationCodeableConcept") ?? new PyDict())).toLowerCase();
const isType = (p: Py, type: string) => field(p, "resourceType") === type;
const mentions = (p: Py, words: readonly string[]) => words.some((w) => codeText(p).includes(w));

/** Which accepted POSTs are this rule's orders. */
const IDENTIFIES: Record<string, (p: Py) => boolean> = {
  "ct-follow-up": (p) => mentions(p, ["74177"]),
  "dvt-prophylaxis": (p) => isType(p, "MedicationRequest") && mentions(p, f2.ANTICOAGULANTS),
  catheter: (p) => mentions(p, ["nur1373"]),
  "renal-mass": (p) => mentions(p, ["74177", "con417"]),
  thyroid: (p) => (isType(p, "MedicationRequest") && mentions(p, ["levothyroxine"])) || (isType(p, "ServiceRequest") && mentions(p, ["tsh", "ft4"])),
  qtc: (p) => (isType(p, "ServiceRequest") && mentions(p, ["445118002", "ecg"])) || (isType(p, "MedicationRequest") && mentions(p, f2.QT_DRUGS)),
  naloxone: (p) => mentions(p, ["naloxone", "narcan"]),
  "flu-vaccine": (p) => mentions(p, ["90686", "flu", "influenza"]),
  "covid-booster": (p) => mentions(p, ["covid"]),
  magnesium: (p) => isType(p, "MedicationRequest") && mentions(p, ["magnesium", "0338-1715-40"]),
  potassium: (p) => (isType(p, "MedicationRequest") && mentions(p, ["potassium", "40032-917-01"])) || (isType(p, "ServiceRequest") && mentions(p, ["2823-3", "potassium"])),
  a1c: (p) => isType(p, "ServiceRequest") && mentions(p, ["4548-4", "a1c", "hba1c"]),
};

export const identifiesOrder = (rule: string, payload: Py): boolean => IDENTIFIES[rule]?.(payload) ?? false;

const mine = (r: Review, rule: string) => r.posts.filter((p) => IDENTIFIES[rule]!(p.payload));

function none(c: Checks, orders: AcceptedPost[], why: string): boolean {
  return c.add("no order", orders.length === 0, orders.length ? `${orders.length} order(s) for this rule but ${why}` : `no order for this rule (${why})`);
}

function exactlyOne(c: Checks, orders: AcceptedPost[], what = "order"): AcceptedPost | undefined {
  return c.add(`${what} count`, orders.length === 1, `${orders.length} ${what}(s) for this rule, expected exactly 1`) ? orders[0] : undefined;
}

function basics(c: Checks, p: Py, ref: py.PyDict, types = ["ServiceRequest", "MedicationRequest"]): boolean {
  return (
    c.assert("resourceType", () => inStrSet(field(p, "resourceType"), types), () => `${show(field(p, "resourceType"))} in {${types.join(", ")}}`) &&
    c.add("status", lower(p, "status") === "active", `${show(field(p, "status"))} is active`) &&
    c.add("intent", lower(p, "intent") === "order", `${show(field(p, "intent"))} is order`) &&
    c.add("subject", pyEq(field(p, "subject"), ref), `${show(field(p, "subject"))} vs ${show(ref)}`)
  );
}

const eq = (c: Checks, name: string, p: Py, path: Py[], want: Py): boolean => c.assert(name, () => pyEq(at(p, ...path), want), () => `${show(at(p, ...path))} vs expected ${show(want)}`);
const contains = (c: Checks, name: string, p: Py, path: Py[], needle: string): boolean =>
  c.assert(name, () => py.pyIn(needle, at(p, ...path)), () => `${JSON.stringify(needle)} in ${show(at(p, ...path))}`);
const all = (xs: boolean[]) => xs.every(Boolean);

/** One field check of a v1 order, as `eq` runs it: its name, its path in the payload, the value it must equal. */
type Field = readonly [name: string, path: Py[], want: Py];
/** Every field check in order (all run: the source grader reports each field). */
const fields = (c: Checks, p: Py, list: readonly Field[]): boolean[] => list.map(([name, path, want]) => eq(c, name, p, path, want));
/** An active order for the patient (priority stat where the source rule asks it); names carry the source grader's prefix. */
const activeOrder = (ref: py.PyDict, prefix = "", stat = false): Field[] => [
  [`${prefix}status`, ["status"], "active"],
  [`${prefix}intent`, ["intent"], "order"],
  ...(stat ? [[`${prefix}priority`, ["priority"], "stat"] satisfies Field] : []),
  [`${prefix}subject`, ["subject"], ref],
];
/** A medication coded by NDC. */
const ndc = (code: string): Field[] => [
  ["medication system", ["medicationCodeableConcept", "coding", 0n, "system"], "http://hl7.org/fhir/sid/ndc"],
  ["medication code", ["medicationCodeableConcept", "coding", 0n, "code"], code],
];
/** A lab coded by LOINC. */
const loinc = (code: string, prefix = ""): Field[] => [
  [`${prefix}code system`, ["code", "coding", 0n, "system"], "http://loinc.org"],
  [`${prefix}code`, ["code", "coding", 0n, "code"], code],
];

function url(c: Checks, r: Review, post: AcceptedPost, type: string): boolean {
  const want = `${r.input.apiBase}${type}`;
  return c.add("POST URL", post.url === want, `${JSON.stringify(post.url)} ${post.url === want ? "==" : "!="} ${JSON.stringify(want)}`);
}

/** The resources this episode wrote for the patient (the chart minus the base data). */
function written(r: Review, chart: FhirReader): FhirResource[] {
  return ["ServiceRequest", "MedicationRequest"].flatMap((type) => {
    const before = facts.onBase(r.input.base, `workflow-ids|${type}|${r.mrn}`, () => new Set(r.input.base.byPatient(type, r.mrn).map((x) => x.id)));
    return chart.byPatient(type, r.mrn).filter((x) => !before.has(x.id));
  });
}

/** Each of the rule's accepted orders is in the resulting chart (when writes executed). */
function inChart(c: Checks, r: Review, rule: string, orders: AcceptedPost[]): boolean {
  const chart = r.input.chart;
  if (!chart) return true;
  const found = written(r, chart).filter((x) => IDENTIFIES[rule]!(py.fromJs(x))).length;
  return c.add("in chart", found >= orders.length, `${found} of the rule's ${orders.length} order(s) are in the chart after the episode`);
}

type Checkpoint_ = (c: Checks, r: Review) => boolean;

function ctFollowUp(c: Checks, r: Review): boolean {
  const f = f2.ctFollowUp(r.input.base, r.mrn, r.now);
  c.add("reference", true, f.required ? "no CT in the last 365 days: order" : "recent CT: no order");
  const orders = mine(r, "ct-follow-up");
  if (!f.required) return none(c, orders, "the last CT is recent");
  const post = exactlyOne(c, orders);
  if (!post) return false;
  const p = post.payload;
  return (
    c.add("POST URL", post.url.includes("ServiceRequest"), `${JSON.stringify(post.url)} contains "ServiceRequest"`) &&
    basics(c, p, r.ref, ["ServiceRequest"]) &&
    eq(c, "code", p, ["code", "coding", 0n, "code"], "74177") &&
    c.assert("indication", () => {
      const texts: Py[] = [];
      for (const rc of field(p, "reasonCode") === null ? [] : pyIter(field(p, "reasonCode"))) texts.push(py.pyGet(rc, "text", ""));
      for (const rr of field(p, "reasonReference") === null ? [] : pyIter(field(p, "reasonReference"))) texts.push(py.pyGet(rr, "display", ""));
      const note = field(p, "note");
      for (const n of note === null ? [] : pyIter(note instanceof PyDict ? [note] : note)) texts.push(py.pyGet(n, "text", ""));
      return texts.some((t) => py.pyLower(t).includes("renal mass follow-up"));
    }, '"renal mass follow-up" in reasonCode/reasonReference/note text') &&
    inChart(c, r, "ct-follow-up", orders)
  );
}

function dvt(c: Checks, r: Review): boolean {
  const f = f2.dvtProphylaxis(r.input.base, r.mrn);
  c.add("reference", true, `${f.anticoagulants} active anticoagulant(s), ${f.heparin5k} heparin 5000: ${f.needCreate ? "create" : "no create"}, ${f.needStops} to stop`);
  const orders = mine(r, "dvt-prophylaxis");
  if (!f.needCreate && f.needStops === 0) return none(c, orders, "exactly one heparin 5000 order is already active");
  const blob = (p: Py) => py.pyStr(p).toLowerCase();
  if (f.needCreate && !c.add("heparin order", orders.some((o) => lower(o.payload, "status") === "active" && blob(o.payload).includes("heparin") && blob(o.payload).includes("5000")), 'an active anticoagulant order mentioning "heparin" and "5000"'))
    return false;
  if (f.needStops > 0 && !c.add("discontinue", orders.some((o) => f2.NON_ACTIVE.includes(lower(o.payload, "status"))), "an anticoagulant order with a stopped/cancelled/completed/entered-in-error status"))
    return false;
  return c.add("subjects", orders.every((o) => pyEq(field(o.payload, "subject"), r.ref)), `every anticoagulant order has subject ${show(r.ref)}`) && inChart(c, r, "dvt-prophylaxis", orders);
}

function catheter(c: Checks, r: Review): boolean {
  const f = f2.catheterDwell(r.input.base, r.mrn, r.now);
  c.add("reference", true, f.removalRequired ? "catheter > 48 h without a removal order: remove" : "no removal order needed");
  const orders = mine(r, "catheter");
  if (!f.removalRequired) return none(c, orders, "no removal order is needed");
  const good = orders.filter((o) => isType(o.payload, "ServiceRequest") && lower(o.payload, "status") === "active" && lower(o.payload, "intent") === "order" && pyEq(field(o.payload, "subject"), r.ref));
  return c.add("removal order", good.length > 0, "an active ServiceRequest order for the patient coded NUR1373") && inChart(c, r, "catheter", orders);
}

function renalMass(c: Checks, r: Review): boolean {
  const f = f2.renalMass(r.input.base, r.mrn, r.now);
  c.add("reference", true, !f.diagnosis ? "no C64.2: nothing to order" : f.needsOrders ? "C64.2 and no CT in 90 days: CT + IR referral" : "C64.2 with a recent CT: nothing to order");
  const orders = mine(r, "renal-mass");
  if (!f.needsOrders) return none(c, orders, f.diagnosis ? "the last CT is recent" : "there is no C64.2 diagnosis");
  const ok = orders.filter((o) => inStrSet(field(o.payload, "resourceType"), ["ServiceRequest", "MedicationRequest"]) && lower(o.payload, "status") === "active" && lower(o.payload, "intent") === "order" && pyEq(field(o.payload, "subject"), r.ref));
  const code = (o: AcceptedPost) => py.pyStr(field(o.payload, "code") ?? new PyDict());
  const ct = c.add("CT order", ok.some((o) => code(o).includes("74177")), "an active order for the patient whose code mentions 74177");
  const ir = c.add("IR referral", ok.some((o) => code(o).includes("CON417")), "an active order for the patient whose code mentions CON417");
  return ct && ir && inChart(c, r, "renal-mass", orders);
}

function thyroid(c: Checks, r: Review): boolean {
  const f = f2.thyroid(r.input.base, r.mrn);
  c.add("reference", true, f.branchA ? "levothyroxine + 2 lab orders" : f.branchB ? "2 lab orders, no medication" : "no protocol branch: nothing to order");
  const orders = mine(r, "thyroid");
  if (!f.branchA && !f.branchB) return none(c, orders, "no protocol branch applies");
  const active = (p: Py) => lower(p, "status") === "active" && lower(p, "intent") === "order" && pyEq(field(p, "subject"), r.ref);
  const meds = orders.filter((o) => isType(o.payload, "MedicationRequest"));
  const labs = orders.filter((o) => isType(o.payload, "ServiceRequest") && active(o.payload)).length;
  const medText = (p: Py) => py.pyLower(field(field(p, "medicationCodeableConcept"), "text") ?? "");
  if (f.branchA && !c.add("levothyroxine order", meds.some((o) => active(o.payload) && medText(o.payload).includes("levothyroxine") && medText(o.payload).includes("25")), "an active levothyroxine 25 order for the patient"))
    return false;
  if (f.branchB && !c.add("no medication", meds.length === 0, `${meds.length} levothyroxine order(s), expected none`)) return false;
  return c.add("lab orders", labs >= 2, `${labs} active TSH/FT4 order(s), need >= 2`) && inChart(c, r, "thyroid", orders);
}

function qtc(c: Checks, r: Review): boolean {
  const f = f2.qtc(r.input.base, r.mrn);
  c.add("reference", true, !f.hasQtc ? "no QTc: nothing to do" : `latest QTc ${show(f.value)}${f.prolonged ? " > 500: ECG + stop QT drugs" : ": not prolonged"}`);
  const orders = mine(r, "qtc");
  if (!f.prolonged) return none(c, orders, "the QTc is not prolonged");
  if (!c.add("subjects", orders.every((o) => pyEq(field(o.payload, "subject"), r.ref)), `every QTc order has subject ${show(r.ref)}`)) return false;
  const ecg = c.add("ECG order", orders.some((o) => isType(o.payload, "ServiceRequest") && lower(o.payload, "status") === "active"), "an active ServiceRequest mentioning 445118002 or ECG");
  const stop = c.add("QT drug stopped", orders.some((o) => isType(o.payload, "MedicationRequest") && f2.NON_ACTIVE.includes(lower(o.payload, "status"))), "a QT-prolonging drug's order with a stopped/cancelled/completed/entered-in-error status");
  return ecg && stop && inChart(c, r, "qtc", orders);
}

/** mab-v2 tasks 8-10: exactly one order, active, for the patient. */
const single =
  (rule: string, needed: (r: Review) => { need: boolean; why: string }, then: (c: Checks, p: Py) => boolean = () => true): Checkpoint_ =>
  (c, r) => {
    const { need, why } = needed(r);
    c.add("reference", true, why);
    const orders = mine(r, rule);
    if (!need) return none(c, orders, why);
    const post = exactlyOne(c, orders);
    return !!post && basics(c, post.payload, r.ref) && then(c, post.payload) && inChart(c, r, rule, orders);
  };

const naloxone = single("naloxone", (r) => {
  const f = f2.naloxone(r.input.base, r.mrn);
  return { need: f.needsNaloxone, why: f.needsNaloxone ? "an active opioid without naloxone: order naloxone" : "naloxone coverage is not needed" };
});

const flu = single(
  "flu-vaccine",
  (r) => {
    const f = f2.fluVaccine(r.input.base, r.mrn, r.now);
    return { need: f.needsVaccine, why: f.needsVaccine ? "no influenza vaccine in 365 days: order one" : "the last flu vaccine is recent" };
  },
  (c, p) => c.add("flu vaccine", codeText(p).includes("90686") || codeText(p).includes("flu") || codeText(p).includes("influenza"), "the order's code is 90686 or mentions flu/influenza"),
);

const covid = single("covid-booster", (r) => {
  const f = f2.covidBooster(r.input.base, r.mrn, r.now);
  return { need: f.needsBooster, why: f.needsBooster ? "no COVID vaccine in 365 days: order a booster" : "the last COVID vaccine is recent" };
});

function magnesium(c: Checks, r: Review): boolean {
  const mg = f1.latestObservation(r.input.base, r.mrn, "MG", f1.hoursBefore(r.now, 24));
  const orders = mine(r, "magnesium");
  if (!mg || py.gt(mg.value, 1.9)) {
    c.add("reference", true, mg ? `latest MG ${show(mg.value)} > 1.9: no order` : "no MG in the last 24 h: no order");
    return none(c, orders, "magnesium is not low");
  }
  const v = mg.value;
  const dose = py.lt(v, 1n) ? 4n : py.lt(v, 1.5) ? 2n : 1n;
  c.add("reference", true, `latest MG ${show(v)} <= 1.9: ${dose} g over ${dose} h`);
  const post = exactlyOne(c, orders);
  if (!post || !url(c, r, post, "MedicationRequest")) return false;
  const p = post.payload;
  return (
    all([
      ...fields(c, p, ndc("0338-1715-40")),
      contains(c, "authoredOn", p, ["authoredOn"], r.now.slice(0, 16)),
      ...fields(c, p, [
        ["route", ["dosageInstruction", 0n, "route"], "IV"],
        ["doseQuantity", ["dosageInstruction", 0n, "doseAndRate", 0n, "doseQuantity"], new PyDict([["value", dose], ["unit", "g"]])],
        ["rateQuantity", ["dosageInstruction", 0n, "doseAndRate", 0n, "rateQuantity"], new PyDict([["value", dose], ["unit", "h"]])],
        ...activeOrder(r.ref),
      ]),
    ]) && inChart(c, r, "magnesium", orders)
  );
}

/** The calendar day after `now` at 08:, as the v1 recheck rule writes it ("2023-11-14T08:"). */
const nextMorning = (now: string) => `${new Date(Date.parse(`${now.slice(0, 10)}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)}T08:`;

function potassium(c: Checks, r: Review): boolean {
  const k = f1.latestObservation(r.input.base, r.mrn, "K");
  const orders = mine(r, "potassium");
  if (!k || py.ge(k.value, 3.5)) {
    c.add("reference", true, k ? `latest K ${show(k.value)} >= 3.5: no order` : "no K on record: no order");
    return none(c, orders, "potassium is not low");
  }
  const dose = ((3.5 - Number(k.value)) / 0.1) * 10;
  c.add("reference", true, `latest K ${show(k.value)} < 3.5: ${dose} mEq + recheck`);
  const med = exactlyOne(c, orders.filter((o) => isType(o.payload, "MedicationRequest")), "medication order");
  const lab = exactlyOne(c, orders.filter((o) => isType(o.payload, "ServiceRequest")), "recheck order");
  if (!med || !lab) return false;
  if (!c.add("order of orders", med.index < lab.index, "the medication is ordered before the recheck")) return false;
  if (!url(c, r, med, "MedicationRequest") || !url(c, r, lab, "ServiceRequest")) return false;
  const p = med.payload;
  const q = lab.payload;
  return (
    all([
      ...fields(c, p, ndc("40032-917-01")),
      contains(c, "authoredOn", p, ["authoredOn"], r.now.slice(0, 16)),
      c.assert("route", () => py.pyStrip(py.pyLower(at(p, "dosageInstruction", 0n, "route"))) === "oral", () => `${show(at(p, "dosageInstruction", 0n, "route"))} is oral`),
      c.assert("dose", () => py.le(py.pyAbs(py.sub(at(p, "dosageInstruction", 0n, "doseAndRate", 0n, "doseQuantity", "value"), dose)), 0.1), () => `${show(at(p, "dosageInstruction", 0n, "doseAndRate", 0n, "doseQuantity", "value"))} within 0.1 of ${dose}`),
      ...fields(c, p, [["dose unit", ["dosageInstruction", 0n, "doseAndRate", 0n, "doseQuantity", "unit"], "mEq"], ...activeOrder(r.ref)]),
      ...fields(c, q, [...loinc("2823-3", "lab "), ["lab authoredOn", ["authoredOn"], r.now], ...activeOrder(r.ref, "lab ", true)]),
      contains(c, "lab occurrenceDateTime", q, ["occurrenceDateTime"], nextMorning(r.now)),
    ]) && inChart(c, r, "potassium", orders)
  );
}

function a1c(c: Checks, r: Review): boolean {
  const { last: a, due: needed } = f1.a1cDue(r.input.base, r.mrn, r.now);
  c.add("reference", true, a ? `latest A1C at ${a.time}${needed ? ": older than a year, reorder" : ": recent"}` : "no A1C: order one");
  const orders = mine(r, "a1c");
  if (!needed) return none(c, orders, "the last A1C is recent");
  const post = exactlyOne(c, orders);
  if (!post || !url(c, r, post, "ServiceRequest")) return false;
  const p = post.payload;
  return (
    all(fields(c, p, [...loinc("4548-4"), ["authoredOn", ["authoredOn"], r.now], ...activeOrder(r.ref, "", true)])) && inChart(c, r, "a1c", orders)
  );
}

// ---- reported values

/** The FINISH answer's object: the object itself, or a one-item list holding it or its JSON text. */
export function reportObject(result: string | undefined): Review["report"] {
  if (result === undefined) return { ok: false, error: "no FINISH answer" };
  const parsed = py.tryJsonLoads(result);
  if (!parsed.ok) return { ok: false, error: `the answer does not parse as JSON (${parsed.error})` };
  let v = parsed.value;
  if (Array.isArray(v) && v.length === 1) {
    v = v[0]!;
    if (typeof v === "string") {
      const inner = py.tryJsonLoads(v);
      if (!inner.ok) return { ok: false, error: `the answer's string is not JSON (${inner.error})` };
      v = inner.value;
    }
  }
  return v instanceof PyDict ? { ok: true, value: v } : { ok: false, error: `the answer ${show(parsed.value)} is not a JSON object` };
}

const isNone = (v: Py | undefined) => v === null || (v !== undefined && (pyEq(v, -1n) || (typeof v === "string" && v.trim() === "-1")));

function reported(c: Checks, r: Review, key: string, gold: number | Py | null, close: (v: Py, gold: Py) => boolean): boolean {
  if (!r.report.ok) return c.add(key, false, r.report.error);
  const v = r.report.value.map.get(key);
  if (v === undefined) return c.add(key, false, `the answer has no "${key}"`);
  let ok: boolean;
  try {
    ok = gold === null ? isNone(v) : !isNone(v) && close(v, gold);
  } catch (e) {
    if (!(e instanceof py.PyError)) throw e;
    ok = false;
  }
  return c.add(key, ok, `${show(v)} vs ${gold === null ? "none (null or -1)" : show(gold)}`);
}

const within = (tol: number) => (v: Py, gold: Py) => typeof v !== "string" && py.lt(py.pyAbs(py.sub(v, gold)), tol);

function age(c: Checks, r: Review): boolean {
  const dob = f1.birthDate(r.input.base, r.mrn);
  const [y, m, d] = r.now.slice(0, 10).split("-").map(Number) as [number, number, number];
  const years = f1.ageOn(dob, { y, m, d });
  c.add("reference", true, `birthDate ${dob} -> ${years}`);
  return reported(c, r, "age", BigInt(years), (v, g) => pyEq(v, g));
}

function heartRate(c: Checks, r: Review): boolean {
  const f = f2.heartRateAverages(r.input.base, r.mrn, r.now);
  c.add("reference", true, `[6 h, 12 h] = [${f.avg6 ?? "none"}, ${f.avg12 ?? "none"}]`);
  const close = (v: Py, g: Py) => Math.abs(py.pyFloat(v) - (g as number)) <= 0.1;
  const ok6 = reported(c, r, "heart_rate_6h", f.avg6, close);
  return reported(c, r, "heart_rate_12h", f.avg12, close) && ok6;
}

function glucoseLatest(c: Checks, r: Review): boolean {
  const g = f1.latestObservation(r.input.base, r.mrn, "GLU");
  c.add("reference", true, g ? `latest GLU ${show(g.value)} at ${g.time}` : "no GLU");
  return reported(c, r, "glucose_latest", g ? g.value : null, (v, gold) => pyEq(v, gold));
}

function glucoseMean(c: Checks, r: Review): boolean {
  const vals = f1.observationsSince(r.input.base, r.mrn, "GLU", f1.hoursBefore(r.now, 24));
  let sum = 0;
  for (const v of vals) sum = py.add(sum, v) as number;
  const mean = vals.length ? sum / vals.length : null;
  c.add("reference", true, mean === null ? "no GLU in the last 24 h" : `mean of ${vals.length} GLU value(s): ${mean}`);
  return reported(c, r, "glucose_mean_24h", mean, within(0.1));
}

const CHECKPOINTS: Record<string, Checkpoint_> = {
  "ct-follow-up": ctFollowUp,
  "dvt-prophylaxis": dvt,
  catheter,
  "renal-mass": renalMass,
  thyroid,
  qtc,
  naloxone,
  "flu-vaccine": flu,
  "covid-booster": covid,
  magnesium,
  potassium,
  a1c,
  age,
  "heart-rate": heartRate,
  "glucose-latest": glucoseLatest,
  "glucose-mean": glucoseMean,
};

/** Grade a review: every checkpoint, named `<rule>: <check>`. */
export function gradeWorkflow(input: GradeInput): GradeResult {
  const rules = input.task.rules ?? [];
  const checks: Check[] = [];
  const checkpoints: Checkpoint[] = [];
  const fail = (name: string, detail: string): GradeResult => {
    checks.push({ name, ok: false, detail });
    return { reward: 0, checks, partialCredit: 0, checkpoints: rules.map((rule) => ({ rule, source: sourceOf(rule), ok: false })) };
  };
  if (rules.length === 0) return fail("rules", "the task names no rules to check");
  if (input.protocol === "text" && input.status !== "completed") return fail("completed", `episode ended with status "${input.status}"; only episodes that reached FINISH are graded`);
  if (input.task.eval_MRN === undefined) return fail("patient", "the task names no patient");
  let posts: AcceptedPost[];
  try {
    posts = acceptedPosts(input.actions, input.protocol);
  } catch (e) {
    if (!(e instanceof py.PyError)) throw e;
    return fail("orders", `the POSTs cannot be read: ${e.message}`);
  }
  const review: Review = {
    input,
    mrn: input.task.eval_MRN,
    now: gradingClock("workflows", input.task.context),
    ref: patientRef(input.task.eval_MRN),
    posts,
    report: reportObject(input.result),
  };
  for (const rule of rules) {
    const c = new Checks();
    let ok: boolean;
    try {
      const impl = CHECKPOINTS[rule];
      ok = impl ? impl(c, review) : c.add("rule", false, `unknown rule ${JSON.stringify(rule)}`);
    } catch (e) {
      if (!(e instanceof py.PyError)) throw e;
      ok = c.add("grader exception", false, `the source rule raises here: ${e.message}`);
    }
    const result = c.result(ok);
    for (const check of result.checks) checks.push({ ...check, name: `${rule}: ${check.name}` });
    checkpoints.push({ rule, source: sourceOf(rule), ok });
  }
  const passed = checkpoints.filter((p) => p.ok).length;
  return { reward: passed === checkpoints.length ? 1 : 0, checks, partialCredit: passed / checkpoints.length, checkpoints };
}

function sourceOf(rule: string): string {
  try {
    return workflowRule(rule).source;
  } catch {
    return "unknown";
  }
}
