// The environment's CPU per expert `workflows` episode: the expert's turns recorded once, then replayed
// through reset, steps and the checkpoint grader (the policy's own work is not counted).
import { cpuUsage } from "node:process";
import { EnvConfig, MedAgentEnv } from "../../env/core/index.ts";
import type { FhirStore } from "../../env/fhir/index.ts";
import { generateTasks, type Task } from "../../env/tasks/index.ts";
import { createExpertPolicy } from "../../rollout/index.ts";
import { median } from "./report.ts";

async function expertTurns(env: MedAgentEnv, task: Task): Promise<string[]> {
  const expert = createExpertPolicy({ apiBase: env.config.backend.apiBase });
  await env.reset({ task, protocol: "text" });
  const turns: string[] = [];
  while (env.info!.status === "running") {
    const turn = (await expert.act({ task, protocol: "text", messages: env.record().messages })) as string;
    turns.push(turn);
    await env.step(turn);
  }
  if (env.info!.reward !== 1) throw new Error(`bench: the expert failed ${task.id}`);
  return turns;
}

/** Median CPU ms of one expert workflows episode (text protocol), over `rounds` replays of `n` reviews. */
export async function workflowEpisodeCpuMs(store: FhirStore, apiBase: string, n = 40, rounds = 5): Promise<{ ms: number; calls: number }> {
  const tasks = generateTasks(store, { suite: "workflows", perType: n, seed: 1 });
  const env = new MedAgentEnv(new EnvConfig({ store, apiBase }));
  const recorded = new Map<string, string[]>();
  for (const t of tasks) recorded.set(t.id, await expertTurns(env, t));
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++)
    for (const t of tasks) {
      const c0 = cpuUsage();
      await env.reset({ task: t, protocol: "text" });
      for (const turn of recorded.get(t.id)!) await env.step(turn);
      const c = cpuUsage(c0);
      samples.push((c.user + c.system) / 1000);
    }
  return { ms: median(samples), calls: median([...recorded.values()].map((x) => x.length)) };
}
