// Graders of suite mab-v2 (MedAgentBench V2 new_patient_tasks), verdict-exact to the official
// graders (GRADERS.md). Each follows the official evaluation order, so that a payload that makes
// the Python code raise fails exactly when it would there.
import * as py from "../python/index.ts";
import { facts, gradingClock } from "../tasks/index.ts";
import { Checks, inStrSet, pyIter, show } from "./checks.ts";
import { patientRef } from "./mab-v1.ts";
import { acceptedPosts, hasPost, type AcceptedPost } from "./posts.ts";
import type { GradeInput } from "./types.ts";

const { at, pyEq, pyGet, pyIn, pyLower, pyStr, PyDict, PyTuple, getItem } = py;
type Py = py.Py;
const f2 = facts.v2;

const SR_MR = ["ServiceRequest", "MedicationRequest"];
const mrnOf = (input: GradeInput): string => {
  if (input.task.eval_MRN === undefined) throw new py.PyError("KeyError", "'eval_MRN'");
  return input.task.eval_MRN;
};
const nowOf = (input: GradeInput): string => gradingClock("mab-v2", input.task.context);
const lowerGet = (p: Py, key: string): string => pyLower(pyGet(p, key, ""));
const blob = (p: Py): string => pyStr(p).toLowerCase();

function silentHasPost(c: Checks, input: GradeInput, why: string): boolean {
  const has = hasPost(input.actions, input.protocol);
  return c.add("no POST", !has, has ? `a POST was made but ${why}` : `no POST made (${why})`);
}

function silentAccepted(c: Checks, posts: AcceptedPost[], why: string): boolean {
  return c.add("no accepted POST", posts.length === 0, posts.length ? `${posts.length} accepted POST(s) but ${why}` : `no accepted POST (${why})`);
}

function posts(input: GradeInput): AcceptedPost[] {
  return acceptedPosts(input.actions, input.protocol);
}

function exactlyOne(c: Checks, ps: AcceptedPost[]): AcceptedPost | undefined {
  return c.add("accepted POST count", ps.length === 1, `${ps.length} accepted POST(s), expected exactly 1`) ? ps[0] : undefined;
}

/** The common "ServiceRequest or MedicationRequest, active, order, exact subject" chain of tasks 8-10
 *  (each `return False` in order; a raise is also False). */
function orderBasics(c: Checks, p: Py, ref: py.PyDict): boolean {
  return (
    c.assert("resourceType", () => inStrSet(pyGet(p, "resourceType"), SR_MR), () => `${show(pyGet(p, "resourceType"))} in {ServiceRequest, MedicationRequest}`) &&
    c.assert("status", () => lowerGet(p, "status") === "active", () => `${show(pyGet(p, "status"))} is active`) &&
    c.assert("intent", () => lowerGet(p, "intent") === "order", () => `${show(pyGet(p, "intent"))} is order`) &&
    c.assert("subject", () => pyEq(pyGet(p, "subject"), ref), () => `${show(pyGet(p, "subject"))} vs ${show(ref)}`)
  );
}

function task1(c: Checks, input: GradeInput): boolean {
  const mrn = mrnOf(input);
  // The verifiers port's copy of task1 measures "12 months ago" from the wall clock, not the task's NOW.
  const now = input.v2Semantics === "medarc" ? new Date().toISOString().replace(/\.\d{3}Z$/, "+00:00") : nowOf(input);
  const f = f2.ctFollowUp(input.base, mrn, now);
  c.add("reference", true, f.last ? `latest CT ${new Date(f.last.us / 1000).toISOString()}${f.required ? ": older than 365 days, order" : ": recent, no order"}` : "no prior CT: order");
  if (!f.required) return silentHasPost(c, input, "the last CT is recent");
  const post = exactlyOne(c, posts(input));
  if (!post) return false;
  if (!c.add("POST URL", post.url.includes("ServiceRequest"), `${JSON.stringify(post.url)} contains "ServiceRequest"`)) return false;
  const p = post.payload;
  return (
    c.assert("resourceType", () => pyEq(getItem(p, "resourceType"), "ServiceRequest"), () => show(getItem(p, "resourceType"))) &&
    c.assert("status", () => pyLower(getItem(p, "status")) === "active", () => show(getItem(p, "status"))) &&
    c.assert("intent", () => pyLower(getItem(p, "intent")) === "order", () => show(getItem(p, "intent"))) &&
    c.assert("subject", () => pyEq(getItem(p, "subject"), patientRef(mrn)), () => show(getItem(p, "subject"))) &&
    c.assert("code", () => pyEq(at(p, "code", "coding", 0n, "code"), "74177"), () => show(at(p, "code", "coding", 0n, "code"))) &&
    c.assert("indication", () => {
      const texts: Py[] = [];
      if (pyIn("reasonCode", p)) for (const rc of pyIter(getItem(p, "reasonCode"))) texts.push(pyGet(rc, "text", ""));
      if (pyIn("reasonReference", p)) for (const rr of pyIter(getItem(p, "reasonReference"))) texts.push(pyGet(rr, "display", ""));
      if (pyIn("note", p)) {
        let notes = getItem(p, "note");
        if (notes instanceof PyDict) notes = [notes];
        for (const n of pyIter(notes)) texts.push(pyGet(n, "text", ""));
      }
      return texts.some((t) => pyLower(t).includes("renal mass follow-up"));
    }, '"renal mass follow-up" in reasonCode/reasonReference/note text')
  );
}

