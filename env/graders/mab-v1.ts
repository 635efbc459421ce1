// Graders of suite mab-v1 (MedAgentBench v1), verdict-exact to the official refsol (GRADERS.md).
import * as py from "../python/index.ts";
import { facts, V1_NOW } from "../tasks/index.ts";
import { checkAnswerEquals, parseAnswer } from "./answer.ts";
import { Checks, show } from "./checks.ts";
import { acceptedPosts, hasPost, type AcceptedPost } from "./posts.ts";
import type { GradeInput, GradeResult } from "./types.ts";

const { at, pyEq, pyIn, pyLen, PyDict, pyLower, pyStrip, pyAbs, sub, lt, le, gt } = py;
type Py = py.Py;

const v1 = facts.v1;
const OBS_CATEGORY = new PyDict([
  ["system", "http://hl7.org/fhir/observation-category"],
  ["code", "vital-signs"],
  ["display", "Vital Signs"],
]);

export function patientRef(mrn: string | undefined): py.PyDict {
  if (mrn === undefined) throw new py.PyError("KeyError", "'eval_MRN' (the task names no patient)");
  return new PyDict([["reference", `Patient/${mrn}`]]);
}

/** "No POST" gate of query tasks: true when the episode made no POST. */
export function noPost(c: Checks, input: GradeInput, why = "this task must not write"): boolean {
  const has = hasPost(input.actions, input.protocol);
  return c.add("no POST", !has, has ? `a POST was made but ${why}` : "no POST made");
}

/** extract_posts then `len(posts) == n`. */
export function postsExactly(c: Checks, input: GradeInput, n: number): AcceptedPost[] | undefined {
  const posts = acceptedPosts(input.actions, input.protocol);
  return c.add("accepted POST count", posts.length === n, `${posts.length} accepted POST(s), expected exactly ${n}`) ? posts : undefined;
}

export function urlIs(c: Checks, input: GradeInput, post: AcceptedPost, type: string, label = "POST URL"): boolean {
  const want = `${input.apiBase}${type}`;
  return c.add(label, post.url === want, `${JSON.stringify(post.url)} ${post.url === want ? "==" : "!="} ${JSON.stringify(want)}`);
}

const eq = (c: Checks, name: string, payload: Py, path: Py[], want: Py): boolean =>
  c.assert(name, () => pyEq(at(payload, ...path), want), () => `${show(at(payload, ...path))} vs expected ${show(want)}`);

const contains = (c: Checks, name: string, payload: Py, path: Py[], needle: string): boolean =>
  c.assert(name, () => pyIn(needle, at(payload, ...path)), () => `${JSON.stringify(needle)} in ${show(at(payload, ...path))}`);

const all = (xs: boolean[]): boolean => xs.every(Boolean);

function measuredValue(instruction: string): string {
  return /"(\d+\/\d+\s*mmHg)"/.exec(instruction)?.[1] ?? "118/77 mmHg";
}

function sbarText(instruction: string): string {
  const first = instruction.indexOf('"');
  const last = instruction.lastIndexOf('"');
  return first >= 0 && last > first ? instruction.slice(first + 1, last) : instruction;
}

function task1(c: Checks, input: GradeInput): boolean {
  if (!noPost(c, input)) return false;
  if (!c.add("gold answer", input.task.sol !== undefined, input.task.sol ? "task has sol" : "task has no sol (KeyError in the official grader)")) return false;
  return checkAnswerEquals(c, input.result, py.fromJs(input.task.sol));
}

function task2(c: Checks, input: GradeInput): boolean {
  if (!noPost(c, input)) return false;
  const dob = v1.birthDate(input.base, input.task.eval_MRN ?? missingMrn());
  const age = v1.ageOn(dob, v1.V1_TODAY);
  c.add("reference", true, `birthDate ${dob} -> age ${age} on 2023-11-13`);
  return checkAnswerEquals(c, input.result, [BigInt(age)]);
}

function missingMrn(): never {
  throw new py.PyError("KeyError", "'eval_MRN'");
}

function task3(c: Checks, input: GradeInput): boolean {
  const posts = postsExactly(c, input, 1);
  if (!posts) return false;
  const post = posts[0]!;
  if (!urlIs(c, input, post, "Observation")) return false;
  const p = post.payload;
  return all([
    eq(c, "resourceType", p, ["resourceType"], "Observation"),
    c.assert("category length 1", () => pyLen(at(p, "category")) === 1),
    c.assert("category coding length 1", () => pyLen(at(p, "category", 0n, "coding")) === 1),
    eq(c, "category coding", p, ["category", 0n, "coding", 0n], OBS_CATEGORY),
    eq(c, "code", p, ["code"], new PyDict([["text", "BP"]])),
    eq(c, "effectiveDateTime", p, ["effectiveDateTime"], V1_NOW),
    eq(c, "status", p, ["status"], "final"),
    eq(c, "valueString", p, ["valueString"], measuredValue(input.task.instruction)),
    eq(c, "subject", p, ["subject"], patientRef(input.task.eval_MRN)),
  ]);
}

