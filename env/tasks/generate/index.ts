export { generateTasks, eligibleMrns, type TaskGenerateOptions } from "./generate.ts";
export { patientMrns, splitOf, type Split } from "./population.ts";
export { generateWorkflowTasks, WORKFLOW_LATE_NOW, WORKFLOW_NOW, WORKFLOW_NOWS, workflowRounds } from "./workflows.ts";
