// The production backend: one MedAgentEnv per HTTP episode over one shared EnvConfig (base store, prompts, graders).
import { EnvConfig, MedAgentEnv, type EnvOptions } from "../core/index.ts";
import type { Task } from "../tasks/index.ts";
import type { ServerBackend } from "./backend.ts";

export function medAgentBackend(config: EnvConfig | EnvOptions, tasks: readonly Task[]): ServerBackend {
  const shared = config instanceof EnvConfig ? config : new EnvConfig({ ...config, tasks: config.tasks ?? tasks });
  return {
    tasks,
    createEnv: () => new MedAgentEnv(shared),
  };
}
