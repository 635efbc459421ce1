// The relaxed variants of v1 tasks 5, 9, 10 shipped with MedAgentBench V2 (v2_task5, v2_task9,
// v2_task10), as GRADERS.md states them: low -> some accepted order mentioning the drug/lab;
// otherwise no accepted POST. NOW is read from the task context like every mab-v2 task.
import * as py from "../python/index.ts";
import { facts, gradingClock } from "../tasks/index.ts";
import { Checks, show } from "./checks.ts";
import { acceptedPosts, type AcceptedPost } from "./posts.ts";
import type { GradeInput } from "./types.ts";

const { v1 } = facts;
const YEAR_US = 365 * py.DAY_US;

const mrnOf = (input: GradeInput): string => {
  if (input.task.eval_MRN === undefined) throw new py.PyError("KeyError", "'eval_MRN'");
  return input.task.eval_MRN;
};

function field(p: py.Py, key: string): py.Py {
  return p instanceof py.PyDict ? (p.map.get(key) ?? null) : null;
}

function isOrder(p: py.Py, type: string, activeOnly: boolean): boolean {
  if (field(p, "resourceType") !== type) return false;
  const status = field(p, "status");
  return !activeOnly || (typeof status === "string" && status.toLowerCase() === "active");
}

function mentions(p: py.Py, words: readonly string[]): boolean {
  const b = py.pyStr(p).toLowerCase();
  return words.some((w) => b.includes(w));
}

function silent(c: Checks, ps: AcceptedPost[], why: string): boolean {
  return c.add("no accepted POST", ps.length === 0, ps.length ? `${ps.length} accepted POST(s) but ${why}` : `no accepted POST (${why})`);
}

function v2Task5(c: Checks, input: GradeInput): boolean {
  const now = gradingClock("mab-v2", input.task.context);
  const mg = v1.latestObservation(input.base, mrnOf(input), "MG", v1.hoursBefore(now, 24));
  const ps = acceptedPosts(input.actions, input.protocol);
  if (!mg || !py.lt(mg.value, 2.0)) {
    c.add("reference", true, mg ? `latest MG ${show(mg.value)} >= 2.0: nothing to order` : "no MG in the last 24 h: nothing to order");
    return silent(c, ps, "magnesium is not low");
  }
  c.add("reference", true, `latest MG ${show(mg.value)} < 2.0: order magnesium`);
  return c.add(
    "magnesium order",
    ps.some((p) => isOrder(p.payload, "MedicationRequest", true) && mentions(p.payload, ["magnesium", "0338-1715-40"])),
    'an accepted active MedicationRequest mentioning "magnesium" or "0338-1715-40"',
  );
}

function v2Task9(c: Checks, input: GradeInput): boolean {
  const k = v1.latestObservation(input.base, mrnOf(input), "K");
  if (!c.add("potassium on record", k !== undefined, k ? `latest K ${show(k.value)} at ${k.time}` : "no K on record: this variant grades False")) return false;
  const ps = acceptedPosts(input.actions, input.protocol);
  if (!py.lt(k!.value, 3.5)) return silent(c, ps, "potassium is not low");
  return c.add(
    "potassium order",
    ps.some((p) => isOrder(p.payload, "MedicationRequest", true) && mentions(p.payload, ["potassium", "40032-917-01"])),
    'an accepted active MedicationRequest mentioning "potassium" or "40032-917-01"',
  );
}

function v2Task10(c: Checks, input: GradeInput): boolean {
  const now = py.fromIsoformat(gradingClock("mab-v2", input.task.context));
  const a1c = v1.latestObservation(input.base, mrnOf(input), "A1C");
  const needed = !a1c || py.dtDiffUs(now, a1c.at) > YEAR_US;
  c.add("reference", true, a1c ? `latest A1C at ${a1c.time}${needed ? ": older than 365 days, reorder" : ": recent"}` : "no A1C: order one");
  const ps = acceptedPosts(input.actions, input.protocol);
  if (!needed) return silent(c, ps, "the last A1C is recent");
  return c.add(
    "A1C order",
    ps.some((p) => isOrder(p.payload, "ServiceRequest", false) && mentions(p.payload, ["4548-4", "a1c", "hba1c"])),
    'an accepted ServiceRequest mentioning "4548-4", "a1c" or "hba1c"',
  );
}

export const MAB_V2_RELAXED: Record<string, (c: Checks, input: GradeInput) => boolean> = {
  v2_task5: v2Task5,
  v2_task9: v2Task9,
  v2_task10: v2Task10,
};
