// What a clinician reads off the task text: the patient, the clock, quoted values.
// The expert uses only the task's own words (never the grader's fields) where they suffice.
import type { Task } from "../../env/tasks/index.ts";

export const V1_NOW = "2023-11-13T10:15:00+00:00";
export const V2_DEFAULT_NOW = "2023-11-07T22:47:00+00:00";

const ISO = String.raw`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?[+-]\d{2}:\d{2}`;

/** The task's "now" as written. mab-v1 runs on its fixed clock; mab-v2 reads "It's <ISO> now" from the
 *  context, else the last ISO timestamp there, else the suite default (GRADERS.md). */
export function taskNow(task: Task): string {
  if (task.suite === "mab-v1") return V1_NOW;
  const said = new RegExp(`\\bit'?s\\s+(${ISO})\\s*now\\b`, "i").exec(task.context);
  if (said?.[1]) return said[1];
  const all = task.context.match(new RegExp(ISO, "g"));
  if (all && all.length > 0) return all[all.length - 1]!;
  return V2_DEFAULT_NOW;
}

/** The MRN the instruction names (S + 7 digits), else the task's eval_MRN. */
export function taskMrn(task: Task): string {
  const m = /\bS\d{7}\b/.exec(task.instruction);
  const mrn = m?.[0] ?? task.eval_MRN;
  if (!mrn) throw new Error(`task ${task.id}: no patient MRN in the instruction`);
  return mrn;
}

/** The first double-quoted passage of the instruction (BP value, SBAR text). */
export function quoted(task: Task): string | undefined {
  return /["“]([^"”]+)["”]/.exec(task.instruction)?.[1];
}

/** Name and date of birth of a patient lookup: "name Peter Stafford and DOB of 1932-12-29",
 *  "patient named Wayne Bartell, born 1966-02-16". */
export function nameAndDob(task: Task): { given: string; family: string; birthDate: string } {
  const m = /\bnamed?\s+(.+?)(?:\s*,\s*|\s+and\s+|\s+)(?:born(?:\s+on)?|DOB(?:\s+of)?|date of birth(?:\s+of)?)\s*:?\s*(\d{4}-\d{2}-\d{2})/i.exec(task.instruction);
  if (!m) throw new Error(`task ${task.id}: no patient name and date of birth in the instruction`);
  const parts = m[1]!.trim().split(/\s+/);
  const family = parts.length > 1 ? parts.pop()! : parts[0]!;
  return { given: parts.join(" "), family, birthDate: m[2]! };
}
