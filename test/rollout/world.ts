// Test helpers: the real embedded EHR + MedAgentEnv + graders, and the expert run over tasks.
import { DEFAULT_API_BASE, EmbeddedBackend, EnvConfig, MedAgentEnv, type Policy } from "../../env/core/index.ts";
import { FhirService, type FhirStore } from "../../env/fhir/index.ts";
import type { Protocol } from "../../env/protocol/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { createExpertPolicy, formatSummary, runEpisodes, summarize, type EpisodeRow } from "../../rollout/index.ts";

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

/** PROTOCOL.md's tool list has no ServiceRequest search, so in the tool protocol an existing active
 *  catheter-removal order is invisible (mab-v2 task4): the expert orders a removal the grader rightly
 *  calls unnecessary. True for exactly those failures, when the env offers no such tool. */
export function blindToExistingOrders(row: EpisodeRow, tools: unknown[] | undefined): boolean {
  const offered = (tools ?? []).some((t) => (t as { function?: { name?: string } }).function?.name === "fhir_service_request_search");
  return (
    !offered &&
    row.protocol === "tools" &&
    row.suite === "mab-v2" &&
    row.type === "task4" &&
    row.checks.some((c) => !c.ok && /no removal order is needed/.test(c.detail))
  );
}

/** The OpenAI tools the environment offers (tool protocol reset). */
export async function offeredTools(config: EnvConfig, task: Task): Promise<unknown[] | undefined> {
  return (await new MedAgentEnv(config).reset({ task, protocol: "tools" })).tools;
}
