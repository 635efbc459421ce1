export { generateTasks, eligibleMrns, DEFAULT_SPLIT_FRACTIONS, type TaskGenerateOptions } from "./generate.ts";
export { patientMrns, splitOf, SPLITS, type Split } from "./population.ts";
export { likeTemplates } from "./like.ts";
export { ownTemplate, type Template } from "./wording.ts";
