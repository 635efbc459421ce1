// rollout: policies (scripted expert), the episode runner, metrics and the eval report.
export * from "./expert/index.ts";
export { runEpisode, type EpisodeEnv, type EpisodeOptions, type EpisodeRow } from "./episode.ts";
export { runEpisodes, type RunOptions, type RunResult } from "./runner.ts";
export { summarize, taskKind, type EvalSummary, type Failure, type Rate, type RowLike, type TaskKind } from "./metrics.ts";
export { formatSummary } from "./report.ts";
export { readRows } from "./jsonl.ts";
export { agentTurns, createScriptedPolicy } from "./scripted.ts";
export * from "./row.ts";
export { EHRGYM_VERSION } from "./version.ts";
