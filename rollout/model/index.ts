export { createModelPolicy, type ModelPolicy, type ModelPolicyOptions, type ModelStats } from "./policy.ts";
export { backoffMs, sleep } from "./backoff.ts";
export { RateLimiter, TokenBucket, type Clock } from "./rate-limit.ts";
