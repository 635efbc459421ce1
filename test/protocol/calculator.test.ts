// The calculator tool on ehrgym's side: the original's language (eval over math, datetime, Decimal,
// sum), the Python error it names, its safety bounds, and its clock. The differential test against
// CPython itself is scripts/python/tests/test_calculator.py.
import { describe, expect, it } from "vitest";
import { EmbeddedBackend, EnvConfig, MedAgentEnv } from "../../env/core/index.ts";
import { FhirService } from "../../env/fhir/index.ts";
import { CalculatorError, calculate } from "../../env/protocol/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { MRNS, smallStore } from "../core/fixtures.ts";

const factorial = (n: bigint): bigint => (n <= 1n ? 1n : n * factorial(n - 1n));

/** The Python exception type a failing expression names. */
function pyError(expression: string): string {
  try {
    calculate(expression);
  } catch (e) {
    expect(e).toBeInstanceOf(CalculatorError);
    expect((e as Error).message.startsWith(`${(e as CalculatorError).pyType}: `)).toBe(true);
    return (e as CalculatorError).pyType;
  }
  throw new Error(`${expression} did not raise`);
}

describe("calculator language", () => {
  it("answers str() of what the original's eval returns", () => {
    const cases: [string, string][] = [
      ["math.sqrt(16)", "4.0"],
      ["sum([1, 2, 3]) / 3", "2.0"],
      ["Decimal('1.2') ** 3", "1.728"],
      ["Decimal('1.20')", "1.20"],
      ["Decimal(1) / Decimal(3)", "0.3333333333333333333333333333"],
      ["Decimal('2.675').quantize(Decimal('0.01'))", "2.68"],
      ["(datetime.date(2023, 11, 13) - datetime.date(1965, 3, 2)).days", "21440"],
      ["datetime.date(2024, 2, 28) + datetime.timedelta(days=1)", "2024-02-29"],
      ["datetime.timedelta(hours=-25)", "-2 days, 23:00:00"],
      ["True + 1", "2"],
      ["5 > 3", "True"],
      ["[1, 2][0]", "1"],
      ["'a' * 3", "aaa"],
      ["1_000 + 0x10", "1016"],
      ["3 ** 40", "12157665459056928801"],
      ["25 ** -2", "0.0016"],
      ["(3.5 - 3.1) / 0.1 * 10", "39.99999999999999"],
      ["sum(x * x for x in [1, 2, 3])", "14"],
      ["[1, 2.5, 'a', None, (1,), {'k': Decimal('1.0')}]", "[1, 2.5, 'a', None, (1,), {'k': Decimal('1.0')}]"],
      ["'%.2f' % 0.125", "0.12"],
      ["1 if 0 else 2", "2"],
      ["math.floor(-0.5), math.pi", "(-1, 3.141592653589793)"],
    ];
    for (const [expression, answer] of cases) expect(calculate(expression), expression).toBe(answer);
  });

  it("raises what CPython raises, named by its Python type", () => {
    expect(pyError("08 + 1")).toBe("SyntaxError");
    expect(pyError("1\n+ 2")).toBe("SyntaxError");
    expect(pyError("import math")).toBe("SyntaxError");
    expect(pyError("x = 5")).toBe("SyntaxError");
    expect(pyError("abs(-1)")).toBe("NameError");
    expect(pyError("1 / 0")).toBe("ZeroDivisionError");
    expect(pyError("Decimal(1) / 0")).toBe("DivisionByZero");
    expect(pyError("Decimal('abc')")).toBe("InvalidOperation");
    expect(pyError("Decimal(1) + 1.5")).toBe("TypeError");
    expect(pyError("math.sqrt(-1)")).toBe("ValueError");
    expect(pyError("10.0 ** 400")).toBe("OverflowError");
    expect(pyError("datetime.date(2023, 2, 29)")).toBe("ValueError");
    expect(pyError("[][0]")).toBe("IndexError");
    expect(pyError("{}['a']")).toBe("KeyError");
    expect(pyError("10 ** 4300")).toBe("ValueError"); // str() of an int over 4300 digits
    // strftime imports `time` through the builtins, which the original limits to sum.
    expect(pyError("datetime.date(2023, 1, 1).strftime('%Y')")).toBe("KeyError");
  });
});

