// The calculator as a batch for the CPython differential test (scripts/python/tests/test_calculator.py):
// reads one JSON expression per line on stdin, writes one JSON answer per line:
// {"ok": true, "value": str(result)} or {"ok": false, "error": "<Python exception type>"}.
import { createInterface } from "node:readline";
import { CalculatorError, calculate } from "../../env/protocol/calculator.ts";

const out: string[] = [];
for await (const line of createInterface({ input: process.stdin })) {
  if (!line) continue;
  const expression = JSON.parse(line) as string;
  try {
    out.push(JSON.stringify({ ok: true, value: calculate(expression) }));
  } catch (e) {
    if (!(e instanceof CalculatorError)) throw e;
    out.push(JSON.stringify({ ok: false, error: e.pyType }));
  }
}
process.stdout.write(out.join("\n") + "\n");
