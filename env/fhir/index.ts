export * from "./types.ts";
export * from "./json.ts";
