export * from "./base.ts";
export * as v1 from "./v1.ts";
export * as v2 from "./v2.ts";
