export { createExpertPolicy, expertTurn, planFor, type ExpertOptions } from "./policy.ts";
export { ExpertError, nextRequests, type Plan, type PlanContext, type Reply, type Request } from "./plan.ts";
export { renderText, parseTextReply, textReplies } from "./text.ts";
export { toolCall, toolReplies } from "./tools.ts";
export { taskMrn, taskNow } from "./facts.ts";
