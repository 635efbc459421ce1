// What the server needs from the environment: one fresh env per HTTP episode (all sharing one
// base store) and the task catalogue. core's MedAgentEnv is such an env.
import type { EpisodeEnv } from "../core/index.ts";
import type { Task } from "../tasks/index.ts";

export interface ServerBackend {
  /** A new env over the shared base store; reset() is called on it right away. */
  createEnv(): EpisodeEnv;
  /** The tasks `task_id` refers to, in a stable order (GET /v1/tasks, /reset's seed). */
  readonly tasks: readonly Task[];
}
