export { generateTasks, eligibleMrns, type TaskGenerateOptions } from "./generate.ts";
export { patientMrns, splitOf, type Split } from "./population.ts";
