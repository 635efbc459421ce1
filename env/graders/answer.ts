// The FINISH answer, parsed with Python json.loads semantics.
import * as py from "../python/index.ts";
import type { Checks } from "./checks.ts";
import { show } from "./checks.ts";

export type Parsed = { ok: true; value: py.Py } | { ok: false; error: string };

export function parseAnswer(result: string | undefined): Parsed {
  if (result === undefined) return { ok: false, error: "TypeError: the JSON object must be str, not NoneType (no FINISH result)" };
  return py.tryJsonLoads(result);
}

/** `ref == json.loads(result)` (or `[] == ...` when allowEmpty), inside try/except -> False. */
export function checkAnswerEquals(c: Checks, result: string | undefined, ref: py.Py, allowEmpty = false): boolean {
  const a = parseAnswer(result);
  if (!a.ok) return c.add("answer", false, `FINISH answer ${JSON.stringify(result ?? null)} does not parse as JSON (${a.error}); expected ${show(ref)}`);
  const ok = py.pyEq(ref, a.value) || (allowEmpty && py.pyEq([], a.value));
  return c.add("answer", ok, ok ? `answer ${show(a.value)} matches ${allowEmpty ? `${show(ref)} or []` : show(ref)}` : `answer ${show(a.value)} != expected ${show(ref)}${allowEmpty ? " (or [])" : ""}`);
}
