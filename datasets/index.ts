// datasets: SFT datasets from rollout rows (DATASETS.md): build, inspect, validate, check, push.
export { TrlRow, TrlMessage, TrlToolCall, rowColumns, type Column } from "./schema.ts";
export { arrowSchema, hfFeatures, cardFeatures } from "./features.ts";
export { toTrlRow, toOpenAiRecord, rowId, sourceRun } from "./convert.ts";
export { invalidTurns, openAiLineProblems, trlLineProblems, toolCallProblems, OPENAI_LINE_FIELDS, OPENAI_MESSAGE_FIELDS, type Keep } from "./checks.ts";
export { buildDataset, type BuildOptions, type BuildResult, type Format } from "./build.ts";
export { Manifest, ManifestFile, MANIFEST, DatasetError, readManifest } from "./manifest.ts";
export { ExcludeFileError, readExcludeFile, HeldOut } from "./exclude.ts";
export { renderChat } from "./render.ts";
export { sizeCategory } from "./card.ts";
export { validateDataset, checkFiles, type ValidateResult } from "./validate.ts";
export { inspectDataset } from "./inspect.ts";
export { pushDataset, dryRun, findToken, describeError, PushError, type PushOptions, type PushResult } from "./push.ts";
