export * from "./types.ts";
export { grade } from "./grade.ts";
export { hasPost } from "./posts.ts";
