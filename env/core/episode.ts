// The one episode loop: reset, let the policy act until the environment ends the episode (or the
// policy has no more turns), and return the environment's record with what the turns cost.
// Rollouts, eval, the verifiers-style Environment and the server's /v1/score all run it.
import type { Protocol } from "../protocol/index.ts";
import type { Task } from "../tasks/index.ts";
import { ModelError, RunAborted, type ModelCall, type Policy, type PolicyStep } from "./policy.ts";
import type { AgentTurn, EpisodeInfo, EpisodeRecord, Message, ResetOptions, ResetResult, StepResult, WritesMode } from "./types.ts";

/** An environment the loop can run (MedAgentEnv is one). */
export interface EpisodeEnv {
  reset(options: ResetOptions): Promise<ResetResult>;
  step(turn: AgentTurn): Promise<StepResult>;
  /** The episode so far (or as it ended). */
  record(): EpisodeRecord;
  /** Ends a running episode from outside (the policy failed, the model ran out of context). */
  abort(status: "context_limit" | "error", reason?: string): Promise<EpisodeInfo>;
  /** Rolls back the episode's writes. */
  close(): void | Promise<void>;
  /** How this environment reads a turn's reasoning (MedAgentEnv: `readAgentTurn` in its mode); the loop
   *  keeps the read turn in the history the policy sees. */
  readTurn?(turn: AgentTurn): AgentTurn;
}

export interface EpisodeOptions {
  task: Task;
  protocol: Protocol;
  maxRounds?: number;
  writes?: WritesMode;
  /** Aborts the policy's turn: the loop then throws RunAborted. */
  signal?: AbortSignal;
  /** Handed to the policy (a model request's retries repeat it). */
  episodeKey?: string;
}

const isStep = (x: AgentTurn | PolicyStep): x is PolicyStep => typeof x === "object" && x !== null && "turn" in x;

/**
 * Plays one episode. A policy failure ends it (ModelError: its status; anything else: `error`) and is
 * returned as `failure`; RunAborted and a fatal ModelError are rethrown, as is an error of reset or
 * step, after the episode's writes are rolled back. Returns the environment's record with the tools
 * offered at reset, the turns played (`steps`, the `last` step's result), the model calls of the turns
 * that had one, and notes on odd turns ("round N: ...").
 */
export async function runEpisode(env: EpisodeEnv, policy: Policy, options: EpisodeOptions) {
  const startedAt = new Date();
  const t0 = performance.now();
  const { task, protocol } = options;
  const reset = await env.reset({ task, protocol, maxRounds: options.maxRounds, writes: options.writes });
  const messages: Message[] = [...reset.observation];
  const calls: ModelCall[] = [];
  const notes: string[] = [];
  let failure: { status: "model_error" | "context_limit" | "error"; message: string } | undefined;
  let last: StepResult | undefined;
  let steps = 0;
  try {
    for (;;) {
      let acted: AgentTurn | PolicyStep | undefined;
      try {
        acted = await policy.act({
          task,
          protocol,
          messages,
          ...(reset.tools ? { tools: reset.tools } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.episodeKey ? { episodeKey: options.episodeKey } : {}),
        });
      } catch (err) {
        if (err instanceof RunAborted || (err instanceof ModelError && err.fatal)) throw err;
        const status = err instanceof ModelError ? err.status : "error";
        failure = { status, message: err instanceof ModelError ? err.message : `policy failed: ${err instanceof Error ? err.message : String(err)}` };
        await env.abort(status === "context_limit" ? "context_limit" : "error", failure.message);
        break;
      }
      if (acted === undefined) break;
      const given = isStep(acted) ? acted.turn : acted;
      const turn = env.readTurn ? env.readTurn(given) : given;
      if (isStep(acted)) {
        if (acted.call) calls.push(acted.call);
        if (acted.note) notes.push(`round ${calls.length || notes.length + 1}: ${acted.note}`);
      }
      messages.push(typeof turn === "string" ? { role: "assistant", content: turn } : turn);
      last = await env.step(turn);
      steps++;
      messages.push(...last.observation);
      if (last.terminated || last.truncated) break;
    }
  } catch (err) {
    await env.close();
    throw err;
  }
  const record = env.record();
  return {
    ...record,
    ...(reset.tools ? { tools: reset.tools } : {}),
    steps,
    ...(last ? { last } : {}),
    calls,
    notes,
    ...(failure ? { failure } : {}),
    startedAt,
    wallMs: performance.now() - t0,
  };
}
export type PlayedEpisode = Awaited<ReturnType<typeof runEpisode>>;