const since24h = () => v1.hoursBefore(V1_NOW, 24);

function task4(c: Checks, input: GradeInput): boolean {
  if (!noPost(c, input)) return false;
  const mg = v1.latestObservation(input.base, input.task.eval_MRN ?? missingMrn(), "MG", since24h());
  c.add("reference", true, mg ? `latest MG in 24 h: ${show(mg.value)} at ${mg.time}` : "no MG in the last 24 h -> -1");
  return checkAnswerEquals(c, input.result, [mg ? mg.value : -1n]);
}

function medicationOrder(c: Checks, p: Py, ndc: string): boolean[] {
  return [
    eq(c, "resourceType", p, ["resourceType"], "MedicationRequest"),
    eq(c, "medication system", p, ["medicationCodeableConcept", "coding", 0n, "system"], "http://hl7.org/fhir/sid/ndc"),
    eq(c, "medication code", p, ["medicationCodeableConcept", "coding", 0n, "code"], ndc),
    contains(c, "authoredOn", p, ["authoredOn"], "2023-11-13T10:15"),
  ];
}

function task5(c: Checks, input: GradeInput): boolean {
  const mrn = input.task.eval_MRN ?? missingMrn();
  const mg = v1.latestObservation(input.base, mrn, "MG", since24h());
  if (!mg) {
    c.add("reference", true, "no MG in the last 24 h: nothing may be ordered (answer not checked)");
    return noPost(c, input, "no magnesium was measured in the last 24 h");
  }
  const v = mg.value;
  if (gt(v, 1.9)) {
    c.add("reference", true, `latest MG ${show(v)} > 1.9: no order`);
    if (!noPost(c, input, `magnesium ${show(v)} is not low`)) return false;
  } else {
    const dose = lt(v, 1n) ? 4n : lt(v, 1.5) ? 2n : 1n;
    c.add("reference", true, `latest MG ${show(v)} <= 1.9: order ${dose} g over ${dose} h`);
    const posts = postsExactly(c, input, 1);
    if (!posts) return false;
    if (!urlIs(c, input, posts[0]!, "MedicationRequest")) return false;
    const p = posts[0]!.payload;
    const ok = all([
      ...medicationOrder(c, p, "0338-1715-40"),
      eq(c, "route", p, ["dosageInstruction", 0n, "route"], "IV"),
      eq(c, "doseQuantity", p, ["dosageInstruction", 0n, "doseAndRate", 0n, "doseQuantity"], new PyDict([["value", dose], ["unit", "g"]])),
      eq(c, "rateQuantity", p, ["dosageInstruction", 0n, "doseAndRate", 0n, "rateQuantity"], new PyDict([["value", dose], ["unit", "h"]])),
      eq(c, "status", p, ["status"], "active"),
      eq(c, "intent", p, ["intent"], "order"),
      eq(c, "subject", p, ["subject"], patientRef(mrn)),
    ]);
    if (!ok) return false;
  }
  return checkAnswerEquals(c, input.result, [v], true);
}

function task6(c: Checks, input: GradeInput): boolean {
  if (!noPost(c, input)) return false;
  const vals = v1.observationsSince(input.base, input.task.eval_MRN ?? missingMrn(), "GLU", since24h());
  let sum = 0;
  for (const v of vals) sum = py.add(sum, v) as number; // glu_sum = 0. ; glu_sum += value
  const ref = vals.length ? sum / vals.length : -1;
  c.add("reference", true, vals.length ? `mean of ${vals.length} GLU value(s) in 24 h: ${ref}` : "no GLU in the last 24 h -> -1");
  const a = parseAnswer(input.result);
  if (!a.ok) return c.add("answer", false, `FINISH answer does not parse as JSON (${a.error})`);
  return c.assert(
    "answer",
    () => pyLen(a.value) === 1 && lt(pyAbs(sub(at(a.value, 0n), ref)), 0.1),
    () => `answer ${show(a.value)} vs reference [${ref}] (tolerance < 0.1)`,
  );
}

function task7(c: Checks, input: GradeInput): boolean {
  if (!noPost(c, input)) return false;
  const glu = v1.latestObservation(input.base, input.task.eval_MRN ?? missingMrn(), "GLU");
  c.add("reference", true, glu ? `latest GLU ${show(glu.value)} at ${glu.time}` : "no GLU -> -1");
  return checkAnswerEquals(c, input.result, [glu ? glu.value : -1n]);
}

function task8(c: Checks, input: GradeInput): boolean {
  const posts = postsExactly(c, input, 1);
  if (!posts) return false;
  if (!urlIs(c, input, posts[0]!, "ServiceRequest")) return false;
  const p = posts[0]!.payload;
  return all([
    eq(c, "resourceType", p, ["resourceType"], "ServiceRequest"),
    eq(c, "code system", p, ["code", "coding", 0n, "system"], "http://snomed.info/sct"),
    eq(c, "code", p, ["code", "coding", 0n, "code"], "306181000000106"),
    eq(c, "authoredOn", p, ["authoredOn"], V1_NOW),
    eq(c, "status", p, ["status"], "active"),
    eq(c, "intent", p, ["intent"], "order"),
    eq(c, "priority", p, ["priority"], "stat"),
    contains(c, "note text", p, ["note", "text"], sbarText(input.task.instruction)),
    eq(c, "subject", p, ["subject"], patientRef(input.task.eval_MRN)),
  ]);
}

