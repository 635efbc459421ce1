// The `calculator` tool: Python arithmetic on numbers (+ - * / // % **, unary signs, parentheses),
// answered as Python's str() of the result. Anything else is an error.
import { floatRepr } from "../python/index.ts";

type Num = { v: number; int: boolean };

export class CalculatorError extends Error {}

export function calculate(expression: string): string {
  const src = expression.trim();
  if (!src || src.length > 500) throw new CalculatorError(src ? "expression too long" : "empty expression");
  const tokens = src.match(/\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\*\*|\/\/|[-+*/%()]|\S/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const expect = (t: string) => {
    if (tokens[i++] !== t) throw new CalculatorError(`expected ${t}`);
  };
  const bin = (op: string, a: Num, b: Num): Num => {
    const int = a.int && b.int;
    switch (op) {
      case "+": return { v: a.v + b.v, int };
      case "-": return { v: a.v - b.v, int };
      case "*": return { v: a.v * b.v, int };
      case "/":
        if (b.v === 0) throw new CalculatorError("division by zero");
        return { v: a.v / b.v, int: false };
      case "//":
        if (b.v === 0) throw new CalculatorError("division by zero");
        return { v: Math.floor(a.v / b.v), int };
      case "%":
        if (b.v === 0) throw new CalculatorError("modulo by zero");
        return { v: a.v - b.v * Math.floor(a.v / b.v), int };
      default: {
        const v = a.v ** b.v;
        return { v, int: int && b.v >= 0 };
      }
    }
  };
  const atom = (): Num => {
    const t = tokens[i++];
    if (t === undefined) throw new CalculatorError("unexpected end of expression");
    if (t === "(") {
      const v = sum();
      expect(")");
      return v;
    }
    if (/^[\d.]/.test(t)) return { v: Number(t), int: /^\d+$/.test(t) };
    throw new CalculatorError(`unsupported token ${JSON.stringify(t)}`);
  };
  const power = (): Num => {
    const base = atom();
    if (peek() === "**") {
      i++;
      return bin("**", base, unary());
    }
    return base;
  };
  const unary = (): Num => {
    if (peek() === "-" || peek() === "+") {
      const sign = tokens[i++];
      const v = unary();
      return sign === "-" ? { v: -v.v, int: v.int } : v;
    }
    return power();
  };
  const product = (): Num => {
    let v = unary();
    while (["*", "/", "//", "%"].includes(peek() ?? "")) v = bin(tokens[i++]!, v, unary());
    return v;
  };
  const sum = (): Num => {
    let v = product();
    while (peek() === "+" || peek() === "-") v = bin(tokens[i++]!, v, product());
    return v;
  };
  const result = sum();
  if (i !== tokens.length) throw new CalculatorError(`unexpected ${JSON.stringify(tokens[i])}`);
  if (!Number.isFinite(result.v)) throw new CalculatorError("result out of range");
  return result.int ? BigInt(result.v).toString() : floatRepr(result.v);
}
