// What several folders need once: the seeded PRNGs, the atomic file writes, JSONL appends, the body
// nesting limit, the UTF-8 check of text files read from users, grouping.
export * from "./prng.ts";
export * from "./atomic.ts";
export * from "./errors.ts";
export * from "./nesting.ts";
export * from "./text.ts";
export * from "./jsonl.ts";
export * from "./group.ts";
