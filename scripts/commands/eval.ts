// `ehrgym eval`: run a policy over a task set on the embedded EHR, write one JSONL row per
// episode (resumable), print success rates overall / per type / query vs action.
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { DEFAULT_API_BASE, EmbeddedBackend, EnvConfig, MedAgentEnv } from "../../env/core/index.ts";
import { generateStore } from "../../env/ehr/index.ts";
import { FhirService, type FhirResource, type FhirStore } from "../../env/fhir/index.ts";
import { generateTasks, loadTaskFile, Suite, TaskFileError, type Task } from "../../env/tasks/index.ts";
import { createExpertPolicy, formatSummary, readRows, runEpisodes, summarize } from "../../rollout/index.ts";
import { UsageError, parseOptions } from "./common.ts";
import { openStore } from "./fhir.ts";

const intFlag = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const existingFile = z.string().refine((p) => existsSync(p) && statSync(p).isFile(), { message: "no such file" });
const existingDir = z.string().refine((p) => existsSync(p) && statSync(p).isDirectory(), { message: "no such directory" });
const list = z.string().transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean));

export const EvalOptions = z
  .object({
    policy: z.enum(["expert"]).default("expert"),
    tasks: existingFile.optional(),
    suite: Suite.optional(),
    suites: list.pipe(z.array(Suite).min(1)).optional(),
    perType: intFlag(1, 100_000).default(10),
    patientsFrom: existingFile.optional(),
    chartsFor: existingFile.optional(),
    data: existingDir.optional(),
    seed: intFlag(0, 2 ** 31 - 1).optional(),
    patients: intFlag(1, 100_000).optional(),
    protocol: z.enum(["text", "tools"]).default("text"),
    maxRounds: intFlag(1, 1000).default(8),
    writes: z.enum(["execute", "record"]).default("execute"),
    out: z.string().min(1).default("runs/expert-eval.jsonl"),
    report: z.string().min(1).optional(),
    concurrency: intFlag(1, 1024).default(4),
    limit: intFlag(1, 10_000_000).optional(),
    types: list.pipe(z.array(z.string().regex(/^(v2_)?task\d+$/, "a task type like task5 or v2_task9")).min(1)).optional(),
    failUnder: z.coerce.number().min(0).max(100).optional(),
    progress: z.boolean().default(true),
  })
  .strict();
export type EvalOptions = z.infer<typeof EvalOptions>;

function readPatients(path: string): FhirResource[] {
  const out: FhirResource[] = [];
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (!line.trim()) return;
      let r: unknown;
      try {
        r = JSON.parse(line);
      } catch {
        throw new UsageError(`--patients-from: ${path}:${i + 1} is not JSON`);
      }
      if (!r || typeof r !== "object" || (r as FhirResource).resourceType !== "Patient") throw new UsageError(`--patients-from: ${path}:${i + 1} is not a Patient resource`);
      out.push(r as FhirResource);
    });
  if (out.length === 0) throw new UsageError(`--patients-from: no Patient resources in ${path}`);
  return out;
}

/** MRNs named by a task file (eval_MRN), for --charts-for. */
function taskMrns(path: string, suite?: Suite): string[] {
  return [...new Set(loadTaskFile(path, suite ? { suite } : {}).flatMap((t) => (t.eval_MRN ? [t.eval_MRN] : [])))];
}

