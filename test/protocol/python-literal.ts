// ast.literal_eval as a batch for the CPython differential test (scripts/python/tests/test_literal_eval.py):
// reads one JSON string per line on stdin, writes one JSON answer per line:
// {"ok": true, "value": repr(result)} or {"ok": false, "error": "<Python exception type>"}.
import { createInterface } from "node:readline";
import { literalEval, PyError, repr } from "../../env/python/index.ts";

const out: string[] = [];
for await (const line of createInterface({ input: process.stdin })) {
  if (!line) continue;
  const text = JSON.parse(line) as string;
  try {
    out.push(JSON.stringify({ ok: true, value: repr(literalEval(text)) }));
  } catch (e) {
    if (!(e instanceof PyError)) throw e;
    out.push(JSON.stringify({ ok: false, error: e.pyType }));
  }
}
process.stdout.write(out.join("\n") + "\n");
