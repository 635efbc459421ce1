// Grading branches: which path of its grader a task takes on a patient's base data.
// Computed with the same fact functions the graders use.
import type { FhirReader } from "../fhir/index.ts";
import { defaultClock } from "./clock.ts";
import { hoursBefore, latestObservation, birthDate, V1_TODAY } from "./facts/v1.ts";
import * as v2 from "./facts/v2.ts";
import { DAY_US, dtDiffUs, fromIsoformat, ge, gt, lt, PyError, type Py } from "./python/index.ts";
import type { Suite } from "./task.ts";

const BRANCHES: Record<Suite, Record<string, readonly string[]>> = {
  "mab-v1": {
    task1: ["found", "not-found"],
    task2: ["birthday-passed", "birthday-ahead"],
    task3: ["record"],
    task4: ["no-mg-24h", "mg-24h"],
    task5: ["no-mg-24h", "mg>1.9", "mg=1.9", "mg1.5-1.9", "mg1.0-1.49", "mg<1.0"],
    task6: ["no-glu-24h", "glu-24h"],
    task7: ["no-glu", "glu"],
    task8: ["refer"],
    task9: ["no-k", "k>=3.5", "k<3.5"],
    task10: ["no-a1c", "a1c-old", "a1c-recent"],
  },
  "mab-v2": {
    task1: ["no-ct", "ct-old", "ct-recent"],
    task2: ["one-heparin", "create", "stop-duplicates", "create-and-stop"],
    task3: ["hr-6h", "hr-12h-only", "no-hr-12h"],
    task4: ["no-catheter", "catheter-48h-or-less", "removal-ordered", "remove"],
    task5: ["no-c64.2", "ct-recent", "ct-old", "no-ct"],
    task6: ["branch-a", "branch-b", "neither"],
    task7: ["no-qtc", "qtc-normal", "qtc-prolonged"],
    task8: ["no-opioid", "opioid-with-naloxone", "needs-naloxone"],
    task9: ["no-flu", "flu-old", "flu-recent"],
    task10: ["no-covid", "covid-old", "covid-recent"],
    v2_task5: ["no-mg-24h", "mg>=2.0", "mg<2.0"],
    v2_task9: ["no-k", "k>=3.5", "k<3.5"],
    v2_task10: ["no-a1c", "a1c-old", "a1c-recent"],
  },
};

export function taskTypes(suite: Suite): string[] {
  return Object.keys(BRANCHES[suite]);
}

export function branchesOf(suite: Suite, type: string): string[] {
  const b = BRANCHES[suite][type];
  if (!b) throw new Error(`unknown task type ${suite}/${type}`);
  return [...b];
}

export class BranchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BranchError";
  }
}

/** v1 task5's magnesium branch for a value v (latest MG in the 24 h before the clock). */
export function magnesiumBranch(v: Py | undefined): string {
  if (v === undefined) return "no-mg-24h";
  if (gt(v, 1.9)) return "mg>1.9";
  if (!lt(v, 1.9)) return "mg=1.9";
  if (lt(v, 1n)) return "mg<1.0";
  if (lt(v, 1.5)) return "mg1.0-1.49";
  return "mg1.5-1.9";
}

const YEAR_US = 365 * DAY_US;

/** The grading branch the patient's base data puts a task in. Throws BranchError when the data makes
 *  the official grader raise (such a patient cannot be graded for this type). */
export function branchOf(suite: Suite, type: string, reader: FhirReader, mrn: string | undefined, clock?: string): string {
  const now = clock ?? defaultClock(suite, type);
  branchesOf(suite, type);
  if (suite === "mab-v1" && type === "task1") return mrn ? "found" : "not-found";
  if (!mrn) throw new BranchError(`${suite}/${type} needs a patient MRN`);
  try {
    return compute(suite, type, reader, mrn, now);
  } catch (e) {
    if (e instanceof PyError) throw new BranchError(`${suite}/${type} on ${mrn}: the data makes the official grader raise (${e.message})`);
    throw e;
  }
}

