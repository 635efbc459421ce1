// rollout/expert: the scripted expert policy, its plan per task type, and the facts it reads off a task.
export { createExpertPolicy, parseReply, planFor, replyMessages, type ExpertOptions } from "./policy.ts";
export { ExpertError, nextRequests, type Plan, type Reply, type Request } from "./plan.ts";
export { taskMrn, taskNow } from "./facts.ts";
