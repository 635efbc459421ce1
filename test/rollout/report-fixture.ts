// Runs for the report tests: the scripted expert on a small synthetic EHR (real rows), and a
// "model" run made from it by flipping rewards with a seeded PRNG and adding usage and latency;
// and a real eval of workflows reviews by the expert and by the stand-in teacher.
import { writeFileSync } from "node:fs";
import { generateStore } from "../../env/ehr/index.ts";
import type { FhirStore } from "../../env/fhir/index.ts";
import { generateTasks } from "../../env/tasks/index.ts";
import { mulberry32 } from "../../env/util/index.ts";
import { createModelPolicy, type EpisodeRow } from "../../rollout/index.ts";
import { startTeacherServer } from "../../rollout/teacher/index.ts";
import { envConfig, play } from "./world.ts";

let small: FhirStore | undefined;
/** The small synthetic EHR every run here plays on (generated once per test file). */
const smallStore = () => (small ??= generateStore({ patients: 8, seed: 3 }).store);

export async function expertRows(perType = 2): Promise<EpisodeRow[]> {
  const store = smallStore();
  const tasks = (["mab-v1", "mab-v2"] as const).flatMap((suite) => generateTasks(store, { suite, perType, seed: 3 }));
  return play(envConfig(store), tasks, "text");
}

/** `count` workflows reviews evaluated as `ehrgym eval` does, in the text protocol: by the scripted expert
 *  (every checkpoint passes), and by the stand-in teacher through the real openai client over loopback
 *  HTTP (its seeded mistakes fail some checkpoints). */
export async function workflowRows(count = 12): Promise<{ expert: EpisodeRow[]; standIn: EpisodeRow[] }> {
  const store = smallStore();
  const tasks = generateTasks(store, { suite: "workflows", perType: count, seed: 3 });
  const config = envConfig(store);
  const expert = await play(config, tasks, "text");
  const teacher = await startTeacherServer({ tasks, seed: 5 });
  try {
    const standIn = await play(config, tasks, "text", createModelPolicy({ model: "ehrgym-stand-in", baseURL: teacher.url, maxRetries: 0 }));
    return { expert, standIn };
  } finally {
    await teacher.close();
  }
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
