// `npm start`: the whole mission offline on the embedded defaults. Synthetic EHR -> the stand-in
// teacher -> rollout on training tasks (evaluation patients held out) until a target of correct
// traces -> dataset build (JSONL + Arrow + card) -> push --dry-run -> eval of the scripted expert and
// of the stand-in on the evaluation set -> a report comparing them. Every stage is the real `ehrgym`
// command in its own process; whatever this started is shut down on exit, Ctrl-C included. A re-run
// skips each stage whose inputs have not changed since it finished (stages.json records them) and
// resumes the others (rollouts and evals append to their files), so a second run ends at once.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { Command } from "commander";
import { z } from "zod";
import { DEFAULT_PATIENTS, DEFAULT_SEED } from "../env/ehr/index.ts";
import { writeFileAtomic } from "../env/util/index.ts";
import { parseOptions } from "./commands/common.ts";
import { cachedPopulation, populationDir } from "./commands/population.ts";
import { stopWithParent } from "./commands/under-npm.ts";

/** The package root, from scripts/ or from its compiled copy in dist/scripts/ (what `npm start` runs). */
const here = fileURLToPath(new URL(".", import.meta.url));
const ROOT = existsSync(join(here, "..", "package.json")) ? join(here, "..") : join(here, "..", "..");

const Options = z
  .object({
    out: z.string().min(1).default("runs/pipeline"),
    quick: z.boolean().default(false),
    targetCorrect: z.coerce.number().int().min(1).optional(),
    patients: z.coerce.number().int().min(4).max(100_000).optional(),
  })
  .strict();

const children = new Set<ChildProcess>();
function shutdown(code: number): never {
  for (const c of children) c.kill("SIGTERM");
  process.exit(code);
}
process.on("SIGINT", () => {
  process.stderr.write("\ninterrupted: stopping what the pipeline started (re-run `npm start` to resume: rollouts and evals continue where they stopped)\n");
  shutdown(130);
});
process.on("SIGTERM", () => shutdown(143));
stopWithParent();

/** The compiled `ehrgym` command (dist/, built by `npm ci`), as a user runs it. */
const cliArgs = (args: string[]) => [join(ROOT, "bin", "ehrgym.js"), ...args];

/** Runs one `ehrgym` command to completion, its output into the stage's log file. */
function stage(logDir: string, name: string, args: string[]): Promise<void> {
  const log = join(logDir, `${name}.log`);
  const child = spawn(process.execPath, cliArgs(args), { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  const file = createWriteStream(log);
  file.write(`$ ehrgym ${args.join(" ")}\n`);
  child.stdout!.pipe(file, { end: false });
  child.stderr!.pipe(file, { end: false });
  return new Promise((resolve, reject) => {
    child.on("close", (code) => {
      children.delete(child);
      file.end();
      if (code === 0) resolve();
      else reject(new Error(`stage ${name} failed (exit ${code}); see ${relative(ROOT, log)}:\n${readFileSync(log, "utf8").split("\n").slice(-8).join("\n")}`));
    });
  });
}

/** Starts the stand-in teacher and resolves with its URL (it prints it on stdout). */
function startTeacher(logDir: string, tasksFiles: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, cliArgs(["teacher", "serve", "--port", "0", "--seed", "1", ...tasksFiles.flatMap((f) => ["--tasks", f])]), {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  const log = createWriteStream(join(logDir, "teacher.log"));
  child.stderr!.pipe(log);
  return new Promise((resolve, reject) => {
    let text = "";
    child.stdout!.on("data", (d) => {
      text += String(d);
      log.write(d);
      const m = /(http:\/\/[^\s]+\/v1)\b/.exec(text);
      if (m) resolve({ url: m[1]!, child });
    });
    child.on("exit", (code) => reject(new Error(`teacher serve exited (${code}) before printing its URL; see ${relative(ROOT, join(logDir, "teacher.log"))}`)));
  });
}

function rows(path: string): { reward: number; status: string }[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { reward: number; status: string }];
      } catch {
        return [];
      }
    });
}

