// Search work that can touch a whole table runs as a generator: it yields every few milliseconds of
// work so a server answers other requests between slices, and it stops with a 4xx "too-costly"
// OperationOutcome once it has read more resources than the budget allows (README "FHIR server").
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Criterion } from "./query.ts";
import { FhirError } from "./types.ts";

/** Work in progress: yields between slices, returns the result. */
export type Scan<T> = Generator<void, T, void>;

/** Resources a search may read (parse) because no index answers its criteria. */
export const DEFAULT_SCAN_LIMIT = 50_000;
/** Cost units between yields; a row checked costs 1, a row parsed PARSE_COST. */
export const SLICE = 8192;
export const PARSE_COST = 32;

/** Run a scan to its end at once (library calls, graders). */
export function runSync<T>(scan: Scan<T>): T {
  for (;;) {
    const step = scan.next();
    if (step.done) return step.value;
  }
}

/** Run a scan's first slice now; if it is not done, the rest slice by slice between other work. */
export function runIncremental<T>(scan: Scan<T>): T | Promise<T> {
  const step = scan.next();
  if (step.done) return step.value;
  return (async () => {
    for (;;) {
      await nextTurn();
      const s = scan.next();
      if (s.done) return s.value;
    }
  })();
}

/** How a criterion is written in the query ("value-quantity", "code:not"). */
export function describe(c: Criterion): string {
  return c.modifier ? `${c.def.name}:${c.modifier}` : c.def.name;
}

/** The 4xx a search gets once it has read `limit` resources without an index; `params` name the culprits. */
export function tooCostly(type: string, limit: number, params: readonly string[]): FhirError {
  const named = params.length ? ` (${[...new Set(params)].join(", ")})` : "";
  return new FhirError(
    400,
    `Search is too costly: it would read more than ${limit} ${type} resources that no index selects${named}. ` +
      `Narrow it with an indexed parameter: patient or subject, code, category, _id, or a date range.`,
    "too-costly",
  );
}