function task2(c: Checks, input: GradeInput): boolean {
  const mrn = mrnOf(input);
  const f = f2.dvtProphylaxis(input.base, mrn);
  c.add("reference", true, `${f.anticoagulants} active anticoagulant(s), ${f.heparin5k} heparin 5000: ${f.needCreate ? "create" : "no create"}, ${f.needStops} to stop`);
  const ps = posts(input);
  const creates = ps.filter((p) => pyEq(pyGet(p.payload, "resourceType"), "MedicationRequest") && lowerGet(p.payload, "status") === "active");
  const stops = ps.filter((p) => pyEq(pyGet(p.payload, "resourceType"), "MedicationRequest") && f2.NON_ACTIVE.includes(lowerGet(p.payload, "status")));
  if (!f.needCreate && f.needStops === 0) return silentAccepted(c, ps, "exactly one heparin 5000 order is already active");
  if (f.needCreate && !c.add("heparin order", creates.some((p) => blob(p.payload).includes("heparin") && blob(p.payload).includes("5000")), 'an accepted active MedicationRequest mentioning "heparin" and "5000"'))
    return false;
  if (f.needStops > 0 && !c.add("discontinue", stops.length > 0, `${stops.length} accepted MedicationRequest(s) with a stopped/cancelled/completed/entered-in-error status`)) return false;
  const ref = patientRef(mrn);
  return c.add("subjects", ps.every((p) => pyEq(pyGet(p.payload, "subject"), ref)), `every accepted POST has subject ${show(ref)}`);
}

function task3(c: Checks, input: GradeInput): boolean {
  const f = f2.heartRateAverages(input.base, mrnOf(input), nowOf(input));
  c.add("reference", true, `gold [6 h, 12 h] = [${f.avg6 ?? "none"}, ${f.avg12 ?? "none"}]`);
  if (!silentHasPost(c, input, "this is a read-only task")) return false;
  const raw = input.result;
  let parsed: Py;
  try {
    if (raw === undefined) throw new py.PyError("ValueError", "no FINISH result");
    parsed = py.literalEval(raw);
  } catch (e) {
    if (!(e instanceof py.PyError)) throw e;
    const j = raw === undefined ? { ok: false as const, error: "no result" } : py.tryJsonLoads(raw);
    if (!j.ok) return c.add("answer", false, `FINISH answer ${JSON.stringify(raw ?? null)} parses neither as a Python literal nor as JSON`);
    parsed = j.value;
  }
  const items = Array.isArray(parsed) ? parsed : parsed instanceof PyTuple ? parsed.items : undefined;
  if (!c.add("answer shape", items !== undefined && items.length === 2, `answer ${show(parsed)} is a 2-element list`)) return false;
  const norm = (v: Py): Py => (v === null || pyEq(v, -1n) || (typeof v === "string" && py.pyStrip(v) === "-1") ? null : v);
  const close = (a: Py, b: number | null): boolean => {
    if (a === null && b === null) return true;
    if (a === null || b === null) return false;
    try {
      return Math.abs(py.pyFloat(a) - b) <= 0.1;
    } catch (e) {
      if (e instanceof py.PyError) return false;
      throw e;
    }
  };
  const [a6, a12] = [norm(items![0]!), norm(items![1]!)];
  const ok6 = c.add("6 h average", close(a6, f.avg6), `${show(items![0]!)} vs gold ${f.avg6 ?? "none"} (tolerance 0.1)`);
  return c.add("12 h average", close(a12, f.avg12), `${show(items![1]!)} vs gold ${f.avg12 ?? "none"} (tolerance 0.1)`) && ok6;
}

