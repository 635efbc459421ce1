export * from "./action.ts";