describe("calculator safety", () => {
  it("reaches nothing past math, datetime, Decimal and sum", () => {
    expect(pyError("().__class__.__base__.__subclasses__()")).toBe("AttributeError");
    expect(pyError("math.__dict__")).toBe("AttributeError");
    expect(pyError("__builtins__")).toBe("NameError");
    expect(pyError("__import__('os')")).toBe("NameError");
    expect(pyError("(lambda: 0).__globals__")).toBe("AttributeError");
    expect(pyError("sum.__self__")).toBe("AttributeError");
    expect(pyError("open('/etc/passwd')")).toBe("NameError");
  });

  it("bounds time and memory: what would run away raises instead", () => {
    expect(pyError("10 ** 10 ** 10")).toBe("MemoryError");
    expect(pyError("'a' * 10 ** 9")).toBe("MemoryError");
    expect(pyError("[0] * 10 ** 8")).toBe("MemoryError");
    expect(pyError("math.factorial(10 ** 6)")).toBe("MemoryError");
    expect(pyError("1 << 10 ** 7")).toBe("MemoryError");
    expect(pyError("math.floor(Decimal('1e999999'))")).toBe("MemoryError");
    expect(pyError("sum(x for x in [0] * 10 ** 6 for y in [0] * 10 ** 6)")).toBe("TimeoutError");
    expect(pyError("(lambda f: f(f))(lambda f: f(f))")).toBe("RecursionError");
    expect(pyError("-".repeat(1000) + "1")).toBe("RecursionError");
    // Just under the bounds still answers.
    expect(calculate("2 ** 10000 % 7")).toBe(String((2n ** 10000n) % 7n));
    expect(calculate("math.factorial(1000) % 1000003")).toBe(String(factorial(1000n) % 1000003n));
  });

  it("leaves out what it does not support, as an error", () => {
    expect(pyError("(-8) ** (1 / 3)")).toBe("ValueError"); // a complex result in CPython
    expect(pyError("1j")).toBe("ValueError");
    expect(pyError("f'{1}'")).toBe("SyntaxError");
  });
});

describe("calculator clock", () => {
  it("reads the wall clock, or the reproducible mode's fixed time", () => {
    const year = new Date().getUTCFullYear();
    expect(Number(calculate("datetime.datetime.utcnow().year"))).toBeGreaterThanOrEqual(year);
    const now = "2023-11-13T10:15:00.000+00:00";
    expect(calculate("datetime.date.today()", { now })).toBe("2023-11-13");
    expect(calculate("datetime.datetime.now()", { now })).toBe("2023-11-13 10:15:00");
    expect(calculate("datetime.datetime.utcnow()", { now })).toBe("2023-11-13 10:15:00");
    expect(calculate("datetime.datetime.now(datetime.timezone.utc).isoformat()", { now })).toBe("2023-11-13T10:15:00+00:00");
    expect(calculate("(datetime.date.today() - datetime.date(1953, 11, 13)).days // 365", { now })).toBe("70");
  });

  it("is the FHIR server's fixed time in an environment with reproducible stamps", async () => {
    const store = smallStore();
    const service = new FhirService(store, { reproducible: true });
    expect(service.fixedTime).toBe("2023-11-13T10:15:00.000+00:00");
    expect(new FhirService(store).fixedTime).toBeUndefined();
    const env = new MedAgentEnv(new EnvConfig({ backend: new EmbeddedBackend(store, service) }));
    const task: Task = { id: "task2_1", suite: "mab-v1", type: "task2", instruction: "age?", context: "It's 2023-11-13T10:15:00+00:00 now", eval_MRN: MRNS[0]! };
    await env.reset({ task, protocol: "tools" });
    await env.step({ role: "assistant", content: null, tool_calls: [{ id: "c2", type: "function", function: { name: "calculator", arguments: JSON.stringify({ expression: "datetime.date.today()" }) } }] });
    const replies = env.record().messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(replies).toContain("2023-11-13");
  });
});
