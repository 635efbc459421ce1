// One episode: reset, let the policy act until the environment ends it, keep the record.
import type { AgentTurn, EpisodeRecord, Message, ResetOptions, ResetResult, StepResult } from "../env/core/index.ts";
import type { Check } from "../env/graders/index.ts";
import type { EpisodeStatus, Protocol } from "../env/protocol/index.ts";
import type { Task } from "../env/tasks/index.ts";
import type { Policy } from "./expert/index.ts";
import { taskKind, type TaskKind } from "./metrics.ts";

/** What the runner needs of an environment (MedAgentEnv satisfies it). */
export interface EpisodeEnv {
  reset(options: ResetOptions): Promise<ResetResult>;
  step(turn: AgentTurn): Promise<StepResult>;
  record(): EpisodeRecord;
  /** Ends a running episode from outside (the policy failed). */
  abort?(status: "error", reason?: string): Promise<unknown>;
}

/** One line of the eval JSONL. */
export interface EpisodeRow {
  task_id: string;
  suite: string;
  type: string;
  kind: TaskKind;
  branch?: string;
  protocol: Protocol;
  policy: string;
  reward: number;
  status: EpisodeStatus;
  rounds: number;
  partial_credit?: number;
  result?: string;
  checks: Check[];
  messages: Message[];
  error?: string;
}

export interface EpisodeOptions {
  protocol: Protocol;
  maxRounds: number;
  writes?: "execute" | "record";
}

const asMessage = (turn: AgentTurn): Message => (typeof turn === "string" ? { role: "assistant", content: turn } : turn);

export async function runEpisode(env: EpisodeEnv, policy: Policy, task: Task, options: EpisodeOptions): Promise<EpisodeRow> {
  const reset = await env.reset({ task, protocol: options.protocol, maxRounds: options.maxRounds, writes: options.writes });
  const messages: Message[] = [...reset.observation];
  let error: string | undefined;
  let info = reset.info;
  for (;;) {
    let turn: AgentTurn;
    try {
      turn = await policy.act({ task, protocol: options.protocol, messages, ...(reset.tools ? { tools: reset.tools } : {}) });
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      await env.abort?.("error", `policy failed: ${error}`);
      break;
    }
    messages.push(asMessage(turn));
    const step = await env.step(turn);
    messages.push(...step.observation);
    info = step.info;
    if (step.terminated || step.truncated) break;
  }
  const record = env.record();
  info = record.info ?? info;
  return {
    task_id: task.id,
    suite: task.suite,
    type: task.type,
    kind: taskKind(task.suite, task.type),
    ...(task.branch ? { branch: task.branch } : {}),
    protocol: options.protocol,
    policy: policy.name,
    reward: error ? 0 : (info.reward ?? 0),
    status: error ? "error" : info.status,
    ...(!error && info.error ? { error: info.error } : {}),
    rounds: info.rounds,
    ...(info.partialCredit !== undefined ? { partial_credit: info.partialCredit } : {}),
    ...(info.result !== undefined ? { result: info.result } : {}),
    checks: info.checks ?? [],
    messages: record.messages.length > 0 ? record.messages : messages,
    ...(error ? { error } : {}),
  };
}
