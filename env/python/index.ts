// Python semantics the official harness and graders rely on, one implementation used by protocol,
// tasks and graders: the value model, json.loads/json.dumps, repr()/str(), float formatting,
// str.strip, operators, ast.literal_eval, datetime, pydantic's lax coercions, and eval() of the V2
// calculator's expression language (math, datetime, Decimal, sum).
export * from "./values.ts";
export * from "./numbers.ts";
export * from "./strings.ts";
export * from "./repr.ts";
export * from "./ops.ts";
export * from "./json.ts";
export * from "./literal.ts";
export * from "./datetime.ts";
export * from "./pydantic.ts";
export { evaluate, evaluateToString, type EvalOptions } from "./evaluator.ts";
export { type Clock, fixedClock, WALL_CLOCK } from "./datetime-module.ts";
