export * from "./task.ts";
export * from "./clock.ts";
export * from "./load.ts";
export * from "./branches.ts";
export * as facts from "./facts/index.ts";
export * from "./generate/index.ts";
export * from "./workflow-rules.ts";
