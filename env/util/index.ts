// What several folders need once: the seeded PRNGs and the atomic file writes.
export * from "./prng.ts";
export * from "./atomic.ts";
export * from "./errors.ts";