function task9(c: Checks, input: GradeInput): boolean {
  const mrn = input.task.eval_MRN ?? missingMrn();
  const k = v1.latestObservation(input.base, mrn, "K");
  if (!k || py.ge(k.value, 3.5)) {
    c.add("reference", true, k ? `latest K ${show(k.value)} >= 3.5: no order` : "no K on record: no order");
    if (!noPost(c, input, "potassium is not low")) return false;
  } else {
    const v = k.value;
    const dose = ((3.5 - Number(v)) / 0.1) * 10;
    c.add("reference", true, `latest K ${show(v)} < 3.5: order ${dose} mEq + recheck`);
    const posts = postsExactly(c, input, 2);
    if (!posts) return false;
    if (!urlIs(c, input, posts[0]!, "MedicationRequest", "first POST URL")) return false;
    const p = posts[0]!.payload;
    const okMed = all([
      ...medicationOrder(c, p, "40032-917-01"),
      c.assert("route", () => pyStrip(pyLower(at(p, "dosageInstruction", 0n, "route"))) === "oral", () => `${show(at(p, "dosageInstruction", 0n, "route"))} is oral`),
      c.assert(
        "dose",
        () => le(pyAbs(sub(at(p, "dosageInstruction", 0n, "doseAndRate", 0n, "doseQuantity", "value"), dose)), 0.1),
        () => `${show(at(p, "dosageInstruction", 0n, "doseAndRate", 0n, "doseQuantity", "value"))} within 0.1 of ${dose}`,
      ),
      eq(c, "dose unit", p, ["dosageInstruction", 0n, "doseAndRate", 0n, "doseQuantity", "unit"], "mEq"),
      eq(c, "status", p, ["status"], "active"),
      eq(c, "intent", p, ["intent"], "order"),
      eq(c, "subject", p, ["subject"], patientRef(mrn)),
    ]);
    if (!okMed) return false;
    if (!urlIs(c, input, posts[1]!, "ServiceRequest", "second POST URL")) return false;
    const q = posts[1]!.payload;
    const okLab = all([
      eq(c, "lab resourceType", q, ["resourceType"], "ServiceRequest"),
      eq(c, "lab code system", q, ["code", "coding", 0n, "system"], "http://loinc.org"),
      eq(c, "lab code", q, ["code", "coding", 0n, "code"], "2823-3"),
      eq(c, "lab authoredOn", q, ["authoredOn"], V1_NOW),
      eq(c, "lab status", q, ["status"], "active"),
      eq(c, "lab intent", q, ["intent"], "order"),
      eq(c, "lab priority", q, ["priority"], "stat"),
      eq(c, "lab subject", q, ["subject"], patientRef(mrn)),
      contains(c, "lab occurrenceDateTime", q, ["occurrenceDateTime"], "2023-11-14T08:"),
    ]);
    if (!okLab) return false;
  }
  return checkAnswerEquals(c, input.result, [k ? k.value : -1n], true);
}

function task10(c: Checks, input: GradeInput): boolean {
  const mrn = input.task.eval_MRN ?? missingMrn();
  const a1c = v1.latestObservation(input.base, mrn, "A1C");
  const ref: Py = a1c ? [a1c.value, a1c.time] : [-1n];
  const needed = !a1c || py.dtCmp(a1c.at, py.fromIsoformat("2022-11-13T10:15:00+00:00")) < 0;
  c.add("reference", true, a1c ? `latest A1C ${show(a1c.value)} at ${a1c.time}${needed ? ": older than a year, reorder" : ": recent, no order"}` : "no A1C: order one");
  if (needed) {
    const posts = postsExactly(c, input, 1);
    if (!posts) return false;
    if (!urlIs(c, input, posts[0]!, "ServiceRequest")) return false;
    const p = posts[0]!.payload;
    const ok = all([
      eq(c, "resourceType", p, ["resourceType"], "ServiceRequest"),
      eq(c, "code system", p, ["code", "coding", 0n, "system"], "http://loinc.org"),
      eq(c, "code", p, ["code", "coding", 0n, "code"], "4548-4"),
      eq(c, "authoredOn", p, ["authoredOn"], V1_NOW),
      eq(c, "status", p, ["status"], "active"),
      eq(c, "intent", p, ["intent"], "order"),
      eq(c, "priority", p, ["priority"], "stat"),
      eq(c, "subject", p, ["subject"], patientRef(mrn)),
    ]);
    if (!ok) return false;
  } else if (!noPost(c, input, "the last A1C is recent")) return false;
  return checkAnswerEquals(c, input.result, ref, true);
}

export const MAB_V1: Record<string, (c: Checks, input: GradeInput) => boolean> = {
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

export type { GradeResult };
