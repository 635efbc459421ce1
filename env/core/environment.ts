// Verifiers-style Environment: setupState / envResponse / isCompleted / rollout(client, model, task).
// A thin layer over MedAgentEnv, so gym reset/step and rollouts share one implementation.
import type OpenAI from "openai";
import { z } from "zod";
import type { Protocol } from "../protocol/index.ts";
import type { Task } from "../tasks/index.ts";
import { EnvConfig, MedAgentEnv, type EnvOptions } from "./env.ts";
import { Message, type EpisodeInfo, type EpisodeRecord, type WritesMode } from "./types.ts";

export const SamplingArgs = z
  .looseObject({
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    max_tokens: z.number().int().min(1).optional(),
    max_completion_tokens: z.number().int().min(1).optional(),
    seed: z.number().int().optional(),
    stop: z.union([z.string(), z.array(z.string())]).optional(),
  })
  .describe("Extra chat.completions parameters passed through to the model.");
export type SamplingArgs = z.infer<typeof SamplingArgs>;

export const RolloutResult = z.object({
  /** The first messages the model saw (text: one user message; tools: system? + user). */
  prompt: z.array(Message),
  /** Everything after the prompt: assistant turns and environment replies. */
  completion: z.array(Message),
  reward: z.number(),
  metrics: z.record(z.string(), z.number()),
  state: z.looseObject({
    task_id: z.string(),
    protocol: z.enum(["text", "tools"]),
    status: z.string(),
    rounds: z.number().int(),
    info: z.unknown(),
  }),
});
export type RolloutResult = z.infer<typeof RolloutResult>;

/** One rollout's state: the episode plus what the model has seen. */
export interface RolloutState {
  env: MedAgentEnv;
  task: Task;
  protocol: Protocol;
  prompt: Message[];
  tools?: unknown[];
  info: EpisodeInfo;
  done: boolean;
}

export interface EnvironmentOptions {
  protocol?: Protocol;
  maxRounds?: number;
  writes?: WritesMode;
}

export class Environment {
  readonly config: EnvConfig;

  constructor(
    config: EnvConfig | EnvOptions,
    readonly options: EnvironmentOptions = {},
  ) {
    this.config = config instanceof EnvConfig ? config : new EnvConfig(config);
  }

  async setupState(task: Task): Promise<RolloutState> {
    const env = new MedAgentEnv(this.config);
    const protocol = this.options.protocol ?? "text";
    const reset = await env.reset({ task, protocol, maxRounds: this.options.maxRounds, writes: this.options.writes });
    const state: RolloutState = { env, task, protocol, prompt: reset.observation, info: reset.info, done: false };
    if (reset.tools) state.tools = reset.tools;
    return state;
  }

  /** Applies the last assistant message of `messages`; returns the environment's reply messages. */
  async envResponse(messages: Message[], state: RolloutState): Promise<{ messages: Message[]; state: RolloutState }> {
    const last = messages.at(-1);
    if (!last || last.role !== "assistant") throw new Error("envResponse needs the conversation to end with an assistant message");
    const step = await state.env.step(state.protocol === "text" ? (last.content ?? "") : last);
    state.info = step.info;
    state.done = step.terminated || step.truncated;
    return { messages: step.observation, state };
  }

  isCompleted(_messages: Message[], state: RolloutState): boolean {
    return state.done;
  }

  /** Runs one episode with an OpenAI-compatible chat model. Model errors end the episode (context_limit / error). */
  async rollout(client: OpenAI, model: string, task: Task, samplingArgs: SamplingArgs = {}): Promise<RolloutResult> {
    const args = SamplingArgs.parse(samplingArgs);
    const state = await this.setupState(task);
    const messages: Message[] = [...state.prompt];
    while (!this.isCompleted(messages, state)) {
      let reply: Message;
      try {
        const res = await client.chat.completions.create({
          ...args,
          model,
          messages: messages as OpenAI.Chat.ChatCompletionMessageParam[],
          ...(state.tools ? { tools: state.tools as OpenAI.Chat.ChatCompletionTool[] } : {}),
        } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
        const m = res.choices[0]?.message;
        if (!m) throw new Error("the model returned no choices");
        reply = { role: "assistant", content: m.content ?? (m.tool_calls?.length ? null : "") };
        const calls = (m.tool_calls ?? []).filter((c) => c.type === "function");
        if (calls.length) reply.tool_calls = calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.function.name, arguments: c.function.arguments } }));
      } catch (e) {
        const text = e instanceof Error ? e.message : String(e);
        state.info = await state.env.abort(isContextLimit(e) ? "context_limit" : "error", text);
        state.done = true;
        break;
      }
      messages.push(reply);
      const { messages: observation } = await this.envResponse(messages, state);
      messages.push(...observation);
    }
    return toRolloutResult(state.env.record(), state.prompt.length);
  }
}

function isContextLimit(e: unknown): boolean {
  const err = e as { code?: unknown; status?: unknown; message?: unknown };
  if (err?.code === "context_length_exceeded") return true;
  return err?.status === 400 && typeof err.message === "string" && /context length|maximum context|too many tokens|context_length/i.test(err.message);
}

export function toRolloutResult(record: EpisodeRecord, promptLength: number): RolloutResult {
  const info = record.info;
  return {
    prompt: record.messages.slice(0, promptLength),
    completion: record.messages.slice(promptLength),
    reward: info.score ?? info.reward ?? 0,
    metrics: info.metrics ?? {},
    state: { task_id: record.task.id, protocol: record.protocol, status: info.status, rounds: info.rounds, info },
  };
}
