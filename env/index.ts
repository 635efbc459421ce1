// The `ehrgym` package entry: what a program needs to run MedAgentBench-style episodes in-process —
// the environment (env/core), a synthetic EHR, the FHIR store it lives in, and the tasks.
export * from "./core/index.ts";
export { createStoreBuilder, FhirService, type FhirStore } from "./fhir/index.ts";
export { generateStore, type EhrStoreOptions } from "./ehr/index.ts";
export { generateTasks, loadTaskFile, Task, type Suite } from "./tasks/index.ts";
export { StateError, UserError } from "./util/index.ts";
