export * from "./values.ts";
export * from "./numbers.ts";
export * from "./ops.ts";
export * from "./json.ts";
export * from "./literal.ts";
export * from "./datetime.ts";