const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)}%` : "-");

/** Stands for the teacher's URL in a stage's arguments (its port changes from run to run). */
const TEACHER_URL = "<teacher-url>";

interface Stage {
  /** The name printed (several stages may share one) and the unique key of its log and record. */
  name: string;
  key: string;
  args: string[];
  /** Files and folders it reads: it re-runs when one of them changed since it last finished. */
  inputs: string[];
  /** What it writes: it re-runs when one of them is missing. */
  outputs: string[];
  summary: () => string;
}

/** What a finished stage ran on: its arguments and the size and time of each input file. */
const StageRecord = z.object({ args: z.array(z.string()), inputs: z.record(z.string(), z.string()) });
const StageRecords = z.record(z.string(), StageRecord);
type StageRecord = z.infer<typeof StageRecord>;

function signature(path: string): string {
  if (!existsSync(path)) return "missing";
  const st = statSync(path);
  return st.isDirectory() ? "folder" : `${st.size}:${st.mtimeMs}`;
}

function readRecords(path: string): Record<string, StageRecord> {
  if (!existsSync(path)) return {};
  try {
    return StageRecords.parse(JSON.parse(readFileSync(path, "utf8")));
  } catch {
    return {}; // unreadable: every stage runs again (each one resumes or rewrites its own output)
  }
}

async function main(raw: unknown): Promise<void> {
  const o = parseOptions(Options, raw);
  const dir = resolve(ROOT, o.out);
  const logs = join(dir, "logs");
  mkdirSync(logs, { recursive: true });
  const rel = (p: string) => relative(process.cwd(), p) || ".";
  const t0 = performance.now();
  /** A stage's line: how long it took, or `note` when it had nothing to do. */
  const done = (name: string, line: string, started: number | string) =>
    process.stdout.write(
      `[${((performance.now() - t0) / 1000).toFixed(0).padStart(3)} s] ${name.padEnd(9)} ${line} (${typeof started === "string" ? started : `${((performance.now() - started) / 1000).toFixed(1)} s`})\n`,
    );
  const UNCHANGED = "done before, inputs unchanged";
  const MAB_SUITES = "mab-v1,mab-v2";

  const patients = o.patients ?? (o.quick ? 20 : DEFAULT_PATIENTS);
  const perType = o.quick ? "3" : "10";
  const target = String(o.targetCorrect ?? (o.quick ? 40 : 284));
  const trainTasks = join(dir, "train-tasks.jsonl");
  const evalTasks = join(dir, "eval-tasks.jsonl");
  const teacherRows = join(dir, "teacher.jsonl");
  const ds = join(dir, "dataset");
  const expertRows = join(dir, "eval-expert.jsonl");
  const standinRows = join(dir, "eval-stand-in.jsonl");
  const report = join(dir, "report");

  process.stdout.write(`ehrgym pipeline, offline: outputs in ${rel(dir)}/, stage logs in ${rel(logs)}/\n`);
  process.stdout.write("The teacher is ehrgym's stand-in (the scripted expert with seeded mistakes), not a model.\n\n");

  // The synthetic population every command uses by default, generated once into the cache folder.
  const ehrStarted = performance.now();
  const fresh = !existsSync(populationDir(DEFAULT_SEED, patients));
  const data = await cachedPopulation(DEFAULT_SEED, patients);
  done("ehr", `synthetic EHR of ${patients} patients, cached in ${data}/`, fresh ? ehrStarted : "generated before");

  const model = ["--base-url", TEACHER_URL, "--model", "ehrgym-stand-in", "--data", data, "--no-progress"];
  const stages: Stage[] = [
    {
      name: "tasks",
      key: "tasks-train",
      // The two MedAgentBench suites (tasks generate's default, all, adds workflows' long reviews).
      args: ["tasks", "generate", "--suite", MAB_SUITES, "--data", data, "--split", "train", "--per-type", perType, "--out", trainTasks],
      inputs: [data],
      outputs: [trainTasks],
      summary: () => `${rows(trainTasks).length} training tasks (train-split patients) -> ${rel(trainTasks)}`,
    },
    {
      name: "tasks",
      key: "tasks-eval",
      args: ["tasks", "generate", "--suite", MAB_SUITES, "--data", data, "--split", "test", "--per-type", o.quick ? "2" : "5", "--seed", "2", "--out", evalTasks],
      inputs: [data],
      outputs: [evalTasks],
      summary: () => `${rows(evalTasks).length} evaluation tasks (test-split patients) -> ${rel(evalTasks)}`,
    },
    {
      name: "rollout",
      key: "rollout",
      args: ["rollout", ...model, "--tasks", trainTasks, "--exclude-mrns-from", evalTasks, "--samples", "8", "--target-correct", target, "--concurrency", "32", "--out", teacherRows],
      inputs: [data, trainTasks, evalTasks],
      outputs: [teacherRows],
      summary: () => {
        const r = rows(teacherRows);
        const correct = r.filter((x) => x.reward === 1).length;
        return `${correct} correct traces of ${r.length} episodes (teacher pass rate ${pct(correct, r.length)}) -> ${rel(teacherRows)}`;
      },
    },
    {
      name: "dataset",
      key: "dataset",
      args: ["dataset", "build", "--from", teacherRows, "--out", ds, "--exclude-mrns-from", evalTasks, "--dedupe", "--force"],
      inputs: [teacherRows, evalTasks],
      outputs: [join(ds, "manifest.json")],
      summary: () => {
        const manifest = JSON.parse(readFileSync(join(ds, "manifest.json"), "utf8")) as { counts: Record<string, number> };
        const c = manifest.counts;
        const correct = (c.valid ?? 0) - (c.filtered ?? 0);
        const removed = [
          c.unclean ? `${c.unclean} with an invalid turn (--keep clean)` : "",
          c.excluded ? `${c.excluded} of held-out patients or tasks` : "",
          c.deduped ? `${c.deduped} whose assistant turns repeat another trace of the same task word for word (--dedupe; the stand-in often plays a task the same way twice)` : "",
          c.duplicates ? `${c.duplicates} duplicate ids` : "",
        ].filter(Boolean);
        return `${correct} correct traces became ${c.kept} rows (JSONL + Arrow + openai + card) -> ${rel(ds)}/${removed.length ? `; left out: ${removed.join(", ")}` : ""}`;
      },
    },
    {
      name: "push",
      key: "push",
      args: ["dataset", "push", ds, "--repo", "your-name/ehrgym-sft", "--dry-run"],
      inputs: [join(ds, "manifest.json")],
      outputs: [join(logs, "push.log")],
      summary: () => `dry run: what \`dataset push\` would upload is in ${rel(join(logs, "push.log"))}`,
    },
    {
      name: "eval",
      key: "eval-expert",
      args: ["eval", "--policy", "expert", "--tasks", evalTasks, "--data", data, "--no-progress", "--out", expertRows],
      inputs: [data, evalTasks],
      outputs: [expertRows],
      summary: () => {
        const r = rows(expertRows);
        return `scripted expert: ${pct(r.filter((x) => x.reward === 1).length, r.length)} of ${r.length} evaluation tasks -> ${rel(expertRows)}`;
      },
    },
    {
      name: "eval",
      key: "eval-stand-in",
      args: ["eval", "--policy", "openai", ...model, "--tasks", evalTasks, "--samples", "2", "--concurrency", "32", "--out", standinRows],
      inputs: [data, evalTasks],
      outputs: [standinRows],
      summary: () => {
        const r = rows(standinRows);
        return `stand-in teacher: ${pct(r.filter((x) => x.reward === 1).length, r.length)} of ${r.length} episodes (2 samples per task) -> ${rel(standinRows)}`;
      },
    },
    {
      name: "report",
      key: "report",
      args: ["report", expertRows, standinRows, "--names", "expert,stand-in", "--out", report],
      inputs: [expertRows, standinRows],
      outputs: [join(report, "index.html")],
      summary: () => `comparison -> ${rel(join(report, "index.html"))}`,
    },
  ];

  // A stage whose arguments and inputs are those it last finished with, and whose outputs exist,
  // has nothing left to do: a re-run skips it (so a second `npm start` ends in about a second).
  const recordsFile = join(dir, "stages.json");
  const records = readRecords(recordsFile);
  const inputsNow = (s: Stage) => Object.fromEntries(s.inputs.map((p) => [p, signature(p)]));
  const upToDate = (s: Stage) => {
    const r = records[s.key];
    return r !== undefined && isDeepStrictEqual(r.args, s.args) && isDeepStrictEqual(r.inputs, inputsNow(s)) && s.outputs.every((p) => existsSync(p));
  };

  let teacher: { url: string; child: ChildProcess } | undefined;
  try {
    for (const s of stages) {
      if (upToDate(s)) {
        done(s.name, s.summary(), UNCHANGED);
        continue;
      }
      const inputs = inputsNow(s);
      let args = s.args;
      if (args.includes(TEACHER_URL)) {
        if (!teacher) {
          const started = performance.now();
          teacher = await startTeacher(logs, [trainTasks, evalTasks]);
          done("teacher", `stand-in teacher at ${teacher.url}`, started);
        }
        const url = teacher.url;
        args = args.map((a) => (a === TEACHER_URL ? url : a));
      }
      const started = performance.now();
      await stage(logs, s.key, args);
      records[s.key] = { args: s.args, inputs };
      writeFileAtomic(recordsFile, `${JSON.stringify(records, null, 2)}\n`);
      done(s.name, s.summary(), started);
    }
  } finally {
    if (teacher) {
      teacher.child.kill("SIGTERM");
      children.delete(teacher.child);
    }
  }
  const secs = (performance.now() - t0) / 1000;
  process.stdout.write(`\ndone in ${secs.toFixed(secs < 10 ? 1 : 0)} s. Open ${rel(join(report, "index.html"))}; the dataset card is ${rel(join(ds, "README.md"))}.\n`);
}

const program = new Command()
  .name("ehrgym-pipeline")
  .description("The whole teacher -> dataset -> evaluation pipeline, offline, on the embedded defaults")
  .option("--out <dir>", "where everything goes", "runs/pipeline")
  .option("--quick", "a smaller population and targets (CI)")
  .option("--target-correct <n>", "correct teacher traces to collect (default 284, as in the Sara 1.5 report)")
  .option("--patients <n>", "synthetic population size")
  .action(async (opts: Record<string, unknown>) => {
    try {
      await main(opts);
    } catch (err) {
      process.stderr.write(`ehrgym pipeline: ${err instanceof Error ? err.message : String(err)}\n`);
      shutdown(1);
    }
  });
await program.parseAsync(process.argv);
