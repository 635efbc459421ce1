export * from "./types.ts";
export { grade } from "./grade.ts";
export { hasPost } from "./posts.ts";
export { identifiesOrder, reportObject } from "./workflows.ts";
