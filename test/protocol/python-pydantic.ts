// pydantic's lax float and str as a batch for the differential test against real pydantic
// (scripts/python/tests/test_pydantic_lax.py): reads one JSON value per line on stdin (as the original's
// json.loads gives it), writes one JSON answer per line: {"float": value or null when refused,
// "str": true when a str field accepts it}. NaN and the infinities are written as strings.
import { createInterface } from "node:readline";
import { laxFloat, strField } from "../../env/python/index.ts";

const out: string[] = [];
for await (const line of createInterface({ input: process.stdin })) {
  if (!line) continue;
  const value = JSON.parse(line) as unknown;
  const f = laxFloat(value);
  const float = f === undefined ? null : Number.isFinite(f) ? f : String(f);
  out.push(JSON.stringify({ float, str: strField().safeParse(value).success }));
}
process.stdout.write(out.join("\n") + "\n");