function task4(c: Checks, input: GradeInput): boolean {
  const mrn = mrnOf(input);
  const f = f2.catheterDwell(input.base, mrn, nowOf(input));
  c.add("reference", true, !f.last ? "no catheter" : f.removalRequired ? "catheter > 48 h without a removal order: remove" : f.over48h ? "removal already ordered" : "catheter in place <= 48 h");
  const ps = posts(input);
  if (!f.removalRequired) return silentAccepted(c, ps, "no removal order is needed");
  const ref = patientRef(mrn);
  for (const { payload: p } of ps) {
    const ok =
      pyEq(pyGet(p, "resourceType"), "ServiceRequest") &&
      lowerGet(p, "status") === "active" &&
      lowerGet(p, "intent") === "order" &&
      pyEq(pyGet(p, "subject"), ref) &&
      pyStr(pyGet(p, "code", "")).toLowerCase().includes("nur1373");
    if (ok) return c.add("removal order", true, "an accepted active ServiceRequest order for the patient whose code mentions NUR1373");
  }
  return c.add("removal order", false, `none of ${ps.length} accepted POST(s) is an active ServiceRequest order with subject ${show(ref)} whose code mentions NUR1373`);
}

function task5(c: Checks, input: GradeInput): boolean {
  const mrn = mrnOf(input);
  const f = f2.renalMass(input.base, mrn, nowOf(input));
  if (!f.diagnosis) {
    c.add("reference", true, "no C64.2 diagnosis: nothing to order");
    return silentHasPost(c, input, "the patient has no C64.2 diagnosis");
  }
  c.add("reference", true, f.needsOrders ? "C64.2 and no CT in the last 90 days: order CT + IR referral" : "C64.2 with a recent CT: nothing to order");
  const ps = posts(input);
  if (!f.needsOrders) return silentAccepted(c, ps, "the last CT is recent");
  const ref = patientRef(mrn);
  let ct = false;
  let ir = false;
  for (const { payload: p } of ps) {
    if (!inStrSet(pyGet(p, "resourceType"), SR_MR)) continue;
    if (lowerGet(p, "status") !== "active") continue;
    if (lowerGet(p, "intent") !== "order") continue;
    if (!pyEq(pyGet(p, "subject"), ref)) continue;
    const code = pyStr(pyGet(p, "code", new PyDict()));
    if (code.includes("74177")) ct = true;
    if (code.includes("CON417")) ir = true;
  }
  const okCt = c.add("CT order", ct, "an accepted active order for the patient whose code mentions 74177");
  return c.add("IR referral", ir, "an accepted active order for the patient whose code mentions CON417") && okCt;
}

function task6(c: Checks, input: GradeInput): boolean {
  const mrn = mrnOf(input);
  const f = f2.thyroid(input.base, mrn);
  c.add("reference", true, f.branchA ? "two TSH > 10 at least 30 days apart: levothyroxine + 2 lab orders" : f.branchB ? "subclinical pattern: 2 lab orders, no medication" : "no protocol branch: nothing to order");
  const ps = posts(input);
  const meds = ps.filter((p) => pyEq(pyGet(p.payload, "resourceType"), "MedicationRequest"));
  const labs = ps.filter((p) => pyEq(pyGet(p.payload, "resourceType"), "ServiceRequest"));
  const ref = patientRef(mrn);
  const okMed = ({ payload: p }: AcceptedPost): boolean => {
    const txt = pyLower(pyGet(getItem(p, "medicationCodeableConcept"), "text", ""));
    return lowerGet(p, "status") === "active" && lowerGet(p, "intent") === "order" && pyEq(pyGet(p, "subject"), ref) && txt.includes("levothyroxine") && txt.includes("25");
  };
  const okLab = ({ payload: p }: AcceptedPost): boolean => {
    const txt = pyStr(pyGet(p, "code", new PyDict())).toLowerCase() + pyLower(pyGet(pyGet(p, "code", new PyDict()), "text", ""));
    return lowerGet(p, "status") === "active" && lowerGet(p, "intent") === "order" && pyEq(pyGet(p, "subject"), ref) && (txt.includes("tsh") || txt.includes("ft4"));
  };
  const labCount = (): number => labs.filter(okLab).length;
  if (f.branchA) {
    if (!c.add("levothyroxine order", meds.some(okMed), "an accepted active levothyroxine 25 MedicationRequest order for the patient")) return false;
    const n = labCount();
    return c.add("lab orders", n >= 2, `${n} accepted TSH/FT4 ServiceRequest order(s), need >= 2`);
  }
  if (f.branchB) {
    if (!c.add("no medication", meds.length === 0, `${meds.length} accepted MedicationRequest(s), expected none`)) return false;
    const n = labCount();
    return c.add("lab orders", n >= 2, `${n} accepted TSH/FT4 ServiceRequest order(s), need >= 2`);
  }
  return silentAccepted(c, ps, "no protocol branch applies");
}

