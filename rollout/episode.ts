// One episode: reset, let the policy act until the environment ends it, keep the record as a row.
import { type AgentTurn, type EpisodeRecord, type Message, type ResetOptions, type ResetResult, type StepResult } from "../env/core/index.ts";
import type { Protocol } from "../env/protocol/index.ts";
import type { Task } from "../env/tasks/index.ts";
import type { Policy, PolicyStep } from "./expert/index.ts";
import { taskMrn } from "./expert/index.ts";
import { taskKind } from "./metrics.ts";
import { ModelError, RunAborted } from "./model/index.ts";
import type { EpisodeRow, PolicyInfo, RowStatus, Turn, Usage } from "./row.ts";
import { EHRGYM_VERSION } from "./version.ts";

export type { EpisodeRow } from "./row.ts";

/** What the runner needs of an environment (MedAgentEnv satisfies it). */
export interface EpisodeEnv {
  reset(options: ResetOptions): Promise<ResetResult>;
  step(turn: AgentTurn): Promise<StepResult>;
  record(): EpisodeRecord;
  /** Ends a running episode from outside (the policy failed, the model ran out of context). */
  abort?(status: "context_limit" | "error", reason?: string): Promise<unknown>;
  /** Rolls back the episode's writes. */
  close?(): Promise<void>;
}

export interface EpisodeOptions {
  protocol: Protocol;
  maxRounds: number;
  writes?: "execute" | "record";
  /** 0-based index among the task's samples. */
  sample?: number;
  signal?: AbortSignal;
  /** Where the EHR's patients came from (the row's `patients`). */
  patients?: string;
}

const asMessage = (turn: AgentTurn): Message => (typeof turn === "string" ? { role: "assistant", content: turn } : turn);
const isStep = (x: AgentTurn | PolicyStep): x is PolicyStep => typeof x === "object" && x !== null && "turn" in x;

function mrnOf(task: Task): string | undefined {
  try {
    return taskMrn(task);
  } catch {
    return task.eval_MRN;
  }
}

function sumUsage(turns: readonly Turn[]): Usage | undefined {
  if (!turns.some((t) => t.usage)) return undefined;
  const total = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  for (const t of turns) {
    total.prompt_tokens += t.usage?.prompt_tokens ?? 0;
    total.completion_tokens += t.usage?.completion_tokens ?? 0;
    total.total_tokens += t.usage?.total_tokens ?? 0;
  }
  return total;
}

/** Plays one episode. Throws RunAborted (nothing to record) when `signal` aborts; a ModelError marked fatal is rethrown. */
export async function runEpisode(env: EpisodeEnv, policy: Policy, task: Task, options: EpisodeOptions): Promise<EpisodeRow> {
  const startedAt = new Date();
  const t0 = performance.now();
  const reset = await env.reset({ task, protocol: options.protocol, maxRounds: options.maxRounds, writes: options.writes });
  const messages: Message[] = [...reset.observation];
  const turns: Turn[] = [];
  const notes: string[] = [];
  let failure: { status: RowStatus; message: string } | undefined;
  let info = reset.info;
  try {
    for (;;) {
      let acted: AgentTurn | PolicyStep;
      try {
        acted = await policy.act({ task, protocol: options.protocol, messages, ...(reset.tools ? { tools: reset.tools } : {}), ...(options.signal ? { signal: options.signal } : {}), episodeKey: `${task.suite}/${task.id}/${options.sample ?? 0}` });
      } catch (err) {
        if (err instanceof RunAborted || (err instanceof ModelError && err.fatal)) throw err;
        const status: RowStatus = err instanceof ModelError ? err.status : "error";
        failure = { status, message: err instanceof ModelError ? err.message : `policy failed: ${err instanceof Error ? err.message : String(err)}` };
        await env.abort?.(status === "context_limit" ? "context_limit" : "error", failure.message);
        break;
      }
      const turn = isStep(acted) ? acted.turn : acted;
      if (isStep(acted)) {
        if (acted.call) turns.push(acted.call);
        if (acted.note) notes.push(`round ${turns.length || notes.length + 1}: ${acted.note}`);
      }
      messages.push(asMessage(turn));
      const step = await env.step(turn);
      messages.push(...step.observation);
      info = step.info;
      if (step.terminated || step.truncated) break;
    }
  } catch (err) {
    await env.close?.();
    throw err;
  }
  const record = env.record();
  info = record.info ?? info;
  const policyInfo: PolicyInfo = policy.info ?? { kind: "scripted", model: policy.name };
  const usage = sumUsage(turns);
  const mrn = mrnOf(task);
  const error = failure?.message ?? (info.error ? info.error : notes.length ? notes.join("; ") : undefined);
  const row: EpisodeRow = {
    task_id: task.id,
    suite: task.suite,
    type: task.type,
    ...(task.branch ? { branch: task.branch } : {}),
    kind: taskKind(task.suite, task.type),
    ...(mrn ? { mrn } : {}),
    sample: options.sample ?? 0,
    protocol: options.protocol,
    reward: failure ? 0 : (info.reward ?? 0),
    status: failure?.status ?? (info.status === "running" ? "error" : info.status),
    rounds: info.rounds,
    ...(info.partialCredit !== undefined ? { partial_credit: info.partialCredit } : {}),
    ...(info.result !== undefined ? { result: info.result } : {}),
    checks: info.checks ?? [],
    messages: record.messages.length > 0 ? record.messages : messages,
    ...(reset.tools ? { tools: reset.tools } : {}),
    policy: policyInfo,
    ...(usage ? { usage } : {}),
    ...(turns.length ? { turns } : {}),
    started_at: startedAt.toISOString(),
    wall_ms: Math.round((performance.now() - t0) * 100) / 100,
    ehrgym_version: EHRGYM_VERSION,
    ...(options.patients ? { patients: options.patients } : {}),
    ...(error ? { error } : {}),
  };
  return row;
}
