export { generateTasks, eligibleMrns, type TaskGenerateOptions } from "./generate.ts";
export { patientMrns, splitOf, type Split } from "./population.ts";
export { generateWorkflowTasks, WORKFLOW_NOW, workflowRounds } from "./workflows.ts";
