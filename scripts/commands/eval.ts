// `ehrgym eval`: run a policy (the scripted expert or an OpenAI-compatible model) over a task set on
// the embedded EHR, one JSONL row per episode (resumable), success rates overall / per type / query
// vs action with Wilson intervals and pass@k.
import type { Command } from "commander";
import { z } from "zod";
import { loadReference, ReportInputError, writeReport, type ReferenceFile } from "../../rollout/index.ts";
import { checkOutputFile, parseOptions } from "./common.ts";
import { UserError, writeFileAtomic } from "../../env/util/index.ts";
import { addModelOptions, addSetupOptions, buildStore, makeEnvFactory, makeExpertPolicy, makeModelPolicy, ModelFlags, patientSource, SetupFlags, selectTasks } from "./episode-setup.ts";
import { checkOut, executeRun, inputsOf, runFlags, runItems } from "./run-episodes.ts";

export const EvalOptions = SetupFlags.extend(ModelFlags.shape)
  .extend({
    policy: z.enum(["expert", "openai"]).default("expert"),
    out: z.string().min(1).default("runs/eval.jsonl"),
    report: z.string().min(1).optional(),
    html: z.string().min(1).optional(),
    reference: z.string().min(1).optional(),
    failUnder: z.coerce.number().min(0).max(100).optional(),
    retryErrors: z.boolean().default(false),
    appendDifferent: z.boolean().default(false),
    progress: z.boolean().default(true),
  })
  .strict();
export type EvalOptions = z.infer<typeof EvalOptions>;

export async function runEval(raw: unknown): Promise<number> {
  const o = parseOptions(EvalOptions, raw);
  const inputs = [...inputsOf(o), ...(o.reference ? [o.reference] : [])];
  if (o.report) checkOutputFile("--report", o.report, [...inputs, o.out]);
  const out = await checkOut(o.out, "eval", inputs); // locked, and a corrupt --out is a usage error, before any work
  try {
    // Read before the run, which may take hours of a paid API: a bad --reference fails now, not after it.
    const reference = o.reference === undefined ? undefined : readReference(o.reference, o.html);
    if (o.capture && o.policy !== "openai") throw new UserError(`--capture ${o.capture}: needs --policy openai (the expert samples no tokens)`);
    const policy = o.policy === "openai" ? makeModelPolicy(o, 0) : makeExpertPolicy(o);
    const store = await buildStore(o);
    const { tasks, heldOut, source } = selectTasks(o, store);
    if (heldOut) process.stderr.write(`${heldOut} tasks left out: their patients are in --exclude-mrns-from\n`);
    const patients = patientSource(o);
    const { code, summary } = await executeRun({
      command: "eval",
      existingHeads: out.heads,
      policy,
      items: runItems(tasks, o.samples),
      makeEnv: makeEnvFactory(store, o),
      ...runFlags(o),
      patients,
      meta: { tasks: source, samples: o.samples },
    });
    if (o.report) writeFileAtomic(o.report, `${JSON.stringify(summary, null, 2)}\n`);
    if (o.html) {
      try {
        const written = await writeReport({ runs: [{ name: policy.name, path: o.out }], out: o.html, protocol: o.protocol, ...(reference ? { reference } : {}) });
        process.stdout.write(`report: ${written.index}\n`);
      } catch (err) {
        if (err instanceof ReportInputError) throw new UserError(`--html: ${err.message}`);
        throw err;
      }
    }
    if (code !== 0) return code;
    if (o.failUnder !== undefined && summary.overall.rate * 100 < o.failUnder) return 1;
    return 0;
  } finally {
    out.release();
  }
}

function readReference(nameOrPath: string, html: string | undefined): ReferenceFile {
  if (html === undefined) throw new UserError("--reference: it draws published figures on the --html report; give --html DIR too");
  return loadReference(nameOrPath);
}

export function registerEval(program: Command): void {
  const cmd = program
    .command("eval")
    .description("Run a policy over tasks on the embedded EHR; JSONL per episode + success rates (resumable)")
    .option("--policy <name>", "expert (the scripted expert) | openai (an OpenAI-compatible model: --model, --base-url)", "expert");
  addSetupOptions(cmd, { perType: "10" });
  addModelOptions(cmd, { concurrency: "16" });
  cmd
    .option("--out <file>", "JSONL output (appended; keys already in it are skipped)", "runs/eval.jsonl")
    .option("--report <file>", "also write the summary as JSON")
    .option("--html <dir>", "also write the HTML report of the run (as `ehrgym report`)")
    .option("--reference <file|name>", "published figures on the --html report (as `ehrgym report --reference`; medagentbench-v1 ships)")
    .option("--retry-errors", "re-run episodes whose row is a model_error")
    .option("--append-different", "allow rows of another model or protocol in --out")
    .option("--fail-under <pct>", "exit 1 when the overall success rate is below this percentage")
    .option("--no-progress", "no progress bar")
    .action(async (opts: Record<string, unknown>) => {
      const code = await runEval(opts);
      if (code !== 0) process.exitCode = code;
    });
}
