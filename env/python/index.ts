// Python semantics the official harness and graders rely on, one implementation used by protocol,
// tasks and graders: the value model, json.loads/json.dumps, repr()/str(), float formatting,
// str.strip, operators, ast.literal_eval and datetime.
export * from "./values.ts";
export * from "./numbers.ts";
export * from "./strings.ts";
export * from "./repr.ts";
export * from "./ops.ts";
export * from "./json.ts";
export * from "./literal.ts";
export * from "./datetime.ts";