async function buildStore(o: EvalOptions): Promise<FhirStore> {
  if (o.data && (o.patientsFrom || o.seed !== undefined || o.patients !== undefined))
    throw new UsageError("--data cannot be combined with --patients-from, --seed or --patients");
  if (o.data) return openStore({ data: o.data });
  if (o.chartsFor && !o.patientsFrom) throw new UsageError("--charts-for needs --patients-from");
  const chartsFor = o.chartsFor ?? (o.patientsFrom ? o.tasks : undefined);
  const t0 = performance.now();
  const { store } = generateStore({
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.patients !== undefined ? { patients: o.patients } : {}),
    ...(o.patientsFrom ? { patientsFrom: readPatients(o.patientsFrom) } : {}),
    ...(chartsFor ? { chartsFor: taskMrns(chartsFor, o.suite) } : {}),
  });
  process.stderr.write(`generated ${store.size.toLocaleString("en-US")} resources in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  return store;
}

function selectTasks(o: EvalOptions, store: FhirStore): Task[] {
  let tasks: Task[];
  if (o.tasks) {
    try {
      tasks = loadTaskFile(o.tasks, o.suite ? { suite: o.suite } : {});
    } catch (err) {
      if (err instanceof TaskFileError) throw new UsageError(`--tasks: ${err.message}`);
      throw err;
    }
  } else {
    const suites: Suite[] = o.suites ?? (o.suite ? [o.suite] : ["mab-v1", "mab-v2"]);
    tasks = suites.flatMap((suite) => generateTasks(store, { suite, perType: o.perType, ...(o.seed !== undefined ? { seed: o.seed } : {}) }));
  }
  if (o.types) {
    const wanted = new Set(o.types);
    tasks = tasks.filter((t) => wanted.has(t.type));
  }
  if (o.limit !== undefined) tasks = tasks.slice(0, o.limit);
  if (tasks.length === 0) throw new UsageError("no tasks selected (check --tasks, --types, --limit)");
  return tasks;
}

function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export async function runEval(raw: unknown): Promise<number> {
  const o = parseOptions(EvalOptions, raw);
  try {
    await readRows(o.out); // a corrupt --out is a usage error, found before any work
  } catch (err) {
    throw new UsageError(`--out: ${err instanceof Error ? err.message : String(err)}`);
  }
  const store = await buildStore(o);
  const tasks = selectTasks(o, store);
  const config = new EnvConfig({ backend: new EmbeddedBackend(store, new FhirService(store, { baseUrl: DEFAULT_API_BASE }), DEFAULT_API_BASE) });
  const makeEnv = () => new MedAgentEnv(config);
  const policy = createExpertPolicy({ apiBase: DEFAULT_API_BASE, maxRounds: o.maxRounds });
  const { rows, skipped } = await runEpisodes({
    makeEnv,
    policy,
    tasks,
    protocol: o.protocol,
    maxRounds: o.maxRounds,
    writes: o.writes,
    concurrency: o.concurrency,
    out: o.out,
    ...(o.progress ? {} : { progress: false }),
  });
  const all = await readRows(o.out);
  const summary = summarize(all as never);
  process.stdout.write(`${formatSummary(summary)}\n`);
  process.stdout.write(`\n${rows.length} episodes run${skipped ? `, ${skipped} already in the file` : ""}; ${all.length} rows in ${o.out}\n`);
  if (o.report) writeAtomic(o.report, `${JSON.stringify(summary, null, 2)}\n`);
  if (o.failUnder !== undefined && summary.overall.rate * 100 < o.failUnder) return 1;
  return 0;
}

export function registerEval(program: Command): void {
  program
    .command("eval")
    .description("Run a policy over tasks on the embedded EHR; JSONL per episode + success rates (resumable)")
    .option("--policy <name>", "policy to run: expert", "expert")
    .option("--tasks <file>", "task file (official JSON or ehrgym tasks); default: generated tasks of both suites")
    .option("--suite <suite>", "suite of --tasks when it cannot be detected, or the one suite to generate")
    .option("--suites <list>", "suites to generate tasks for (default mab-v1,mab-v2)")
    .option("--per-type <n>", "generated tasks per type", "10")
    .option("--patients-from <file>", "Patient NDJSON to use as the population")
    .option("--charts-for <file>", "task file whose patients get full charts (default: --tasks with --patients-from)")
    .option("--data <dir>", "load an NDJSON export instead of generating")
    .option("--seed <n>", "synthetic population / task seed")
    .option("--patients <n>", "synthetic population size")
    .option("--protocol <p>", "text | tools", "text")
    .option("--max-rounds <n>", "round limit per episode", "8")
    .option("--writes <mode>", "execute | record", "execute")
    .option("--out <file>", "JSONL output (appended; tasks already in it are skipped)", "runs/expert-eval.jsonl")
    .option("--report <file>", "also write the summary as JSON")
    .option("--concurrency <n>", "episodes in flight", "4")
    .option("--limit <n>", "run at most N tasks")
    .option("--types <list>", "only these task types, e.g. task1,task5")
    .option("--fail-under <pct>", "exit 1 when the overall success rate is below this percentage")
    .option("--no-progress", "no progress bar")
    .action(async (opts: Record<string, unknown>) => {
      const code = await runEval(opts);
      if (code !== 0) process.exitCode = code;
    });
}
