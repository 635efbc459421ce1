// rollout/model: the model policy (any OpenAI-compatible chat-completions endpoint) and its counters.
export { createModelPolicy, type ModelPolicyOptions, type ModelStats } from "./policy.ts";
