// rollout: policies (scripted expert), the episode runner, metrics, statistics and the reports.
export * from "./expert/index.ts";
export { runEpisodes, RunRefused, type RunItem, type RunOptions, type RunResult, type StopReason } from "./runner.ts";
export {
  STATUSES,
  STATUS_LABELS,
  summarize,
  taskKind,
  type EvalSummary,
  type Failure,
  type LatencySummary,
  type PassAtK,
  type Rate,
  type RowLike,
  type Status,
  type TaskKind,
  type UsageSummary,
} from "./metrics.ts";
export { meanPassAtK, mcnemarExact, passAtK, quantiles, wilson, type Interval, type McNemar } from "./stats.ts";
export {
  buildReport,
  compareRuns,
  formatSummary,
  loadReference,
  loadRun,
  ReferenceFile,
  ReportInputError,
  writeReport,
  type Comparison,
  type McNemarRow,
  type ReportSummary,
  type RunInput,
  type WriteReportOptions,
  type WrittenReport,
} from "./report/index.ts";
export { readRows, readEpisodeRows, readJsonLines, readRowHeads, rowHead, RowFileError, prepareAppend, JsonlAppender, type RowHead } from "./jsonl.ts";
export { lockOutput, OutputLocked, type LockHolder, type OutputLock } from "./out-lock.ts";
export * from "./row.ts";
export { EHRGYM_VERSION } from "./version.ts";
export * from "./model/index.ts";
export { createProgress, type Progress, type ProgressState } from "./progress.ts";
export * from "./teacher/index.ts";
