// Test helpers: the real embedded EHR + MedAgentEnv + graders, and the expert run over tasks.
import { EmbeddedBackend, EnvConfig, MedAgentEnv, DEFAULT_API_BASE } from "../../env/core/index.ts";
import { FhirService, type FhirStore } from "../../env/fhir/index.ts";
import type { Protocol } from "../../env/protocol/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { createExpertPolicy, formatSummary, runEpisodes, summarize, type EpisodeRow, type Policy } from "../../rollout/index.ts";

export const API_BASE = DEFAULT_API_BASE;

export function envConfig(store: FhirStore): EnvConfig {
  return new EnvConfig({ backend: new EmbeddedBackend(store, new FhirService(store, { baseUrl: API_BASE }), API_BASE) });
}

export async function play(config: EnvConfig, tasks: Task[], protocol: Protocol, policy: Policy = createExpertPolicy({ apiBase: API_BASE })): Promise<EpisodeRow[]> {
  const { rows } = await runEpisodes({ makeEnv: () => new MedAgentEnv(config), policy, tasks, protocol, maxRounds: 8, concurrency: 8, progress: false });
  return rows;
}

/** The eval table plus every failure's failed checks (printed when an assertion fails). */
export function explain(rows: EpisodeRow[]): string {
  return formatSummary(summarize(rows), { maxFailures: 30 });
}
