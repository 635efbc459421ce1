export * from "./types.ts";
export * from "./json.ts";
export * from "./http-server.ts";
export * from "./remote.ts";
export * from "./snapshot.ts";