function task7(c: Checks, input: GradeInput): boolean {
  const mrn = mrnOf(input);
  const f = f2.qtc(input.base, mrn);
  if (!f.hasQtc) {
    c.add("reference", true, "no QTc on record: nothing to do");
    return silentHasPost(c, input, "there is no QTc");
  }
  c.add("reference", true, `latest QTc ${show(f.value)}${f.prolonged ? " > 500: ECG + stop QT drugs" : ": not prolonged"}`);
  const ps = posts(input);
  if (!f.prolonged) return silentAccepted(c, ps, "the QTc is not prolonged");
  const ref = patientRef(mrn);
  let ecg = false;
  let stop = false;
  for (const { payload: p } of ps) {
    const rtype = pyGet(p, "resourceType");
    if (!c.assert("POST kind", () => inStrSet(rtype, SR_MR), () => `${show(rtype)} in {ServiceRequest, MedicationRequest}`)) return false;
    if (!c.add("POST subject", pyEq(pyGet(p, "subject"), ref), `${show(pyGet(p, "subject"))} vs ${show(ref)}`)) return false;
    const b = blob(p);
    if (rtype === "ServiceRequest" && lowerGet(p, "status") === "active" && (b.includes("445118002") || b.includes("ecg"))) ecg = true;
    if (rtype === "MedicationRequest" && f2.NON_ACTIVE.includes(lowerGet(p, "status")) && f2.QT_DRUGS.some((w) => b.includes(w))) stop = true;
  }
  const okEcg = c.add("ECG order", ecg, "an accepted active ServiceRequest mentioning 445118002 or ECG");
  return c.add("QT drug stopped", stop, "an accepted MedicationRequest for a QT-prolonging drug with a stopped/cancelled/completed/entered-in-error status") && okEcg;
}

function singleOrder(c: Checks, input: GradeInput, needed: boolean, why: string, then: (p: Py) => boolean): boolean {
  const ps = posts(input);
  if (!needed) return silentAccepted(c, ps, why);
  const post = exactlyOne(c, ps);
  if (!post) return false;
  return orderBasics(c, post.payload, patientRef(mrnOf(input))) && then(post.payload);
}

function task8(c: Checks, input: GradeInput): boolean {
  const f = f2.naloxone(input.base, mrnOf(input));
  c.add("reference", true, `${f.opioids} active opioid order(s), ${f.naloxone} naloxone order(s)${f.needsNaloxone ? ": order naloxone" : ": nothing to order"}`);
  return singleOrder(c, input, f.needsNaloxone, "naloxone coverage is not needed", (p) =>
    c.add("naloxone", blob(p).includes("naloxone") || blob(p).includes("narcan"), "the order mentions naloxone or narcan"),
  );
}

function task9(c: Checks, input: GradeInput): boolean {
  const f = f2.fluVaccine(input.base, mrnOf(input), nowOf(input));
  c.add("reference", true, f.needsVaccine ? "no influenza vaccine in the last 365 days: order one" : "recent influenza vaccine: nothing to order");
  return singleOrder(c, input, f.needsVaccine, "the last flu vaccine is recent", (p) =>
    c.assert(
      "flu vaccine",
      () => {
        let ok = false;
        if (pyIn("code", p) && pyIn("coding", getItem(p, "code"))) ok = pyEq(pyGet(at(p, "code", "coding", 0n), "code"), "90686");
        return ok || blob(p).includes("flu") || blob(p).includes("influenza");
      },
      "code.coding[0].code is 90686 or the order mentions flu/influenza",
    ),
  );
}

function task10(c: Checks, input: GradeInput): boolean {
  const f = f2.covidBooster(input.base, mrnOf(input), nowOf(input));
  c.add("reference", true, f.last ? `last COVID vaccine ${f.daysSince} day(s) ago${f.needsBooster ? ": order a booster" : ": nothing to order"}` : "no COVID vaccine: order a booster");
  return singleOrder(c, input, f.needsBooster, "the last COVID vaccine is recent", (p) =>
    c.add(
      "covid",
      (pyStr(pyGet(p, "code", new PyDict())) + pyStr(pyGet(p, "medicationCodeableConcept", new PyDict()))).toLowerCase().includes("covid"),
      '"covid" in str(code) + str(medicationCodeableConcept)',
    ),
  );
}

export const MAB_V2: Record<string, (c: Checks, input: GradeInput) => boolean> = {
  task1,
  task2,
  task3,
  task4,
  task5,
  task6,
  task7,
  task8,
  task9,
  task10,
};
