// Preference data (formats dpo and kto) from the same tasks' correct and failed trajectories: which
// episodes pair up, decided from the scan's entries alone (deterministic: the set of rows, never their
// input order), and how a conversation splits into a prompt and a completion.
import { createHash } from "node:crypto";
import { groupBy } from "../env/util/index.ts";
import { z } from "zod";
import { canonicalJson } from "./convert.ts";
import type { Entry } from "./scan.ts";
import { jsonValue, TrlMessage, TrlRow } from "./schema.ts";

/** A prompt or completion of a dpo or kto row: messages as in the SFT rows. */
export const PreferenceMessages = z.array(jsonValue(TrlMessage)).min(1);

/** The columns a dpo or kto row carries over from its SFT row (a pair: the chosen one's), in row order. */
export const TaskColumns = TrlRow.pick({ task_id: true, suite: true, type: true, branch: true, kind: true, patient: true, patient_source: true, protocol: true }).shape;

export const taskColumns = (row: TrlRow) => ({
  task_id: row.task_id,
  suite: row.suite,
  type: row.type,
  branch: row.branch,
  kind: row.kind,
  patient: row.patient,
  patient_source: row.patient_source,
  protocol: row.protocol,
});

const bySample = (a: Entry, b: Entry) => a.sample - b.sample || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A failed episode is the model's failure unless the endpoint or the environment failed (the rejected side). */
export const isModelFailure = (e: { reward: number; status: string }) => e.reward < 1 && e.status !== "model_error" && e.status !== "error";

export const pairId = (chosen: string, rejected: string) => createHash("sha256").update(`${chosen}\u0000${rejected}`).digest("hex").slice(0, 24);

export interface PreferencePlan {
  pairs: { id: string; chosen: Entry; rejected: Entry }[];
  kto: { entry: Entry; label: boolean }[];
  /** Task prompts with correct and failed episodes (pairable), with only one kind, and pairs left out by the cap. */
  stats: { pairable_prompts: number; only_correct_prompts: number; only_failed_prompts: number; pairs_capped: number; kto_capped: number };
}

/**
 * Per task prompt (task, first messages, tools: `phash`), correct episodes sorted by (sample, id) and
 * failed ones likewise; pair k joins correct k mod C with failed k mod F, for k below
 * min(perTask, max(C, F)): every episode is used once before any is used twice, and no more than
 * `perTask` pairs come from one prompt. Two episodes whose assistant turns are equal never pair.
 * KTO takes the first `perTask` correct (label true) and failed (label false) episodes of each prompt.
 */
export function planPreferences(chosen: readonly Entry[], rejected: readonly Entry[], perTask: number): PreferencePlan {
  const key = (e: Entry) => `${e.task}\u0000${e.phash}`;
  const good = groupBy(chosen, key);
  const bad = groupBy(rejected, key);
  const out: PreferencePlan = { pairs: [], kto: [], stats: { pairable_prompts: 0, only_correct_prompts: 0, only_failed_prompts: 0, pairs_capped: 0, kto_capped: 0 } };
  for (const k of [...new Set([...good.keys(), ...bad.keys()])].sort()) {
    const c = [...(good.get(k) ?? [])].sort(bySample);
    const f = [...(bad.get(k) ?? [])].sort(bySample);
    for (const [list, label] of [[c, true], [f, false]] as const) {
      for (const entry of list.slice(0, perTask)) out.kto.push({ entry, label });
      out.stats.kto_capped += Math.max(0, list.length - perTask);
    }
    if (!c.length || !f.length) {
      out.stats[c.length ? "only_correct_prompts" : "only_failed_prompts"]++;
      continue;
    }
    out.stats.pairable_prompts++;
    const candidates = Math.max(c.length, f.length);
    let made = 0;
    for (let i = 0; i < candidates && made < perTask; i++) {
      const a = c[i % c.length]!;
      const b = f[i % f.length]!;
      if (a.ahash === b.ahash) continue;
      out.pairs.push({ id: pairId(a.id, b.id), chosen: a, rejected: b });
      made++;
    }
    out.stats.pairs_capped += Math.max(0, candidates - made);
  }
  return out;
}

/** The conversation up to its last assistant turn: the environment's reply to the final call is not the model's. */
export function upToLastAssistant(messages: readonly TrlMessage[]): TrlMessage[] {
  return messages.slice(0, messages.map((m) => m.role).lastIndexOf("assistant") + 1);
}

/** Where a conversation's first assistant turn starts (the prompt is everything before). */
export const firstAssistant = (messages: readonly TrlMessage[]) => messages.findIndex((m) => m.role === "assistant");

/**
 * How many leading messages two conversations share, cut back to just before an assistant turn
 * (so the prompt ends where the model speaks next): the DPO prompt, whose completions start where
 * the two trajectories part.
 */
export function sharedPrompt(a: readonly TrlMessage[], b: readonly TrlMessage[]): number {
  let same = 0;
  while (same < a.length && same < b.length && canonicalJson(a[same]) === canonicalJson(b[same])) same++;
  let k = same;
  while (k > 0 && !(a[k]?.role === "assistant" && b[k]?.role === "assistant")) k--;
  return k;
}
