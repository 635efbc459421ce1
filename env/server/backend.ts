// What the server needs from the environment: one fresh env per HTTP episode (all sharing one
// base store) and the task catalogue. core's MedAgentEnv satisfies EpisodeEnv.
import type { AgentTurn, EpisodeRecord, ResetOptions, ResetResult, StepResult } from "../core/index.ts";
import type { Task } from "../tasks/index.ts";

export interface EpisodeEnv {
  reset(options: ResetOptions): Promise<ResetResult>;
  step(turn: AgentTurn): Promise<StepResult>;
  close(): void | Promise<void>;
  /** The transcript so far (GET /v1/episodes/{id}?messages=1 and /v1/score's return_messages). */
  record?(): EpisodeRecord;
}

export interface ServerBackend {
  /** A new env over the shared base store; reset() is called on it right away. */
  createEnv(): EpisodeEnv;
  /** The tasks `task_id` refers to, in a stable order (GET /v1/tasks, /reset's seed). */
  readonly tasks: readonly Task[];
}
