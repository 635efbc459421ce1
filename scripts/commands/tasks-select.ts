// `ehrgym tasks select`: the GRPO curriculum. From eval rows with several samples per task, keep the
// tasks whose pass rate lies in a range (their samples disagree), written as a task file that
// `serve --tasks`, `rollout --tasks` and the Python `prompt_dataset(tasks=...)` read.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { loadTaskFile, TaskFileError, type Task } from "../../env/tasks/index.ts";
import { UserError, writeFileAtomic } from "../../env/util/index.ts";
import { readRowHeads, SampleRow, selectByPassRate, type Selection } from "../../rollout/index.ts";
import { checkOutputFile, existingFile, parseOptions } from "./common.ts";

const PassRate = z
  .string()
  .regex(/^\s*\d*\.?\d+\s*:\s*\d*\.?\d+\s*$/, "expected MIN:MAX like 0.1:0.9")
  .transform((s) => s.split(":").map(Number) as [number, number])
  .refine(([lo, hi]) => lo >= 0 && hi <= 1 && lo <= hi, { message: "expected 0 <= MIN <= MAX <= 1" })
  .transform(([min, max]) => ({ min, max }));

export const SelectTaskOptions = z
  .object({
    from: z.array(existingFile).min(1, "give at least one eval JSONL"),
    tasks: existingFile.optional(),
    passRate: PassRate.default({ min: 0.1, max: 0.9 }),
    minSamples: z.coerce.number().int().min(2).max(1_000_000).default(2),
    out: z.string().min(1, "an output path is required"),
  })
  .strict();
export type SelectTaskOptions = z.infer<typeof SelectTaskOptions>;

const RunMeta = z.looseObject({ tasks: z.looseObject({ kind: z.string(), path: z.string().optional(), sha256: z.string().optional() }).optional() });

/** The task file the eval ran on: --tasks, else the one `<from>.meta.json` names, when it is unchanged. */
function taskFileOf(o: SelectTaskOptions): string {
  if (o.tasks) return o.tasks;
  const named = new Set<string>();
  for (const from of o.from) {
    const metaPath = `${from}.meta.json`;
    if (!existsSync(metaPath)) continue;
    let meta: z.infer<typeof RunMeta>;
    try {
      meta = RunMeta.parse(JSON.parse(readFileSync(metaPath, "utf8")));
    } catch {
      continue; // a meta file is a courtesy: --tasks names the file instead
    }
    const t = meta.tasks;
    if (t?.kind !== "file" || !t.path || !existsSync(t.path)) continue;
    if (t.sha256 && createHash("sha256").update(readFileSync(t.path)).digest("hex") !== t.sha256) continue;
    named.add(t.path);
  }
  if (named.size === 1) return [...named][0]!;
  throw new UserError(
    named.size > 1
      ? `--tasks: the runs were made on different task files (${[...named].join(", ")}); give the one to select from`
      : "--tasks: give the task file the eval ran on (its <from>.meta.json names none that is still there unchanged; generated tasks: write them with `ehrgym tasks generate --out FILE` and eval with --tasks FILE)",
  );
}

async function readSamples(paths: readonly string[]): Promise<SampleRow[]> {
  const rows: SampleRow[] = [];
  const models = new Set<string>();
  for (const path of paths) {
    (await readRowHeads(path)).forEach((head, i) => {
      const r = SampleRow.safeParse(head);
      if (!r.success) throw new UserError(`--from: ${path}: row ${i + 1}: ${r.error.issues[0]?.path.join(".")}: ${r.error.issues[0]?.message}`);
      const p = r.data.policy;
      if (p !== undefined) models.add(typeof p === "string" ? p : p.model);
      rows.push(r.data);
    });
  }
  if (models.size > 1) throw new UserError(`--from: rows of ${models.size} policies (${[...models].join(", ")}): pass rates mean something for one policy; select from one policy's eval`);
  return rows;
}

const rate = (x: number) => String(x);

export function selectionReport(s: Selection, range: { min: number; max: number }, minSamples: number, total: number, out: string, unknown: number): string {
  const lines = [
    `kept ${s.kept.length} of ${total} tasks with a pass rate from ${rate(range.min)} to ${rate(range.max)} (their samples disagree) -> ${out}`,
    `dropped ${s.above.count} solved too often (pass rate above ${rate(range.max)}; ${s.above.always} always solved)`,
    `dropped ${s.below.count} solved too rarely (pass rate below ${rate(range.min)}; ${s.below.never} never solved)`,
  ];
  if (s.tooFew) lines.push(`dropped ${s.tooFew} with fewer than ${minSamples} samples (run the eval with --samples N)`);
  if (s.modelErrors) lines.push(`left out ${s.modelErrors} model_error rows (the endpoint failed; they say nothing about the policy)`);
  if (unknown) lines.push(`dropped ${unknown} tasks that are not in the task file`);
  return lines.join("\n");
}

export async function runSelect(raw: unknown): Promise<Selection> {
  const o = parseOptions(SelectTaskOptions, raw);
  const taskFile = taskFileOf(o);
  checkOutputFile("--out", o.out, [...o.from, taskFile]);
  let tasks: Task[];
  try {
    tasks = loadTaskFile(taskFile);
  } catch (e) {
    if (e instanceof TaskFileError) throw new UserError(`--tasks: ${e.message}`);
    throw e;
  }
  const byKey = new Map(tasks.map((t) => [`${t.suite}\u0000${t.id}`, t]));
  const samples = await readSamples(o.from);
  if (samples.length === 0) throw new UserError(`--from: no episode rows in ${o.from.join(", ")}`);
  const selection = selectByPassRate(samples, o.passRate, o.minSamples);
  const found = selection.kept.filter((t) => byKey.has(`${t.suite}\u0000${t.task_id}`));
  const unknown = selection.kept.length - found.length;
  if (unknown && found.length === 0) throw new UserError(`--tasks: none of the ${unknown} selected tasks is in ${taskFile}: is it the file the eval ran on?`);
  selection.kept = found;
  // The task file's order, so a selection reads like its source.
  const kept = new Set(found.map((t) => `${t.suite}\u0000${t.task_id}`));
  const lines = tasks.filter((t) => kept.has(`${t.suite}\u0000${t.id}`)).map((t) => JSON.stringify(t));
  writeFileAtomic(o.out, lines.length ? `${lines.join("\n")}\n` : "");
  const total = found.length + selection.above.count + selection.below.count + selection.tooFew + unknown;
  process.stdout.write(`${selectionReport(selection, o.passRate, o.minSamples, total, o.out, unknown)}\n`);
  return selection;
}
