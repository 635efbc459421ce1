// A curriculum for GRPO: the tasks whose samples disagree. A group whose samples all get the same
// reward has zero advantage, so a task a policy always or never solves costs compute and teaches
// nothing; eval rows with several samples per task say which tasks those are.
import { z } from "zod";

/** The fields of an episode row the selection reads. */
export const SampleRow = z.looseObject({
  suite: z.string().min(1),
  task_id: z.string().min(1),
  sample: z.number().int().min(0).default(0),
  reward: z.number().min(0).max(1),
  status: z.string(),
  policy: z.union([z.string(), z.looseObject({ model: z.string() })]).optional(),
});
export type SampleRow = z.infer<typeof SampleRow>;

export interface TaskPassRate {
  suite: string;
  task_id: string;
  samples: number;
  correct: number;
  rate: number;
}

export interface Selection {
  kept: TaskPassRate[];
  /** Pass rate above the range; `always`: of those, solved by every sample. */
  above: { count: number; always: number };
  /** Pass rate below the range; `never`: of those, solved by no sample. */
  below: { count: number; never: number };
  /** Fewer samples than `minSamples` (after model errors are left out). */
  tooFew: number;
  /** Rows left out: the endpoint failed (`model_error`), so they say nothing about the policy. */
  modelErrors: number;
}

const keyOf = (suite: string, id: string) => `${suite}\u0000${id}`;

/** Pass rate per task over its samples (the last row of a repeated (suite, task_id, sample) key counts). */
export function passRates(rows: Iterable<SampleRow>): { rates: TaskPassRate[]; modelErrors: number } {
  const bySample = new Map<string, SampleRow>();
  for (const r of rows) bySample.set(`${keyOf(r.suite, r.task_id)}\u0000${r.sample}`, r);
  const byTask = new Map<string, TaskPassRate>();
  let modelErrors = 0;
  for (const r of bySample.values()) {
    if (r.status === "model_error") {
      modelErrors++;
      continue;
    }
    const k = keyOf(r.suite, r.task_id);
    const t = byTask.get(k) ?? { suite: r.suite, task_id: r.task_id, samples: 0, correct: 0, rate: 0 };
    t.samples++;
    if (r.reward === 1) t.correct++;
    t.rate = t.correct / t.samples;
    byTask.set(k, t);
  }
  return { rates: [...byTask.values()], modelErrors };
}

/** The tasks whose pass rate lies in [min, max] (both included), with what was dropped and why. */
export function selectByPassRate(rows: Iterable<SampleRow>, range: { min: number; max: number }, minSamples = 2): Selection {
  const { rates, modelErrors } = passRates(rows);
  const out: Selection = { kept: [], above: { count: 0, always: 0 }, below: { count: 0, never: 0 }, tooFew: 0, modelErrors };
  for (const t of rates) {
    if (t.samples < minSamples) out.tooFew++;
    else if (t.rate > range.max) {
      out.above.count++;
      if (t.correct === t.samples) out.above.always++;
    } else if (t.rate < range.min) {
      out.below.count++;
      if (t.correct === 0) out.below.never++;
    } else out.kept.push(t);
  }
  return out;
}
