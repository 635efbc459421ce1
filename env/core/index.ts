/**
 * env/core: the gym environment and the one episode loop.
 *
 * - `EmbeddedBackend(store, service, apiBase?)` / `RemoteBackend(...)`: where FHIR requests go; each
 *   episode gets its own write scope (overlay / journaled remote writes) that is rolled back at the end.
 * - `EnvConfig(options)`: what episodes share (backend, tasks, prompt, grader, rubric); build once.
 * - `MedAgentEnv(config)`: `reset({task | taskId, protocol, maxRounds, writes})`, `step(turn)`,
 *   `abort(status)`, `record()`, `close()`. One episode at a time per instance; create one per
 *   concurrent episode (they are cheap).
 * - `runEpisode(env, policy, options)`: the one episode loop, over any `EpisodeEnv` and `Policy`
 *   (rollouts, eval, /v1/score and `Environment.rollout` all run it).
 * - Verifiers-style objects: `Rubric`, `Environment` (setupState/envResponse/isCompleted/rollout), `RolloutResult`.
 */
export * from "./types.ts";
export { EnvInputError, EpisodeStateError } from "./errors.ts";
export { DEFAULT_API_BASE, EmbeddedBackend, type Backend } from "./backend.ts";
export { RemoteBackend, type RemoteBackendOptions } from "./remote-backend.ts";
export { readJournal } from "./journal.ts";
export { binaryReward, defaultRubric, Rubric, RubricSpec } from "./rubric.ts";
export { EnvConfig, MedAgentEnv, type EnvOptions } from "./env.ts";
export { Environment, RolloutResult, type EnvironmentOptions } from "./environment.ts";
export * from "./policy.ts";
export { historyMessage, readAgentTurn, reasoningField } from "./reasoning.ts";
export { TurnTokens } from "./tokens.ts";
export { runEpisode, type EpisodeEnv, type EpisodeOptions, type PlayedEpisode } from "./episode.ts";
