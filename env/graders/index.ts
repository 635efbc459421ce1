export * from "./types.ts";
export { grade, graderFor, gradedTypes } from "./grade.ts";
export { hasPost, acceptedPosts, type AcceptedPost } from "./posts.ts";
