// datasets: SFT datasets from rollout rows (DATASETS.md): build, inspect, validate, push.
export { TrlRow, TrlMessage, TrlToolCall, rowColumns, type Column } from "./schema.ts";
export { arrowSchema, hfFeatures, cardFeatures } from "./features.ts";
export { toTrlRow, toOpenAiLine, rowId, sourceRun, OPENAI_MESSAGE_FIELDS, OPENAI_LINE_FIELDS } from "./convert.ts";
export { buildDataset, type BuildOptions, type BuildResult, type Format } from "./build.ts";
export { Manifest, ManifestFile, MANIFEST, DatasetError, readManifest } from "./manifest.ts";
export { ExcludeFileError, readExcludeFile } from "./exclude.ts";
export { renderChat } from "./render.ts";
export { sizeCategory } from "./card.ts";
export { validateDataset, type ValidateResult } from "./validate.ts";
export { toolCallProblems } from "./checks.ts";
export { inspectDataset } from "./inspect.ts";
export { pushDataset, dryRun, findToken, describeError, PushError, type PushOptions, type PushResult } from "./push.ts";
