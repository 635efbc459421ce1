// `npm start`: the whole mission offline on the embedded defaults. Synthetic EHR -> the stand-in
// teacher -> rollout on training tasks (evaluation patients held out) until a target of correct
// traces -> dataset build (JSONL + Arrow + card) -> push --dry-run -> eval of the scripted expert and
// of the stand-in on the evaluation set -> a report comparing them. Every stage is the real `ehrgym`
// command in its own process; whatever this started is shut down on exit, Ctrl-C included.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { z } from "zod";
import { parseOptions } from "./commands/common.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

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

async function main(raw: unknown): Promise<void> {
  const o = parseOptions(Options, raw);
  const dir = resolve(ROOT, o.out);
  const logs = join(dir, "logs");
  mkdirSync(logs, { recursive: true });
  const rel = (p: string) => relative(process.cwd(), p) || ".";
  const t0 = performance.now();
  const done = (name: string, line: string, started: number) =>
    process.stdout.write(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(3)} s] ${name.padEnd(9)} ${line} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
  const run = async (name: string, args: string[], summary: () => string) => {
    const started = performance.now();
    await stage(logs, name, args);
    done(name, summary(), started);
  };

  const patients = String(o.patients ?? (o.quick ? 20 : 100));
  const perType = o.quick ? "3" : "10";
  const target = String(o.targetCorrect ?? (o.quick ? 40 : 284));
  const data = join(dir, "ehr");
  const trainTasks = join(dir, "train-tasks.jsonl");
  const evalTasks = join(dir, "eval-tasks.jsonl");
  const teacherRows = join(dir, "teacher.jsonl");
  const ds = join(dir, "dataset");
  const expertRows = join(dir, "eval-expert.jsonl");
  const standinRows = join(dir, "eval-stand-in.jsonl");
  const report = join(dir, "report");

  process.stdout.write(`ehrgym pipeline, offline: outputs in ${rel(dir)}/, stage logs in ${rel(logs)}/\n`);
  process.stdout.write("The teacher is ehrgym's stand-in (the scripted expert with seeded mistakes), not a model.\n\n");

  if (!existsSync(join(data, "Patient.ndjson")))
    await run("ehr", ["ehr", "generate", "--out", data, "--patients", patients, "--no-progress"], () => `synthetic EHR of ${patients} patients -> ${rel(data)}/`);
  else done("ehr", `synthetic EHR already in ${rel(data)}/`, performance.now());

  await run("tasks", ["tasks", "generate", "--data", data, "--split", "train", "--per-type", perType, "--out", trainTasks], () => `${rows(trainTasks).length} training tasks (train-split patients) -> ${rel(trainTasks)}`);
  await run("tasks", ["tasks", "generate", "--data", data, "--split", "test", "--per-type", o.quick ? "2" : "5", "--seed", "2", "--out", evalTasks], () => `${rows(evalTasks).length} evaluation tasks (test-split patients) -> ${rel(evalTasks)}`);

  const started = performance.now();
  const { url, child: teacher } = await startTeacher(logs, [trainTasks, evalTasks]);
  done("teacher", `stand-in teacher at ${url}`, started);
  try {
    const model = ["--base-url", url, "--model", "ehrgym-stand-in", "--data", data, "--no-progress"];
    await run(
      "rollout",
      ["rollout", ...model, "--tasks", trainTasks, "--exclude-mrns-from", evalTasks, "--samples", "8", "--target-correct", target, "--concurrency", "32", "--out", teacherRows],
      () => {
        const r = rows(teacherRows);
        const correct = r.filter((x) => x.reward === 1).length;
        return `${correct} correct traces of ${r.length} episodes (teacher pass rate ${pct(correct, r.length)}) -> ${rel(teacherRows)}`;
      },
    );
    await run("dataset", ["dataset", "build", "--from", teacherRows, "--out", ds, "--exclude-mrns-from", evalTasks, "--dedupe", "--force"], () => {
      const manifest = JSON.parse(readFileSync(join(ds, "manifest.json"), "utf8")) as { counts: Record<string, number> };
      const c = manifest.counts;
      const removed = [
        c.unclean ? `${c.unclean} with an invalid turn (--keep clean)` : "",
        c.excluded ? `${c.excluded} of held-out patients or tasks` : "",
        c.deduped ? `${c.deduped} repeating another's turns (--dedupe)` : "",
        c.duplicates ? `${c.duplicates} duplicate ids` : "",
      ].filter(Boolean);
      return `${c.kept} rows (JSONL + Arrow + openai + card) -> ${rel(ds)}/${removed.length ? `; of the correct traces, left out: ${removed.join(", ")}` : ""}`;
    });
    await run("push", ["dataset", "push", ds, "--repo", "your-name/ehrgym-sft", "--dry-run"], () => `dry run: what \`dataset push\` would upload is in ${rel(join(logs, "push.log"))}`);
    await run("eval", ["eval", "--policy", "expert", "--tasks", evalTasks, "--data", data, "--no-progress", "--out", expertRows], () => {
      const r = rows(expertRows);
      return `scripted expert: ${pct(r.filter((x) => x.reward === 1).length, r.length)} of ${r.length} evaluation tasks -> ${rel(expertRows)}`;
    });
    await run("eval", ["eval", "--policy", "openai", ...model, "--tasks", evalTasks, "--samples", "2", "--concurrency", "32", "--out", standinRows], () => {
      const r = rows(standinRows);
      return `stand-in teacher: ${pct(r.filter((x) => x.reward === 1).length, r.length)} of ${r.length} episodes (2 samples per task) -> ${rel(standinRows)}`;
    });
  } finally {
    teacher.kill("SIGTERM");
    children.delete(teacher);
  }
  await run("report", ["report", expertRows, standinRows, "--names", "expert,stand-in", "--out", report], () => `comparison -> ${rel(join(report, "index.html"))}`);
  process.stdout.write(`\ndone in ${((performance.now() - t0) / 1000).toFixed(0)} s. Open ${rel(join(report, "index.html"))}; the dataset card is ${rel(join(ds, "README.md"))}.\n`);
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
