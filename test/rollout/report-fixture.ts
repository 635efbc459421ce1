// Runs for the report tests: the scripted expert on a small synthetic EHR (real rows), and a
// "model" run made from it by flipping rewards with a seeded PRNG and adding usage and latency.
import { writeFileSync } from "node:fs";
import { generateStore } from "../../env/ehr/index.ts";
import { generateTasks } from "../../env/tasks/index.ts";
import { mulberry32 } from "../../env/util/index.ts";
import type { EpisodeRow } from "../../rollout/index.ts";
import { envConfig, play } from "./world.ts";

export async function expertRows(perType = 2): Promise<EpisodeRow[]> {
  const { store } = generateStore({ patients: 8, seed: 3 });
  const tasks = (["mab-v1", "mab-v2"] as const).flatMap((suite) => generateTasks(store, { suite, perType, seed: 3 }));
  return play(envConfig(store), tasks, "text");
}

/** A copy of `rows` where each reward flips with probability `flip` (seeded), as a model run would differ. */
export function perturbed(rows: EpisodeRow[], seed: number, flip: number, model = "student-sft"): EpisodeRow[] {
  const rng = mulberry32(seed);
  return rows.map((row) => {
    const flipped = rng() < flip;
    const reward = flipped ? 1 - row.reward : row.reward;
    const turns = Array.from({ length: Math.max(1, row.rounds) }, () => ({ latency_ms: Math.round(200 + 800 * rng()), finish_reason: "stop", usage: { prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 } }));
    return {
      ...row,
      reward,
      status: reward === 1 ? "completed" : rng() < 0.5 ? "invalid_action" : "limit_reached",
      checks: reward === 1 ? row.checks.map((c) => ({ ...c, ok: true })) : [{ name: "answer", ok: false, detail: "perturbed for the test" }],
      policy: { kind: "openai", model },
      turns,
      usage: { prompt_tokens: 900 * turns.length, completion_tokens: 40 * turns.length, total_tokens: 940 * turns.length },
    };
  });
}

export function writeRun(path: string, rows: unknown[]): string {
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
}
