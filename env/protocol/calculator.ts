// The `calculator` tool: one Python expression evaluated as the original V2 calculator's eval() does
// (math, datetime, Decimal, sum; env/python/evaluator.ts), answered as Python's str() of the result.
import { type Clock, PyError, evaluateToString, fixedClock } from "../python/index.ts";

/** A Python exception the expression raised; `message` reads "ZeroDivisionError: division by zero". */
export class CalculatorError extends Error {
  constructor(readonly pyType: string, message: string) {
    super(message);
    this.name = "CalculatorError";
  }
}

export interface CalculateOptions {
  /** The instant today()/now()/utcnow() read, as an ISO timestamp (reproducible mode), else the wall clock. */
  now?: string;
}

const clocks = new Map<string, Clock>();

export function calculate(expression: string, options: CalculateOptions = {}): string {
  let clock: Clock | undefined;
  if (options.now !== undefined) {
    clock = clocks.get(options.now);
    if (!clock) clocks.set(options.now, (clock = fixedClock(options.now)));
  }
  try {
    return evaluateToString(expression, { clock });
  } catch (e) {
    if (e instanceof PyError) throw new CalculatorError(e.pyType, e.message);
    if (e instanceof RangeError) throw new CalculatorError("MemoryError", "MemoryError: the expression exceeds ehrgym's bounds");
    throw e;
  }
}
