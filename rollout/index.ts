// rollout: policies (scripted expert), the episode runner, metrics and the eval report.
export * from "./expert/index.ts";
export { runEpisode, type EpisodeEnv, type EpisodeOptions } from "./episode.ts";
export { runEpisodes, RunRefused, type RunItem, type RunOptions, type RunResult, type StopReason } from "./runner.ts";
export { summarize, taskKind, type EvalSummary, type Failure, type Rate, type RowLike, type TaskKind } from "./metrics.ts";
export { formatSummary } from "./report.ts";
export { readRows, readEpisodeRows, readJsonLines, RowFileError, prepareAppend, JsonlAppender } from "./jsonl.ts";
export { agentTurns, createScriptedPolicy } from "./scripted.ts";
export * from "./row.ts";
export { EHRGYM_VERSION } from "./version.ts";
export * from "./model/index.ts";
export { createProgress, type Progress, type ProgressState } from "./progress.ts";
