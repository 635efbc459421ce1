// Test helpers for the stand-in teacher: a small synthetic EHR with tasks of both suites, the real
// environment, and the real openai client over loopback HTTP.
import OpenAI from "openai";
import { Environment, MedAgentEnv, type EnvConfig, type Message } from "../../env/core/index.ts";
import { generateStore } from "../../env/ehr/index.ts";
import type { Protocol } from "../../env/protocol/index.ts";
import { generateTasks, type Task } from "../../env/tasks/index.ts";
import { envConfig } from "./world.ts";

export const MODEL = "ehrgym-stand-in";

export function world(opts: { patients: number; seed: number; perType: number }): { config: EnvConfig; tasks: Task[] } {
  const { store } = generateStore({ seed: opts.seed, patients: opts.patients });
  const tasks = (["mab-v1", "mab-v2"] as const).flatMap((suite) => generateTasks(store, { suite, perType: opts.perType, seed: opts.seed + 1 }));
  return { config: envConfig(store), tasks };
}

export function client(url: string, extra: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}): OpenAI {
  return new OpenAI({ baseURL: url, apiKey: "x", maxRetries: 0, ...extra });
}

/** The first request of an episode of `task` (what the environment shows the model). */
export async function firstRequest(config: EnvConfig, task: Task, protocol: Protocol): Promise<{ messages: Message[]; tools?: unknown[] }> {
  const reset = await new MedAgentEnv(config).reset({ task, protocol });
  return reset.tools ? { messages: reset.observation, tools: reset.tools } : { messages: reset.observation };
}

export function chatBody(req: { messages: Message[]; tools?: unknown[] }, model = MODEL): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
  return {
    model,
    messages: req.messages as OpenAI.Chat.ChatCompletionMessageParam[],
    ...(req.tools ? { tools: req.tools as OpenAI.Chat.ChatCompletionTool[] } : {}),
  };
}

export function environment(config: EnvConfig, protocol: Protocol): Environment {
  return new Environment(config, { protocol });
}

/** What the stand-in says about a reply (its own field beside OpenAI's). */
export function about(completion: unknown): { task_id: string; sample: number | null; turn: string } {
  return (completion as { ehrgym_stand_in: { task_id: string; sample: number | null; turn: string } }).ehrgym_stand_in;
}