function compute(suite: Suite, type: string, reader: FhirReader, mrn: string, now: string): string {
  if (suite === "mab-v1") {
    switch (type) {
      case "task2": {
        const m = /^\d{4}-(\d{1,2})-(\d{1,2})$/.exec(birthDate(reader, mrn));
        if (!m) throw new PyError("ValueError", "birthDate does not match %Y-%m-%d");
        const [mo, d] = [Number(m[1]), Number(m[2])];
        return V1_TODAY.m < mo || (V1_TODAY.m === mo && V1_TODAY.d < d) ? "birthday-ahead" : "birthday-passed";
      }
      case "task3":
        return "record";
      case "task8":
        return "refer";
      case "task4":
        return latestObservation(reader, mrn, "MG", hoursBefore(now, 24)) ? "mg-24h" : "no-mg-24h";
      case "task5":
        return magnesiumBranch(latestObservation(reader, mrn, "MG", hoursBefore(now, 24))?.value);
      case "task6":
        return latestObservation(reader, mrn, "GLU", hoursBefore(now, 24)) ? "glu-24h" : "no-glu-24h";
      case "task7":
        return latestObservation(reader, mrn, "GLU") ? "glu" : "no-glu";
      case "task9": {
        const k = latestObservation(reader, mrn, "K");
        return !k ? "no-k" : ge(k.value, 3.5) ? "k>=3.5" : "k<3.5";
      }
      case "task10": {
        const a = latestObservation(reader, mrn, "A1C");
        if (!a) return "no-a1c";
        return dtDiffUs(a.at, fromIsoformat("2022-11-13T10:15:00+00:00")) < 0 ? "a1c-old" : "a1c-recent";
      }
    }
  } else {
    switch (type) {
      case "task1": {
        const f = v2.ctFollowUp(reader, mrn, now);
        return !f.last ? "no-ct" : f.required ? "ct-old" : "ct-recent";
      }
      case "task2": {
        const f = v2.dvtProphylaxis(reader, mrn);
        if (f.needCreate) return f.needStops > 0 ? "create-and-stop" : "create";
        return f.needStops > 0 ? "stop-duplicates" : "one-heparin";
      }
      case "task3": {
        const f = v2.heartRateAverages(reader, mrn, now);
        return f.n6 > 0 ? "hr-6h" : f.n12 > 0 ? "hr-12h-only" : "no-hr-12h";
      }
      case "task4": {
        const f = v2.catheterDwell(reader, mrn, now);
        if (!f.last) return "no-catheter";
        if (!f.over48h) return "catheter-48h-or-less";
        return f.removalRequired ? "remove" : "removal-ordered";
      }
      case "task5": {
        const f = v2.renalMass(reader, mrn, now);
        if (!f.diagnosis) return "no-c64.2";
        return !f.lastCt ? "no-ct" : f.needsOrders ? "ct-old" : "ct-recent";
      }
      case "task6": {
        const f = v2.thyroid(reader, mrn);
        return f.branchA ? "branch-a" : f.branchB ? "branch-b" : "neither";
      }
      case "task7": {
        const f = v2.qtc(reader, mrn);
        return !f.hasQtc ? "no-qtc" : f.prolonged ? "qtc-prolonged" : "qtc-normal";
      }
      case "task8": {
        const f = v2.naloxone(reader, mrn);
        return f.needsNaloxone ? "needs-naloxone" : f.opioids > 0 ? "opioid-with-naloxone" : "no-opioid";
      }
      case "task9": {
        const f = v2.fluVaccine(reader, mrn, now);
        return !f.last ? "no-flu" : f.needsVaccine ? "flu-old" : "flu-recent";
      }
      case "task10": {
        const f = v2.covidBooster(reader, mrn, now);
        return !f.last ? "no-covid" : f.needsBooster ? "covid-old" : "covid-recent";
      }
      case "v2_task5": {
        const mg = latestObservation(reader, mrn, "MG", hoursBefore(now, 24));
        return !mg ? "no-mg-24h" : lt(mg.value, 2.0) ? "mg<2.0" : "mg>=2.0";
      }
      case "v2_task9": {
        const k = latestObservation(reader, mrn, "K");
        return !k ? "no-k" : lt(k.value, 3.5) ? "k<3.5" : "k>=3.5";
      }
      case "v2_task10": {
        const a = latestObservation(reader, mrn, "A1C");
        if (!a) return "no-a1c";
        return dtDiffUs(fromIsoformat(now), a.at) > YEAR_US ? "a1c-old" : "a1c-recent";
      }
    }
  }
  throw new Error(`unknown task type ${suite}/${type}`);
}
