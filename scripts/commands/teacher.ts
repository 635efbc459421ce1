// `ehrgym teacher serve`: the OpenAI-compatible stand-in model server (ROLLOUT.md). Not a model: the
// scripted expert with seeded mistakes, for tests, benchmarks and offline demos.
import type { Command } from "commander";
import { z } from "zod";
import { loadTaskFile, Suite, TaskFileError, type Task } from "../../env/tasks/index.ts";
import { DEFAULT_MODEL, FaultSpecError, parseFaults, standInTokenizerJson, startTeacherServer, TeacherReasoning, type FaultRates, type TeacherServer } from "../../rollout/teacher/index.ts";
import { checkOutputFile, closeOnSignal, collect, existingFile, parseOptions } from "./common.ts";
import { UserError, writeFileAtomic } from "../../env/util/index.ts";


export const TeacherServeOptions = z
  .object({
    port: z.coerce.number().int().min(0).max(65_535).default(8001),
    host: z.string().min(1).default("127.0.0.1"),
    tasks: z.array(existingFile).min(1, "give at least one task file"),
    suite: Suite.optional(),
    model: z.array(z.string().min(1)).min(1).default([DEFAULT_MODEL]),
    errorRate: z.coerce.number().min(0).max(1).default(0.35),
    seed: z.coerce.number().int().min(0).max(2 ** 32 - 1).default(0),
    latencyMs: z.coerce.number().min(0).max(600_000).default(0),
    latencyJitterMs: z.coerce.number().min(0).max(600_000).default(0),
    faults: z.string().default(""),
    slowMs: z.coerce.number().min(0).max(3_600_000).default(30_000),
    apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name").optional(),
    maxRounds: z.coerce.number().int().min(1).max(1000).default(8),
    reasoning: TeacherReasoning.optional(),
  })
  .strict();
export type TeacherServeOptions = z.infer<typeof TeacherServeOptions>;

function loadTasks(o: TeacherServeOptions): Task[] {
  const tasks: Task[] = [];
  for (const file of o.tasks) {
    try {
      tasks.push(...loadTaskFile(file, o.suite ? { suite: o.suite } : {}));
    } catch (e) {
      if (e instanceof TaskFileError) throw new UserError(`--tasks: ${e.message}`);
      throw e;
    }
  }
  if (tasks.length === 0) throw new UserError(`--tasks: no tasks in ${o.tasks.join(", ")}`);
  return tasks;
}

export async function runTeacherServe(raw: unknown): Promise<void> {
  const o = parseOptions(TeacherServeOptions, raw);
  let faults: FaultRates;
  try {
    faults = parseFaults(o.faults);
  } catch (e) {
    if (e instanceof FaultSpecError) throw new UserError(`--faults: ${e.message} (got ${JSON.stringify(o.faults)})`);
    throw e;
  }
  let apiKey: string | undefined;
  if (o.apiKeyEnv !== undefined) {
    apiKey = process.env[o.apiKeyEnv];
    if (!apiKey) throw new UserError(`--api-key-env: the environment variable ${o.apiKeyEnv} is not set (or empty)`);
  }
  const tasks = loadTasks(o);
  let server: TeacherServer;
  try {
    server = await startTeacherServer({
      tasks,
      port: o.port,
      host: o.host,
      models: o.model,
      errorRate: o.errorRate,
      seed: o.seed,
      latencyMs: o.latencyMs,
      latencyJitterMs: o.latencyJitterMs,
      faults,
      slowMs: o.slowMs,
      maxRounds: o.maxRounds,
      ...(o.reasoning ? { reasoning: o.reasoning } : {}),
      ...(apiKey ? { apiKey } : {}),
    });
  } catch (err) {
    throw new UserError(`--port: cannot listen on ${o.host}:${o.port} (${(err as Error).message})`);
  }
  const faultText = Object.entries(faults).map(([k, p]) => `${k}:${p}`).join(",") || "none";
  process.stderr.write(
    `ehrgym teacher serve: a STAND-IN model server (the scripted expert with seeded mistakes; NOT a model) on ${server.url}\n` +
      `  models ${o.model.join(", ")}; ${tasks.length} tasks; error rate ${o.errorRate}; seed ${o.seed}; latency ${o.latencyMs}${o.latencyJitterMs ? ` +- ${o.latencyJitterMs}` : ""} ms; faults ${faultText}; ${o.reasoning ? `reasoning ${o.reasoning}; ` : ""}${apiKey ? `key from $${o.apiKeyEnv}` : "no key"}. Ctrl-C stops.\n`,
  );
  // Machine-readable line for wrappers that start it on port 0.
  process.stdout.write(`${JSON.stringify({ url: server.url, models: o.model, tasks: tasks.length, stand_in: true })}\n`);
  await closeOnSignal(server);
}

export function registerTeacher(program: Command): void {
  const teacher = program.command("teacher").description("the stand-in teacher: an OpenAI-compatible server that plays the scripted expert (not a model)");
  teacher
    .command("serve")
    .description("serve /v1/chat/completions and /v1/models as a stand-in model for tests and offline demos")
    .requiredOption("--tasks <file>", "task file (official JSON or ehrgym JSONL; repeatable): the tasks it can recognise", collect)
    .option("--port <n>", "port (0 picks a free one)", "8001")
    .option("--host <addr>", "address to bind", "127.0.0.1")
    .option("--suite <suite>", "suite of --tasks when it cannot be detected")
    .option("--model <name>", `model name it answers to (repeatable; default ${DEFAULT_MODEL})`, collect)
    .option("--error-rate <p>", "fraction of episodes that go wrong", "0.35")
    .option("--seed <n>", "seed of the mistakes and faults", "0")
    .option("--latency-ms <ms>", "time from each request's arrival to its reply (the stand-in's own work included)", "0")
    .option("--latency-jitter-ms <ms>", "vary each reply's delay by up to this much either way (seeded, uniform)", "0")
    .option("--faults <spec>", "injected faults, kind:probability,... (429, 500, reset, slow, empty, nochoices, badargs, context)", "")
    .option("--slow-ms <ms>", "how long a `slow` fault holds its reply", "30000")
    .option("--api-key-env <name>", "require Authorization: Bearer $NAME")
    .option("--max-rounds <n>", "the round limit the episodes run with", "8")
    .option("--reasoning <form>", "think before each turn, as vLLM returns a reasoning model's thought: think (inline <think>...</think> in content) | field (the message's `reasoning` field)")
    .action(async (opts: Record<string, unknown>) => {
      await runTeacherServe(opts);
    });
  teacher
    .command("tokenizer")
    .description("write the stand-in's tokenizer (o200k_base with ChatML markers) as a Hugging Face tokenizer.json")
    .requiredOption("--out <file>", "tokenizer.json to write")
    .action(async (opts: Record<string, unknown>) => {
      const o = parseOptions(z.object({ out: z.string().min(1) }).strict(), opts);
      checkOutputFile("--out", o.out);
      writeFileAtomic(o.out, JSON.stringify(await standInTokenizerJson()));
      process.stdout.write(`${o.out}: the stand-in's tokenizer (prompt ids: the chat rendered as ChatML; completion ids: the reply's tokens then <|im_end|>)\n`);
    });
}
