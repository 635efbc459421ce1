// rollout/teacher: the OpenAI-compatible stand-in model server (ROLLOUT.md "A stand-in model server").
export { startTeacherServer, replyDelays, TeacherServerOptions, DEFAULT_MODEL, OWNED_BY, type TeacherServer, type TeacherServerInput, type ChatCompletion } from "./server.ts";
export { parseFaults, FAULT_KINDS, FaultSpecError, type FaultKind, type FaultRates } from "./faults.ts";
export { MISTAKES, type Mistake } from "./mistakes.ts";
export { loadTokenizer, messageTokens } from "./usage.ts";
