// Published figures to draw beside the measured ones (a paper's table, a leaderboard), marked
// "not measured here". A small JSON format, validated at load.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { ReportInputError } from "./load.ts";
import { utf8Text } from "../../env/util/index.ts";

const Fraction = z.number().min(0, "a success rate is a fraction in [0, 1]").max(1, "a success rate is a fraction in [0, 1] (write 0.69, not 69)");

export const ReferenceModel = z
  .object({
    name: z.string().min(1),
    overall: Fraction.optional(),
    query: Fraction.optional(),
    action: Fraction.optional(),
    /** Task type (e.g. "task1", "v2_task5") -> success rate, within the file's suite. */
    by_type: z.record(z.string().regex(/^(v2_)?task\d+$/, "a task type like task1 or v2_task5"), Fraction).optional(),
  })
  .strict();
export type ReferenceModel = z.infer<typeof ReferenceModel>;

export const ReferenceFile = z
  .object({
    /** Where the figures come from (paper, table, leaderboard and date). */
    source: z.string().min(1),
    url: z.string().optional(),
    /** The suite the figures are on. */
    suite: z.string().min(1).default("mab-v1"),
    models: z.array(ReferenceModel).min(1),
  })
  .strict();
export type ReferenceFile = z.infer<typeof ReferenceFile>;

/** Published figures shipped with ehrgym (references/<name>.json), usable by name: `--reference medagentbench-v1`. */
const SHIPPED = fileURLToPath(new URL("./references/", import.meta.url));

function shippedReferences(): string[] {
  return readdirSync(SHIPPED)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -".json".length))
    .sort();
}

/** A shipped reference's name, or a file's path (a name is a bare word with no ".json"). */
function resolveReference(nameOrPath: string): string {
  if (!/^[\w.-]+$/.test(nameOrPath) || nameOrPath.endsWith(".json")) return nameOrPath;
  const shipped = `${SHIPPED}${nameOrPath}.json`;
  if (existsSync(shipped)) return shipped;
  if (existsSync(nameOrPath)) return nameOrPath;
  throw new ReportInputError(`--reference: no file ${nameOrPath} and no shipped reference of that name (shipped: ${shippedReferences().join(", ")})`);
}

export function loadReference(nameOrPath: string): ReferenceFile {
  const path = resolveReference(nameOrPath);
  let raw: unknown;
  try {
    raw = JSON.parse(utf8Text(readFileSync(path), path, ReportInputError));
  } catch (err) {
    if (err instanceof ReportInputError) throw new ReportInputError(`--reference: ${err.message}`);
    const code = (err as NodeJS.ErrnoException).code;
    throw new ReportInputError(`--reference: cannot read ${path}: ${code === "ENOENT" ? "no such file" : (err as Error).message}`);
  }
  const checked = ReferenceFile.safeParse(raw);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    // A bad record key reports "Invalid key in record" and carries the key schema's own message inside.
    const inner = issue.code === "invalid_key" ? issue.issues[0]?.message : undefined;
    throw new ReportInputError(`--reference: ${path}: ${issue.path.join(".") || "(file)"}: ${inner ?? issue.message}`);
  }
  return checked.data;
}
