// rollout: the policies (the scripted expert, an OpenAI-compatible model), the runner that plays them
// over many (task, sample) keys into JSONL episode rows, the rows' summary metrics, and the run report.
export { createExpertPolicy, type ExpertOptions } from "./expert/index.ts";
export { createModelPolicy, type ModelPolicyOptions } from "./model/index.ts";
export { runEpisodes, RunRefused, type RunItem, type RunOptions, type RunResult } from "./runner.ts";
export { EpisodeRow, rowKey, type EpisodeRowInput } from "./row.ts";
export { readRows, readRowHeads, RowFileError, type RowHead } from "./jsonl.ts";
export { summarize, type EvalSummary, type RowLike } from "./metrics.ts";
export { formatSummary, loadReference, ReferenceFile, ReportInputError, writeReport, type ReportSummary } from "./report/index.ts";
export { EHRGYM_VERSION } from "./version.ts";
export { passRates, SampleRow, selectByPassRate, type Selection, type TaskPassRate } from "./curriculum.ts";
export { fullPrompts, trajectoryTokens, type TrajectoryTokens } from "./tokens.ts";
export { assistantBody, IM_END, IM_START, renderChat as renderChatML } from "./chatml.ts";
export { byteLevelChars } from "./teacher/tokenizer-file.ts";
