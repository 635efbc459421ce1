// Rubric (verifiers-style): named reward functions with weights -> reward and per-function metrics.
import { z } from "zod";
import type { GradeResult } from "../graders/index.ts";
import type { EpisodeInfo } from "./types.ts";

/** What a reward function sees at the end of an episode. */
export interface RubricInput {
  grade: GradeResult;
  info: EpisodeInfo;
}

export interface RewardFunction {
  name: string;
  weight: number;
  fn: (input: RubricInput) => number;
}

/** The serializable part of a rubric (names and weights), e.g. for config files and the HTTP API. */
export const RubricSpec = z.object({
  functions: z.array(z.object({ name: z.string().min(1), weight: z.number().finite() })).min(1),
});
export type RubricSpec = z.infer<typeof RubricSpec>;

export class Rubric {
  constructor(readonly functions: RewardFunction[]) {
    if (functions.length === 0) throw new Error("a rubric needs at least one reward function");
  }

  /** The weighted reward, and every function's unweighted value by name. */
  score(input: RubricInput) {
    let reward = 0;
    const metrics: Record<string, number> = {};
    for (const f of this.functions) {
      const v = f.fn(input);
      metrics[f.name] = v;
      reward += f.weight * v;
    }
    return { reward, metrics };
  }

  spec(): RubricSpec {
    return { functions: this.functions.map(({ name, weight }) => ({ name, weight })) };
  }
}

/** The official binary reward: the grader's verdict (text episodes that did not FINISH are not graded: 0). */
export const binaryReward: RewardFunction = { name: "correct", weight: 1, fn: ({ grade }) => grade.reward };
/** Passed checks / total checks: a shaped reward. */
export const partialCreditReward: RewardFunction = {
  name: "partial_credit",
  weight: 0,
  fn: ({ grade }) => grade.partialCredit,
};

/** Default: reward = the binary grader; partial credit reported as a metric (weight 0) unless a weight is given. */
export function defaultRubric(options: { partialCreditWeight?: number } = {}): Rubric {
  return new Rubric([binaryReward, { ...partialCreditReward, weight: options.partialCreditWeight ?? 0 }]);
}
