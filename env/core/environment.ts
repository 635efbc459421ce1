// Verifiers-style Environment: setupState / envResponse / isCompleted / rollout(client, model, task).
// A thin layer over MedAgentEnv, so gym reset/step and rollouts share one implementation.
import type OpenAI from "openai";
import { z } from "zod";
import type { Protocol } from "../protocol/index.ts";
import type { Task } from "../tasks/index.ts";
import { EnvConfig, MedAgentEnv, type EnvOptions } from "./env.ts";
import { runEpisode } from "./episode.ts";
import { assistantTurn, isContextLimit, ModelError, Sampling, type Policy } from "./policy.ts";
import { Message, type EpisodeRecord, type WritesMode } from "./types.ts";

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
export type RolloutState = Awaited<ReturnType<Environment["setupState"]>>;

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

  async setupState(task: Task) {
    const env = new MedAgentEnv(this.config);
    const protocol = this.options.protocol ?? "text";
    const reset = await env.reset({ task, protocol, maxRounds: this.options.maxRounds, writes: this.options.writes });
    return { env, task, protocol, prompt: reset.observation, ...(reset.tools ? { tools: reset.tools } : {}), info: reset.info, done: false };
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
  async rollout(client: OpenAI, model: string, task: Task, samplingArgs: Sampling = {}): Promise<RolloutResult> {
    const protocol = this.options.protocol ?? "text";
    const played = await runEpisode(new MedAgentEnv(this.config), chatPolicy(client, model, Sampling.parse(samplingArgs)), {
      task,
      protocol,
      maxRounds: this.options.maxRounds,
      writes: this.options.writes,
    });
    const promptLength = played.messages.findIndex((m) => m.role === "assistant");
    return toRolloutResult(played, promptLength < 0 ? played.messages.length : promptLength);
  }
}

/** One chat.completions call per turn, no retries: any failure ends the episode. */
function chatPolicy(client: OpenAI, model: string, sampling: Sampling): Policy {
  return {
    name: model,
    info: { kind: "openai", model },
    act: async ({ protocol, messages, tools }) => {
      let message: OpenAI.Chat.ChatCompletionMessage | undefined;
      try {
        const res = await client.chat.completions.create({
          ...sampling,
          model,
          messages: messages as OpenAI.Chat.ChatCompletionMessageParam[],
          ...(tools ? { tools: tools as OpenAI.Chat.ChatCompletionTool[] } : {}),
        } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
        message = res.choices[0]?.message;
        if (!message) throw new Error("the model returned no choices");
      } catch (e) {
        throw new ModelError(isContextLimit(e) ? "context_limit" : "model_error", e instanceof Error ? e.message : String(e));
      }
      return assistantTurn(message, protocol).turn;
    },
  };
}

function toRolloutResult(record: EpisodeRecord, promptLength: number): RolloutResult {
  const info = record.info;
  return {
    prompt: record.messages.slice(0, promptLength),
    completion: record.messages.slice(promptLength),
    reward: info.score ?? info.reward ?? 0,
    metrics: info.metrics ?? {},
    state: { task_id: record.task.id, protocol: record.protocol, status: info.status, rounds: info.rounds, info },
  };
}
