// `ehrgym rollout`: drive a teacher model through many episodes of generated (or given) training
// tasks, keep every trajectory with its reward; resumable, shardable, stops at a target of correct ones.
import type { Command } from "commander";
import { z } from "zod";
import { StorageError, UserError } from "../../env/util/index.ts";
import { parseOptions } from "./common.ts";
import { addModelOptions, addSetupOptions, buildStore, makeEnvFactory, makeModelPolicy, ModelFlags, patientSource, SetupFlags, selectTasks } from "./episode-setup.ts";
import { checkOut, executeRun, inputsOf, runFlags, runItems, type Shard } from "./run-episodes.ts";

const ShardFlag = z
  .string()
  .regex(/^\d+\/\d+$/, "expected K/N like 0/4")
  .transform((s) => {
    const [index, count] = s.split("/").map(Number) as [number, number];
    return { index, count };
  })
  .refine((s) => s.count >= 1 && s.index < s.count, { message: "K must be below N (shards are numbered from 0)" });

export const RolloutOptions = SetupFlags.extend(ModelFlags.shape)
  .extend({
    out: z.string().min(1).default("runs/rollout.jsonl"),
    targetCorrect: z.coerce.number().int().min(1).optional(),
    maxEpisodes: z.coerce.number().int().min(1).optional(),
    shard: ShardFlag.optional(),
    shards: z.coerce.number().int().min(1).max(100_000).optional(),
    orderSeed: z.coerce.number().int().min(0).optional(),
    priceIn: z.coerce.number().min(0).optional(),
    priceOut: z.coerce.number().min(0).optional(),
    retryErrors: z.boolean().default(false),
    appendDifferent: z.boolean().default(false),
    progress: z.boolean().default(true),
  })
  .strict();
export type RolloutOptions = z.infer<typeof RolloutOptions>;

function shardOf(o: RolloutOptions): Shard | undefined {
  if (o.shard && o.shards) throw new UserError("--shard K/N and --shards N cannot be combined");
  if (o.shard) return o.shard;
  if (!o.shards) return undefined;
  const raw = process.env.JOB_COMPLETION_INDEX;
  const index = Number(raw);
  if (raw === undefined || !Number.isInteger(index) || index < 0 || index >= o.shards)
    throw new UserError(`--shards ${o.shards}: JOB_COMPLETION_INDEX must be set to a shard index 0..${o.shards - 1} (got ${JSON.stringify(raw ?? null)})`);
  return { index, count: o.shards };
}

export async function runRollout(raw: unknown): Promise<number> {
  const o = parseOptions(RolloutOptions, raw);
  const shard = shardOf(o);
  const out = await checkOut(o.out, "rollout", inputsOf(o));
  try {
    const policy = makeModelPolicy(o, 0.7);
    const store = await buildStore(o);
    // Training data: generated tasks come from the train split of patients unless told otherwise.
    const setup = o.tasks || o.split ? o : { ...o, split: "train" as const };
    const { tasks, heldOut, source } = selectTasks(setup, store);
    if (heldOut)
      process.stderr.write(`refused ${heldOut} task(s) whose patient is in --exclude-mrns-from: evaluation patients must never become training data\n`);
    const items = runItems(tasks, o.samples, { shuffleSeed: o.orderSeed ?? o.seed ?? 1, ...(shard ? { shard } : {}) });
    if (items.length === 0) throw new UserError(`shard ${shard?.index}/${shard?.count} holds no keys of the ${tasks.length} tasks`);
    process.stderr.write(
      `rollout: ${tasks.length} tasks x ${o.samples} sample(s)${shard ? `, shard ${shard.index}/${shard.count}: ${items.length} keys` : ""} -> ${o.out}\n`,
    );
    const patients = patientSource(o);
    const { code } = await executeRun({
      command: "rollout",
      existingHeads: out.heads,
      policy,
      items,
      makeEnv: makeEnvFactory(store, o),
      ...runFlags(o),
      ...(o.targetCorrect !== undefined ? { targetCorrect: o.targetCorrect } : {}),
      ...(o.maxEpisodes !== undefined ? { maxEpisodes: o.maxEpisodes } : {}),
      ...(o.priceIn !== undefined ? { priceIn: o.priceIn } : {}),
      ...(o.priceOut !== undefined ? { priceOut: o.priceOut } : {}),
      patients,
      meta: {
        tasks: source,
        samples: o.samples,
        seed: o.seed ?? null,
        ...(shard ? { shard } : {}),
        ...(o.targetCorrect !== undefined ? { target_correct: o.targetCorrect } : {}),
        ...(o.maxEpisodes !== undefined ? { max_episodes: o.maxEpisodes } : {}),
      },
    });
    return code;
  } catch (err) {
    // A full disk leaves at most a torn last line, which the next run cuts off before it resumes.
    if (err instanceof StorageError && err.path === o.out) throw err.withHint("the rows before it are kept: free space and re-run the same command to resume");
    throw err;
  } finally {
    out.release();
  }
}

export function registerRollout(program: Command): void {
  const cmd = program
    .command("rollout")
    .description("Drive an OpenAI-compatible teacher model through training episodes; JSONL per episode (resumable, shardable)");
  addSetupOptions(cmd, { perType: "10" });
  addModelOptions(cmd, { concurrency: "16" });
  cmd
    .option("--out <file>", "JSONL output (appended; keys already in it are skipped)", "runs/rollout.jsonl")
    .option("--target-correct <n>", "stop once the file holds N episodes with reward 1")
    .option("--max-episodes <n>", "stop once the file holds N episodes")
    .option("--shard <K/N>", "run shard K of N (a deterministic share of the task/sample keys)")
    .option("--shards <n>", "N shards, K from $JOB_COMPLETION_INDEX (Kubernetes Indexed Job)")
    .option("--order-seed <n>", "seed of the task order (default --seed)")
    .option("--price-in <usd>", "price per million prompt tokens, for the cost line")
    .option("--price-out <usd>", "price per million completion tokens")
    .option("--retry-errors", "re-run episodes whose row is a model_error")
    .option("--append-different", "allow rows of another model or protocol in --out")
    .option("--no-progress", "no progress bar")
    .action(async (opts: Record<string, unknown>) => {
      const code = await runRollout(opts);
      if (code !== 0) process.exitCode = code;
    });
}
