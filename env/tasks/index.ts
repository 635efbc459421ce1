export * from "./task.ts";
