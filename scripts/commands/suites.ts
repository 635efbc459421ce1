// The `--suite` and `--types` flags of the commands that generate or select tasks: `all` is every suite
// the project generates; a task type must be one some suite has.
import { z } from "zod";
import { Suite, taskTypes } from "../../env/tasks/index.ts";
import { UserError } from "../../env/util/index.ts";

/** Every suite the project generates, in order: what `--suite all` means. */
export const ALL_SUITES: readonly Suite[] = Suite.options;
/** A `--suite` flag that generates: one suite, or all of them. */
export const SuiteChoice = z.enum([...Suite.options, "all"]);
export type SuiteChoice = z.infer<typeof SuiteChoice>;
export const SUITE_CHOICES_HELP = `${SuiteChoice.options.join(" | ")} (all: every suite, i.e. ${ALL_SUITES.slice(0, -1).join(", ")} and ${ALL_SUITES.at(-1)})`;
export const suitesOf = (choice: SuiteChoice): Suite[] => (choice === "all" ? [...ALL_SUITES] : [choice]);
/** A comma-separated list of suites, `all` among them meaning every suite: the suites, each once, in order. */
export const SuiteList = z
  .string()
  .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
  .pipe(z.array(SuiteChoice).min(1, `name at least one suite (${SuiteChoice.options.join(", ")})`))
  .transform((xs) => ALL_SUITES.filter((s) => xs.flatMap(suitesOf).includes(s)));

const typesOfSuites = (suites: readonly Suite[]) => new Set(suites.flatMap((s) => taskTypes(s)));
/** "task1, ..., task10 (mab-v1, mab-v2); v2_task5, v2_task9, v2_task10 (mab-v2); review (workflows)". */
export function knownTypesText(): string {
  const bySuites = new Map<string, string[]>();
  for (const type of typesOfSuites(ALL_SUITES)) {
    const suites = ALL_SUITES.filter((s) => taskTypes(s).includes(type)).join(", ");
    bySuites.set(suites, [...(bySuites.get(suites) ?? []), type]);
  }
  return [...bySuites].map(([suites, types]) => `${types.join(", ")} (${suites})`).join("; ");
}

/** A `--types` flag: comma-separated task types, each one some suite has (task5, v2_task9, review). */
export const TypesFlag = z
  .string()
  .transform((s) => [...new Set(s.split(",").map((x) => x.trim()).filter(Boolean))])
  .superRefine((types, ctx) => {
    if (types.length === 0) ctx.addIssue({ code: "custom", message: `name at least one task type (${knownTypesText()})` });
    const known = typesOfSuites(ALL_SUITES);
    const unknown = types.filter((t) => !known.has(t));
    if (unknown.length) ctx.addIssue({ code: "custom", message: `unknown task type${unknown.length > 1 ? "s" : ""} ${unknown.map((t) => JSON.stringify(t)).join(", ")} (known: ${knownTypesText()})` });
  });

/** The suites to generate for `--types` when no suite is named: those that have any of the types. */
export const suitesWithTypes = (types: readonly string[]): Suite[] => ALL_SUITES.filter((s) => types.some((t) => taskTypes(s).includes(t)));

/** `--types` against the suites being generated: a type none of them has is the user's mistake. */
export function checkTypesInSuites(types: readonly string[], suites: readonly Suite[], suiteFlag: string): void {
  const have = typesOfSuites(suites);
  const missing = types.filter((t) => !have.has(t));
  if (missing.length === 0) return;
  const where = missing.map((t) => `${t} is a type of ${ALL_SUITES.filter((s) => taskTypes(s).includes(t)).join(" and ")}`).join("; ");
  throw new UserError(`--types: ${missing.map((t) => JSON.stringify(t)).join(", ")} is not a task type of ${suiteFlag} (${where})`);
}
