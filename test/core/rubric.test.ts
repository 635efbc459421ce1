import { describe, expect, it } from "vitest";
import { binaryReward, defaultRubric, EmbeddedBackend, EnvConfig, MedAgentEnv, Rubric, RubricSpec } from "../../env/core/index.ts";
import type { GradeInput, GradeResult } from "../../env/graders/index.ts";
import { MRNS, service, smallStore, task } from "./fixtures.ts";

// Two checks: the answer, and that it came after at least one GET.
const twoChecks = (input: GradeInput): GradeResult => {
  const answer = input.result === JSON.stringify([MRNS[0]]);
  const looked = input.actions.some((a) => a.kind === "GET");
  const checks = [
    { name: "answer", ok: answer, detail: "" },
    { name: "looked", ok: looked, detail: "" },
  ];
  const passed = checks.filter((c) => c.ok).length;
  return { reward: passed === 2 ? 1 : 0, checks, partialCredit: passed / 2 };
};

describe("Rubric", () => {
  const store = smallStore();
  const backend = new EmbeddedBackend(store, service(store));

  it("default: reward = binary grader, partial credit reported as a metric", async () => {
    const env = new MedAgentEnv({ backend, grader: twoChecks });
    await env.reset({ task: task("r") });
    const s = await env.step(`FINISH(["${MRNS[0]}"])`);
    expect(s.reward).toBe(0);
    expect(s.info).toMatchObject({ reward: 0, partialCredit: 0.5, score: 0, metrics: { correct: 0, partial_credit: 0.5 } });
    expect(defaultRubric().spec()).toEqual({ functions: [{ name: "correct", weight: 1 }, { name: "partial_credit", weight: 0 }] });
  });

  it("weights named reward functions into the step reward", async () => {
    const rubric = new Rubric([
      { ...binaryReward, weight: 0.5 },
      { name: "partial", weight: 0.5, fn: ({ grade }) => grade.partialCredit },
      { name: "short", weight: 0.1, fn: ({ info }) => (info.rounds <= 1 ? 1 : 0) },
    ]);
    expect(RubricSpec.parse(rubric.spec())).toEqual(rubric.spec());
    const env = new MedAgentEnv(new EnvConfig({ backend, grader: twoChecks, rubric }));
    await env.reset({ task: task("r") });
    const s = await env.step(`FINISH(["${MRNS[0]}"])`);
    expect(s.reward).toBeCloseTo(0.5 * 0 + 0.5 * 0.5 + 0.1 * 1);
    expect(s.info.metrics).toEqual({ correct: 0, partial: 0.5, short: 1 });
    expect(s.info.reward).toBe(0);
    expect(() => new Rubric([])).toThrow(/at least one/);
  });
});
