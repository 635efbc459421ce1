// What several folders need once: the seeded PRNGs, the atomic file writes, the body nesting limit.
export * from "./prng.ts";
export * from "./atomic.ts";
export * from "./errors.ts";
export * from "./nesting.ts";
