// `ehrgym tasks generate|stats`: generate branch-balanced task sets on any population; show balance.
import { existsSync, readFileSync, statSync } from "node:fs";
import type { Command } from "commander";
import { z } from "zod";
import { generateTasks, loadTaskFile, parseTaskFile, type Suite, TaskFileError, type Task, taskTypes } from "../../env/tasks/index.ts";
import { UserError, utf8Text, writeFileAtomic } from "../../env/util/index.ts";
import { checkOutputFile, collect, existingDir, existingFile, NO_CACHE_HELP, parseOptions } from "./common.ts";
import { openStore } from "./fhir.ts";
import { createMeter, type Meter } from "./progress.ts";
import { ALL_SUITES, checkTypesInSuites, SUITE_CHOICES_HELP, SuiteList, TypesFlag } from "./suites.ts";
import { runSelect } from "./tasks-select.ts";

const intFlag = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const Fractions = z
  .string()
  .transform((s) => s.split(",").map((x) => Number(x.trim())))
  .refine((xs) => xs.length === 3 && xs.every((x) => Number.isFinite(x)), { message: "expected three numbers like 0.8,0.1,0.1" })
  .refine((xs) => xs.every((x) => x >= 0 && x <= 1), { message: "each fraction must be from 0 to 1" })
  .refine((xs) => Math.abs(xs[0]! + xs[1]! + xs[2]! - 1) < 1e-9, { message: "the three fractions must sum to 1" })
  .transform((xs) => xs as [number, number, number]);

export const GenerateTaskOptions = z
  .object({
    suite: SuiteList.default([...ALL_SUITES]),
    perType: intFlag(1, 1_000_000).default(50),
    out: z.string().min(1, "an output path is required"),
    seed: intFlag(0, 2 ** 31 - 1).default(1),
    data: existingDir.optional(),
    synthetic: z.boolean().optional(),
    patients: intFlag(1, 100_000).optional(),
    ehrSeed: intFlag(0, 2 ** 31 - 1).optional(),
    excludeMrnsFrom: z.array(existingFile).default([]),
    split: z.enum(["train", "val", "test"]).optional(),
    splitFractions: Fractions.optional(),
    like: z.array(existingFile).default([]),
    types: TypesFlag.optional(),
    includeUnwinnable: z.boolean().default(false),
    cache: z.boolean().default(true),
  })
  .strict();
export type GenerateTaskOptions = z.infer<typeof GenerateTaskOptions>;

/** MRNs named by a task file (eval_MRN) or an MRN list (one per line, # comments). */
export function readMrns(path: string): string[] {
  const text = utf8Text(readFileSync(path), `--exclude-mrns-from: ${path}`);
  const head = text.trimStart()[0];
  if (head === "[" || head === "{") {
    try {
      return parseTaskFile(text, { source: path })
        .map((t) => t.eval_MRN)
        .filter((m): m is string => m !== undefined);
    } catch (e) {
      if (e instanceof TaskFileError) throw new UserError(`--exclude-mrns-from: ${e.message}`);
      throw e;
    }
  }
  const mrns: string[] = [];
  text.split("\n").forEach((line, i) => {
    const s = line.replace(/#.*/, "").trim();
    if (!s) return;
    if (!/^[A-Za-z0-9\-.]{1,64}$/.test(s)) throw new UserError(`--exclude-mrns-from: ${path}:${i + 1}: not an MRN: ${JSON.stringify(s)}`);
    mrns.push(s);
  });
  return mrns;
}

function writeJsonlAtomic(path: string, rows: readonly unknown[]): void {
  writeFileAtomic(path, rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length ? "\n" : ""));
}

export async function runGenerate(o: GenerateTaskOptions): Promise<Task[]> {
  if (o.data && o.synthetic) throw new UserError("--data cannot be combined with --synthetic");
  if (o.data && (o.patients !== undefined || o.ehrSeed !== undefined)) throw new UserError("--patients and --ehr-seed need --synthetic (not --data)");
  checkOutputFile("--out", o.out, [...o.like, ...o.excludeMrnsFrom]);
  let suites: Suite[] = o.suite;
  if (o.types) {
    checkTypesInSuites(o.types, suites, `--suite ${o.suite.join(",")}`);
    suites = suites.filter((s) => o.types!.some((t) => taskTypes(s).includes(t)));
  }
  const like: Task[] = [];
  for (const f of o.like) {
    try {
      like.push(...loadTaskFile(f));
    } catch (e) {
      if (e instanceof TaskFileError) throw new UserError(`--like: ${e.message}`);
      throw e;
    }
  }
  const exclude = new Set(o.excludeMrnsFrom.flatMap(readMrns));
  const types = o.types;
  const store = await openStore(o.data ? { data: o.data } : { synthetic: true, seed: o.ehrSeed, patients: o.patients, cache: o.cache });
  const tasks: Task[] = [];
  for (const suite of suites) {
    let meter: Meter | undefined;
    tasks.push(
      ...generateTasks(store, {
        suite,
        perType: o.perType,
        seed: o.seed,
        excludeMrns: exclude,
        ...(types ? { types } : {}),
        ...(o.split ? { split: o.split } : {}),
        ...(o.splitFractions ? { splitFractions: o.splitFractions } : {}),
        ...(like.length ? { like } : {}),
        includeUnwinnable: o.includeUnwinnable,
        onProgress: (done, total, type) => {
          meter ??= createMeter({ label: `tasks ${suite}:`, unit: "task types", total });
          meter.update(done, `last ${type}`);
        },
      }),
    );
    meter?.stop();
  }
  if (tasks.length === 0) throw new UserError("no tasks could be generated (empty population after --exclude-mrns-from / --split?)");
  writeJsonlAtomic(o.out, tasks);
  process.stderr.write(`wrote ${tasks.length} tasks to ${o.out}\n`);
  return tasks;
}

