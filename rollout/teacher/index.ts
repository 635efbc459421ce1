// rollout/teacher: the OpenAI-compatible stand-in model server (ROLLOUT.md "A stand-in model server").
export { startTeacherServer, replyDelays, DEFAULT_MODEL, type TeacherServer, type TeacherServerInput } from "./server.ts";
export { parseFaults, FaultSpecError, type FaultRates } from "./faults.ts";
export { TeacherReasoning } from "./reasoning.ts";
export { standInTokenizerJson } from "./tokenizer-file.ts";
