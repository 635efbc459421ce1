// Source rows for the dataset tests: the scripted expert run in-process on a small synthetic
// population, both protocols, turned into the episode rows `ehrgym eval`/`rollout` write.
import { DEFAULT_API_BASE, EmbeddedBackend, EnvConfig, MedAgentEnv } from "../../env/core/index.ts";
import { generateStore } from "../../env/ehr/index.ts";
import { FhirService } from "../../env/fhir/index.ts";
import type { Protocol } from "../../env/protocol/index.ts";
import { generateTasks, type Suite, type Task } from "../../env/tasks/index.ts";
import { createExpertPolicy, runEpisodes, type EpisodeRowInput } from "../../rollout/index.ts";

export interface FixtureOptions {
  patients?: number;
  seed?: number;
  perType?: number;
  suites?: Suite[];
  types?: string[];
  protocols?: Protocol[];
  /** Episodes per task (the expert is deterministic: later samples repeat the first). */
  samples?: number;
}

/** The tasks a fixture runs, with each task's MRN. */
export function fixtureTasks(o: FixtureOptions = {}): { tasks: Task[]; config: EnvConfig } {
  const { store } = generateStore({ patients: o.patients ?? 8, seed: o.seed ?? 3 });
  let tasks = (o.suites ?? ["mab-v1", "mab-v2"]).flatMap((suite) => generateTasks(store, { suite, perType: o.perType ?? 3, seed: o.seed ?? 3 }));
  if (o.types) tasks = tasks.filter((t) => o.types!.includes(t.type));
  const config = new EnvConfig({ backend: new EmbeddedBackend(store, new FhirService(store, { baseUrl: DEFAULT_API_BASE }), DEFAULT_API_BASE) });
  return { tasks, config };
}

/**
 * Rows as `ehrgym rollout` writes them (mrn, sample, policy object, usage), so every column of the
 * dataset has a source. `legacy: true` gives the older `ehrgym eval` shape (no mrn/usage, policy a name).
 */
export async function expertRows(o: FixtureOptions & { legacy?: boolean } = {}): Promise<EpisodeRowInput[]> {
  const { tasks, config } = fixtureTasks(o);
  const byId = new Map(tasks.map((t) => [`${t.suite}/${t.id}`, t]));
  const out: EpisodeRowInput[] = [];
  // the tool list the environment offers (what `ehrgym rollout` records per row)
  const offered = new Map<string, unknown[] | undefined>();
  for (const t of tasks) if (!offered.has(t.suite)) offered.set(t.suite, (await new MedAgentEnv(config).reset({ task: t, protocol: "tools" })).tools);
  for (const protocol of o.protocols ?? (["text", "tools"] as Protocol[])) {
    for (let sample = 0; sample < (o.samples ?? 1); sample++) {
      const { rows } = await runEpisodes({
        makeEnv: () => new MedAgentEnv(config),
        policy: createExpertPolicy({ apiBase: DEFAULT_API_BASE }),
        tasks,
        protocol,
        maxRounds: 8,
        concurrency: 4,
        progress: false,
      });
      for (const row of rows) {
        const task = byId.get(`${row.suite}/${row.task_id}`)!;
        if (o.legacy) {
          // the row `ehrgym eval` wrote before rows carried mrn, sample, usage and a policy object
          const { mrn: _m, sample: _s, usage: _u, tools: _t, turns: _turns, policy: _p, ehrgym_version: _v, started_at: _a, wall_ms: _w, ...old } = row as Record<string, unknown>;
          out.push({ ...old, policy: "expert" } as EpisodeRowInput);
          continue;
        }
        const completion = row.messages.filter((m) => m.role === "assistant").reduce((n, m) => n + (m.content?.length ?? 0), 0);
        out.push({
          ...row,
          ...(task.eval_MRN ? { mrn: task.eval_MRN } : {}),
          sample,
          policy: { kind: "expert", model: "scripted-expert" },
          usage: { prompt_tokens: 1000 + row.rounds, completion_tokens: completion, total_tokens: 1000 + row.rounds + completion },
          ...(protocol === "tools" ? { tools: offered.get(row.suite) } : {}),
          ehrgym_version: "0.1.0",
          patients: `synthetic (seed ${o.seed ?? 3}, ${o.patients ?? 8} patients)`,
        } as EpisodeRowInput);
      }
    }
  }
  return out;
}

export const toJsonl = (rows: readonly unknown[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join("");

type Row = EpisodeRowInput & { messages: { role: string; content?: string | null; tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[] }[] };

/**
 * A failed copy of a correct row, as a model that went wrong would leave it: `wrong` answers
 * FINISH with another value (status completed), `invalid` ends on a turn that is no action
 * (status invalid_action), `model_error` is the endpoint failing (never a model's failure).
 */
export function failedCopy(row: EpisodeRowInput, how: "wrong" | "invalid" | "model_error", sample: number): EpisodeRowInput {
  const r = structuredClone(row) as Row;
  const last = r.messages.map((m) => m.role).lastIndexOf("assistant");
  const messages = r.messages.slice(0, last);
  if (how === "wrong") {
    if (r.protocol === "text") messages.push({ role: "assistant", content: "FINISH([424242])" });
    else messages.push({ role: "assistant", content: null, tool_calls: [{ id: "call_99", type: "function", function: { name: "finish", arguments: '{"value":[424242]}' } }] });
  } else if (how === "invalid") messages.push({ role: "assistant", content: "I believe the answer is 424242." });
  else messages.push({ role: "assistant", content: "GET Patient?name=x" });
  return {
    ...r,
    messages: messages as EpisodeRowInput["messages"],
    sample,
    reward: 0,
    status: how === "wrong" ? "completed" : how === "invalid" ? "invalid_action" : "model_error",
    checks: [{ name: "answer", ok: false, detail: "wrong" }],
  };
}
