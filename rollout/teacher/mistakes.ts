// How a stand-in episode goes wrong: one mistake per wrong episode, drawn at its first turn, and the
// realistic shapes each takes (a wrong number, a broken POST body, chatter instead of an action...).
import { Rng } from "../../env/util/index.ts";
import type { Protocol } from "../../env/protocol/index.ts";

export const MISTAKES = [
  "wrong_answer", // FINISH with a wrong value
  "wrong_post_value", // a POST whose body carries a wrong value
  "missing_post", // the order is never placed
  "malformed_post", // a POST whose body is not JSON (text) / a create call with arguments that are not JSON (tools)
  "invalid_action", // a turn that is no action (prose instead of GET/POST/FINISH, or no tool call)
  "text_around_finish", // prose around FINISH (text) / a sentence as the finish value (tools)
  "premature_finish", // FINISH before the work is done
  "malformed_call", // tools only: a search call whose arguments are not JSON (the model then repeats it properly)
  "unneeded_post", // not drawn: what a POST mistake becomes when the task needs no order (the model orders anyway)
] as const;
export type Mistake = (typeof MISTAKES)[number];

const TEXT_WEIGHTS: [Mistake, number][] = [
  ["wrong_answer", 2],
  ["wrong_post_value", 2],
  ["missing_post", 2.5],
  ["malformed_post", 1.5],
  ["invalid_action", 2.5],
  ["text_around_finish", 1.5],
  ["premature_finish", 2],
];
const WEIGHTS: Record<Protocol, [Mistake, number][]> = { text: TEXT_WEIGHTS, tools: [...TEXT_WEIGHTS, ["malformed_call", 1]] };

export interface EpisodePlan {
  /** null: the episode plays the expert throughout. */
  mistake: Mistake | null;
  /** For mistakes that strike at a point in the episode: how many requests come first. */
  at: number;
  /** Seeds the details of the mistake (which value, which wording). */
  seed: number;
}

export function drawPlan(rng: Rng, errorRate: number, protocol: Protocol): EpisodePlan {
  const wrong = rng.float() < errorRate;
  const weights = WEIGHTS[protocol];
  let u = rng.float() * weights.reduce((s, [, w]) => s + w, 0);
  let mistake: Mistake = weights[0]![0];
  for (const [m, w] of weights) {
    mistake = m;
    if ((u -= w) < 0) break;
  }
  return { mistake: wrong ? mistake : null, at: rng.int(1, 2), seed: rng.next32() };
}

/** A realistic wrong number: off by one or two for integers (ages, counts), scaled for measurements. */
export function wrongNumber(x: number, rng: Rng): number {
  if (x === -1) return rng.pick([0, 1]);
  if (Number.isInteger(x)) {
    const y = rng.pick([x + 1, x - 1, x + 2, x * 10]);
    return y === x ? x + 1 : y;
  }
  const y = Math.round(x * rng.pick([0.8, 1.25, 1.5]) * 100) / 100;
  return y === x ? Math.round((x + 1) * 100) / 100 : y;
}

/** One digit changed (a wrong MRN, date or reading), or an invented MRN when there is no digit. */
export function wrongString(s: string, rng: Rng): string {
  const digits = [...s.matchAll(/\d/g)].map((m) => m.index);
  if (digits.length === 0) return `S${rng.digits(7)}`;
  const i = digits[digits.length - 1]!;
  const d = Number(s[i]);
  return s.slice(0, i) + String((d + rng.int(1, 8)) % 10) + s.slice(i + 1);
}

export function wrongAnswer(answer: readonly unknown[], rng: Rng): unknown[] {
  if (answer.length === 0) return [-1];
  const out = [...answer];
  const numbers = out.flatMap((v, i) => (typeof v === "number" ? [i] : []));
  const strings = out.flatMap((v, i) => (typeof v === "string" ? [i] : []));
  if (numbers.length) {
    const i = rng.pick(numbers);
    out[i] = wrongNumber(out[i] as number, rng);
  } else if (strings.length) {
    const i = rng.pick(strings);
    out[i] = wrongString(out[i] as string, rng);
  } else out[0] = -1;
  return out;
}

/** A copy of a POST body with one value wrong: a dose or reading (a number), an order or drug code, the recorded
 *  reading text, or the patient reference. `patientOnly`: the patient reference (mab-v2 graders match orders by
 *  keywords, which survive a wrong digit, but the patient exactly). */
export function wrongBody<T extends Record<string, unknown>>(body: T, rng: Rng, patientOnly = false): T {
  const copy = structuredClone(body);
  const targets: [Record<string | number, unknown>, string | number][] = [];
  const visit = (node: unknown) => {
    if (!node || typeof node !== "object") return;
    for (const [k, v] of Object.entries(node)) {
      const key = Array.isArray(node) ? Number(k) : k;
      const parent = node as Record<string | number, unknown>;
      if (typeof v === "number") {
        if (!patientOnly) targets.push([parent, key]);
      } else if (typeof v === "string" && (patientOnly ? key === "reference" : key === "code" || key === "reference" || key === "valueString") && /\d/.test(v)) {
        targets.push([parent, key]);
      }
      else visit(v);
    }
  };
  visit(copy);
  if (targets.length === 0) return copy;
  const [parent, key] = rng.pick(targets);
  const v = parent[key];
  parent[key] = typeof v === "number" ? wrongNumber(v, rng) : wrongString(v as string, rng);
  return copy;
}

/** JSON that does not parse, the way models break it: Python-style quotes, or cut off before the end. */
export function brokenJson(json: string, rng: Rng): string {
  return rng.chance(0.5) ? json.replaceAll('"', "'") : json.slice(0, Math.max(1, json.length - 1 - rng.int(0, Math.min(12, json.length - 2))));
}

/** Text-protocol prose instead of an action (the correct turn may follow it, which still makes it invalid). */
export function chatter(turn: string, rng: Rng): string {
  return rng.pick([
    "I need to look up the patient's record before I can answer this question.",
    `To answer this, I will query the FHIR server.\n${turn}`,
    "Sure! Let me check the most recent results for this patient first.",
  ]);
}

export function toolChatter(rng: Rng): string {
  return rng.pick([
    "I'll look up the patient's record first.",
    "Let me check the relevant results before placing any order.",
    "I have reviewed the chart and there is nothing more to do.",
  ]);
}

/** Text around a FINISH: mostly before it (no longer an action), sometimes after it (the answer no longer parses). */
export function aroundFinish(finish: string, rng: Rng): string {
  return rng.pick([`The answer is ${finish}`, `Based on the results: ${finish}`, `Final answer: ${finish}`, `${finish}\n\nThis is based on the most recent measurement in the record.`]);
}

/** Tool protocol: the final answer written as prose instead of a finish call. */
export function proseAnswer(answer: readonly unknown[]): string {
  return answer.length ? `The answer is ${answer.map((v) => String(v)).join(", ")}. FINISH(${JSON.stringify(answer)})` : "All requested tasks are complete. FINISH([])";
}

/** An order nobody asked for, placed before finishing (the task's condition for ordering was not met). */
export function unneededOrder(mrn: string, now: string): { resourceType: "ServiceRequest"; [k: string]: unknown } {
  return {
    resourceType: "ServiceRequest",
    code: { coding: [{ system: "http://snomed.info/sct", code: "306206005", display: "Referral to service" }], text: "Follow-up" },
    authoredOn: now,
    status: "active",
    intent: "order",
    priority: "routine",
    subject: { reference: `Patient/${mrn}` },
    note: { text: "Follow-up as per protocol." },
  };
}
