export type { ServerBackend } from "./backend.ts";
export { medAgentBackend } from "./medagent.ts";
export { createRewardServer, DEFAULTS, type RewardServer, type RewardServerOptions } from "./server.ts";
