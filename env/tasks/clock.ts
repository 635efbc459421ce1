// Task clocks ("now") of each suite (GRADERS.md).
import type { Suite } from "./task.ts";

export const V1_NOW = "2023-11-13T10:15:00+00:00";
export const V2_DEFAULT_NOW = "2023-11-07T22:47:00+00:00";

const V2_CLOCKS: Record<string, string> = {
  task3: "2023-11-07T22:47:00+00:00",
  task4: "2023-11-11T09:00:00+00:00",
  task9: "2024-01-09T00:00:00+00:00",
  task10: "2023-11-07T12:00:00+00:00",
  // The relaxed variants of v1 tasks run on the v1 clock.
  v2_task5: V1_NOW,
  v2_task9: V1_NOW,
  v2_task10: V1_NOW,
};

/** The clock a generated task of this suite/type runs at. */
export function defaultClock(suite: Suite, type: string): string {
  if (suite === "mab-v1" || suite === "workflows") return V1_NOW;
  return V2_CLOCKS[type] ?? V2_DEFAULT_NOW;
}

const ISO = String.raw`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?[+-]\d{2}:\d{2}`;
const PRIMARY = new RegExp(String.raw`\bIt'?s\s+(${ISO})\s*now\b`, "i");
const ANY = new RegExp(`(${ISO})`, "g");

/** The v2 graders' NOW: "It's <ISO> now" (case-insensitive), else the last ISO timestamp, else the default.
 *  Returns the timestamp text as written. */
export function clockFromContext(context: string): string {
  const m = PRIMARY.exec(context);
  if (m && validIso(m[1]!)) return m[1]!;
  if (!m) {
    const all = context.match(ANY);
    if (all && validIso(all[all.length - 1]!)) return all[all.length - 1]!;
  }
  return V2_DEFAULT_NOW;
}

function validIso(s: string): boolean {
  const nums = s.match(/\d+/g)!.map(Number);
  const [y, mo, d, h, mi, se] = nums as [number, number, number, number, number, number];
  const [oh, om] = nums.slice(-2) as [number, number];
  const dim = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= dim && h < 24 && mi < 60 && se < 60 && oh < 24 && om < 60;
}

/** The clock the graders use for a task: fixed for mab-v1, read from the context for mab-v2 and workflows. */
export function gradingClock(suite: Suite, context: string): string {
  return suite === "mab-v1" ? V1_NOW : clockFromContext(context);
}
