// datasets: SFT datasets from rollout rows (DATASETS.md): build, inspect, validate, check, push.
export { TrlRow, rowColumns } from "./schema.ts";
export { DpoRow } from "./dpo.ts";
export { KtoRow } from "./kto.ts";
export { hfFeatures, cardFeatures } from "./features.ts";
export { toolCallProblems, OPENAI_LINE_FIELDS, OPENAI_MESSAGE_FIELDS, type Keep } from "./checks.ts";
export { buildDataset, type BuildOptions, type BuildResult, type BuildStage, type Format } from "./build.ts";
export { DatasetError } from "./manifest.ts";
export { loadTokenizerFile, type TextTokenizer } from "./tokenizer.ts";
export { loadChatTemplate, type ChatTemplate } from "./chat-template.ts";
export { ExcludeFileError, readExcludeFile, HeldOut } from "./exclude.ts";
export { validateDataset, checkFiles, type ValidateResult } from "./validate.ts";
export { inspectDataset } from "./inspect.ts";
export { pushDataset, dryRun, findToken, PushError, type PushOptions, type PushResult } from "./push.ts";