/** Counts per suite/type/branch. */
export function taskStats(tasks: readonly Task[]): string {
  const rows = new Map<string, Map<string, number>>();
  for (const t of tasks) {
    const key = `${t.suite}/${t.type}`;
    const m = rows.get(key) ?? new Map<string, number>();
    m.set(t.branch ?? "(none)", (m.get(t.branch ?? "(none)") ?? 0) + 1);
    rows.set(key, m);
  }
  const num = (k: string) => Number(/task(\d+)/.exec(k)?.[1] ?? 0) + (k.includes("/v2_") ? 100 : 0);
  const keys = [...rows.keys()].sort((a, b) => a.split("/")[0]!.localeCompare(b.split("/")[0]!) || num(a) - num(b));
  const lines = [`${tasks.length} tasks`];
  for (const k of keys) {
    const m = rows.get(k)!;
    const total = [...m.values()].reduce((a, b) => a + b, 0);
    lines.push(`${k.padEnd(18)} ${String(total).padStart(6)}  ${[...m].map(([b, n]) => `${b}=${n}`).join("  ")}`);
  }
  return lines.join("\n");
}

export function registerTasks(program: Command): void {
  const tasks = program.command("tasks").description("task sets: generate branch-balanced tasks, select a curriculum from eval rows, show their balance");
  tasks
    .command("generate")
    .description("generate tasks of one suite or all of them (mab-v1, mab-v2, workflows) on a population (JSONL)")
    .option("--suite <suite>", `${SUITE_CHOICES_HELP}, or a comma-separated list of them`, "all")
    .option("--per-type <n>", "tasks per task type (workflows: chart reviews)", "50")
    .requiredOption("--out <file>", "output JSONL file")
    .option("--seed <n>", "task seed", "1")
    .option("--data <dir>", "load every *.ndjson of this folder as the population")
    .option("--synthetic", "use the synthetic EHR (default when --data is absent)")
    .option("--patients <n>", "synthetic population size")
    .option("--ehr-seed <n>", "synthetic EHR seed")
    .option("--no-cache", NO_CACHE_HELP)
    .option("--exclude-mrns-from <file>", "hold out MRNs of a task file or an MRN list (repeatable)", collect, [])
    .option("--split <name>", "train | val | test: keep only patients of this split")
    .option("--split-fractions <a,b,c>", "train,val,test fractions (default 0.8,0.1,0.1)")
    .option("--like <file>", "take the wording from an official task file (repeatable)", collect, [])
    .option("--types <list>", "only these task types, comma-separated (task5, v2_task9; review is the workflows suite's type); only the suites that have them are generated")
    .option("--include-unwinnable", "also generate tasks on branches no agent can pass (e.g. v2_task9 without K data)")
    .action(async (raw: Record<string, unknown>) => {
      await runGenerate(parseOptions(GenerateTaskOptions, raw));
    });
  tasks
    .command("select")
    .description("the GRPO curriculum: keep the tasks whose eval samples disagree (pass rate in a range), as a task file")
    .requiredOption("--from <file>", "eval rows (JSONL) with several samples per task (repeatable)", collect)
    .option("--tasks <file>", "the task file the eval ran on (default: the one <from>.meta.json names)")
    .option("--pass-rate <min:max>", "keep tasks whose pass rate is in this range, both ends included", "0.1:0.9")
    .option("--min-samples <n>", "drop tasks with fewer samples than this", "2")
    .requiredOption("--out <file>", "output task file (JSONL)")
    .action(async (raw: Record<string, unknown>) => {
      await runSelect(raw);
    });
  tasks
    .command("stats")
    .description("counts per suite / type / branch of a task file")
    .argument("<file>", "task file (JSONL or an official JSON array)")
    .action((file: string) => {
      if (!existsSync(file) || !statSync(file).isFile()) throw new UserError(`<file>: no such file: ${JSON.stringify(file)}`);
      process.stdout.write(`${taskStats(loadTaskFile(file))}\n`);
    });
}
