/**
 * env/core: the gym environment.
 *
 * - `EmbeddedBackend(store, service, apiBase?)` / `RemoteBackend(...)`: where FHIR requests go; each
 *   episode gets its own write scope (overlay / journaled remote writes) that is rolled back at the end.
 * - `EnvConfig(options)`: what episodes share (backend, tasks, prompt, grader, rubric); build once.
 * - `MedAgentEnv(config)`: `reset({task | taskId, protocol, maxRounds, writes})`, `step(turn)`,
 *   `abort(status)`, `record()`, `close()`. One episode at a time per instance; create one per
 *   concurrent episode (they are cheap).
 * - Verifiers-style objects: `Rubric`, `Environment` (setupState/envResponse/isCompleted/rollout), `RolloutResult`.
 */
export * from "./types.ts";
export * from "./errors.ts";
export * from "./backend.ts";
export * from "./rubric.ts";
export * from "./env.ts";
export * from "./environment.ts";
export * from "./policy.ts";
export * from "./episode.ts";
export * from "./journal.ts";
export * from "./remote-backend.ts";
