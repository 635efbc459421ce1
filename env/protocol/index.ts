// Action protocols: the text protocol (GET/POST/FINISH turns, byte-compatible with the official
// MedAgentBench harness), the tool protocol (OpenAI tool calls), and the canonical action log.
export * from "./action.ts";
export * from "./requests-url.ts";
export * from "./template.ts";
export * from "./text.ts";
export * from "./tools.ts";
export * from "./v2-history.ts";
export * from "./calculator.ts";
export * from "./reasoning.ts";
