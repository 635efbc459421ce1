// `ehrgym dataset build | inspect | validate | push` (DATASETS.md).
import { existsSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import type { BuildStage, Format } from "../../datasets/index.ts";

// datasets pulls in apache-arrow, @huggingface/hub and yaml: loaded when a dataset command runs,
// so every other ehrgym command starts as fast as before.
const lib = () => import("../../datasets/index.ts");
import { parseOptions, stoppable } from "./common.ts";
import { createMeter, type Meter } from "./progress.ts";
import { UserError } from "../../env/util/index.ts";

const existingFile = z.string().superRefine((p, ctx) => {
  if (!existsSync(p)) ctx.addIssue({ code: "custom", message: "no such file" });
  else if (statSync(p).isDirectory()) ctx.addIssue({ code: "custom", message: "a directory, not a file (give the JSONL files in it, e.g. dir/*.jsonl)" });
});
const existingDir = z.string().refine((p) => existsSync(p) && statSync(p).isDirectory(), { message: "no such directory" });
const list = z.string().transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean));
const SPLIT_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export const BuildFlags = z
  .object({
    from: z.array(existingFile).min(1, "give at least one rollout JSONL"),
    out: z.string().min(1),
    keep: z.enum(["clean", "correct", "all"]).default("clean"),
    maxPerTask: z.coerce.number().int().min(1).optional(),
    pairsPerTask: z.coerce.number().int().min(1).default(4),
    dedupe: z.boolean().default(false),
    minReward: z.coerce.number().min(0).max(1).optional(),
    splitFractions: list
      .pipe(z.array(z.string().regex(/^-?\d*\.?\d+$/, "a number").transform(Number).pipe(z.number().min(0, "a fraction from 0 to 1").max(1, "a fraction from 0 to 1"))).min(1))
      .optional(),
    splits: list.pipe(z.array(z.string().regex(SPLIT_NAME, "split names are letters, digits and _")).min(1)).optional(),
    seed: z.coerce.number().int().min(0).max(2 ** 31 - 1).default(0),
    excludeMrnsFrom: z.array(existingFile).default([]),
    format: list.pipe(z.array(z.enum(["trl", "openai", "arrow", "tokens", "dpo", "kto"])).min(1)).default(["trl", "openai", "arrow"]),
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "letters, digits, . _ -").optional(),
    license: z.string().min(1).default("mit"),
    shardRows: z.coerce.number().int().min(1).default(50_000),
    force: z.boolean().default(false),
    showEndpoint: z.boolean().default(false),
    reasoning: z.enum(["keep", "drop"]).default("drop"),
    maxTokens: z.coerce.number().int().min(1).optional(),
    tokenizer: existingFile.optional(),
    chatTemplate: existingFile.optional(),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.maxTokens !== undefined && !o.tokenizer) ctx.addIssue({ code: "custom", path: ["maxTokens"], message: "give --tokenizer tokenizer.json (the model's tokenizer) to count tokens with" });
  });

const DEFAULT_NAMES: Record<number, string[]> = { 1: ["train"], 2: ["train", "test"], 3: ["train", "validation", "test"] };

function splitSpecs(o: z.infer<typeof BuildFlags>): { name: string; fraction: number }[] {
  const names = o.splits ?? (o.splitFractions ? DEFAULT_NAMES[o.splitFractions.length] : DEFAULT_NAMES[3]);
  if (!names) throw new UserError(`--split-fractions: give --splits with ${o.splitFractions!.length} names`);
  if (new Set(names).size !== names.length) throw new UserError(`--splits: a split name appears twice (got ${names.join(",")})`);
  const fractions = o.splitFractions ?? (names.length === 1 ? [1] : names.length === 3 && !o.splits ? [0.9, 0.05, 0.05] : undefined);
  if (!fractions) throw new UserError(`--splits: give --split-fractions for the ${names.length} splits ${names.join(",")}`);
  if (fractions.length !== names.length) throw new UserError(`--split-fractions: ${fractions.length} fractions for ${names.length} splits (${names.join(",")})`);
  const sum = fractions.reduce((a: number, b: number) => a + b, 0);
  if (Math.abs(sum - 1) > 1e-6) throw new UserError(`--split-fractions: the fractions add up to ${sum}, not 1`);
  return names.map((name, i) => ({ name, fraction: fractions[i]! }));
}

async function runBuild(raw: unknown): Promise<number> {
  const o = parseOptions(BuildFlags, raw);
  const { buildDataset, loadChatTemplate, loadTokenizerFile } = await lib();
  const splits = splitSpecs(o);
  const tokenizer = await flagFile(o.tokenizer, loadTokenizerFile);
  const chatTemplate = await flagFile(o.chatTemplate, loadChatTemplate);
  if (!o.format.includes("trl")) throw new UserError("--format: trl is always written (the card's default config); add openai, arrow, tokens, dpo and/or kto to it (e.g. --format trl,arrow,dpo,kto)");
  // One line per pass: the input's MB read (pass 1), then the rows written (pass 2).
  const meters = new Map<BuildStage, Meter>();
  const progress = (stage: BuildStage, done: number, total: number) => {
    let meter = meters.get(stage);
    if (!meter) {
      if (stage === "write") meters.get("read")?.stop();
      meter =
        stage === "read"
          ? createMeter({ label: "dataset: reading", unit: "MB", total, format: (bytes) => Math.round(bytes / 1e6).toLocaleString("en-US") })
          : createMeter({ label: "dataset: writing", unit: "rows", total });
      meters.set(stage, meter);
    }
    meter.update(done);
  };
  const stopMeters = () => {
    for (const meter of meters.values()) meter.stop();
  };
  return await stoppable(async (signal) => {
    try {
      const r = await buildDataset({
        inputs: o.from,
        out: o.out,
        keep: o.keep,
        ...(o.minReward !== undefined ? { minReward: o.minReward } : {}),
        ...(o.maxPerTask !== undefined ? { maxPerTask: o.maxPerTask } : {}),
        pairsPerTask: o.pairsPerTask,
        dedupe: o.dedupe,
        splits,
        seed: o.seed,
        excludeMrnsFrom: o.excludeMrnsFrom,
        formats: o.format as Format[],
        name: o.name ?? basename(resolve(o.out)),
        license: o.license,
        shardRows: o.shardRows,
        force: o.force,
        showEndpoint: o.showEndpoint,
        reasoning: o.reasoning,
        ...(tokenizer ? { tokenizer } : {}),
        ...(chatTemplate ? { chatTemplate } : {}),
        ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}),
        log: (line) => process.stderr.write(`${line}\n`),
        progress,
        signal,
      });
      stopMeters();
      const c = r.manifest.counts;
      const configs = (r.manifest.configs ?? []).map((x) => `; ${x.name} ${x.splits.reduce((n, s) => n + s.rows, 0)} rows (${x.splits.map((s) => `${s.name} ${s.rows}`).join(", ")})`).join("");
      process.stdout.write(
        `${r.rows} rows in ${r.out} (${r.splits.map((s) => `${s.name} ${s.rows}`).join(", ")})${configs}; read ${c.rows_read}, invalid ${c.invalid}, filtered ${c.filtered}, unclean ${c.unclean}, excluded ${c.excluded}, duplicates ${c.duplicates}, exact duplicates ${c.exact_duplicates}, deduped ${c.deduped}, capped ${c.capped}${c.too_long !== undefined ? `, too long ${c.too_long}` : ""}\n`,
      );
      return 0;
    } catch (err) {
      stopMeters();
      if (signal.aborted) {
        process.stderr.write(`dataset build stopped: nothing written (${o.out} is as it was)\n`);
        return 130;
      }
      return await buildOrValidateFailed(err);
    }
  });
}

/** A dataset that cannot be built or read: one line, exit 1; a bad --exclude-mrns-from file is a usage error (exit 2). */
/** A file a flag names, read: one ehrgym cannot read is the user's flag at fault (exit 2, like any bad flag). */
async function flagFile<T>(path: string | undefined, load: (path: string) => T): Promise<T | undefined> {
  const { DatasetError } = await lib();
  try {
    return path === undefined ? undefined : load(path);
  } catch (err) {
    throw err instanceof DatasetError ? new UserError(err.message) : err;
  }
}

async function buildOrValidateFailed(err: unknown): Promise<number> {
  const { DatasetError, ExcludeFileError } = await lib();
  if (err instanceof DatasetError) {
    process.stderr.write(`ehrgym: ${err.message}\n`);
    return 1;
  }
  if (err instanceof ExcludeFileError) throw new UserError(`--exclude-mrns-from: ${err.message}`);
  throw err;
}

const InspectFlags = z.object({ dir: existingDir, row: z.coerce.number().int().min(0).optional() }).strict();
const ValidateFlags = z
  .object({ dir: existingDir, excludeMrnsFrom: z.array(existingFile).optional(), tokenizer: existingFile.optional(), chatTemplate: existingFile.optional() })
  .strict()
  .superRefine((o, ctx) => {
    if (o.chatTemplate !== undefined && !o.tokenizer) ctx.addIssue({ code: "custom", path: ["chatTemplate"], message: "give --tokenizer tokenizer.json (the model's tokenizer) to tokenise the rendered chat with" });
  });
const CheckFlags = z.object({ files: z.array(existingFile).min(1, "give at least one JSONL file"), keep: z.enum(["clean", "correct", "all"]).default("clean") }).strict();

async function runCheck(raw: unknown): Promise<number> {
  const o = parseOptions(CheckFlags, raw);
  const { checkFiles } = await lib();
  let failed = false;
  for (const r of await checkFiles(o.files, o.keep)) {
    for (const p of r.problems.slice(0, 20)) process.stderr.write(`${p}\n`);
    if (r.problems.length > 20) process.stderr.write(`${r.path}: ${r.problems.length - 20} more problems\n`);
    if (r.problems.length) failed = true;
    else process.stdout.write(`${r.path}: ${r.rows} rows ok\n`);
  }
  return failed ? 1 : 0;
}

async function runInspect(raw: unknown): Promise<number> {
  const o = parseOptions(InspectFlags, raw);
  const { inspectDataset } = await lib();
  process.stdout.write(`${await inspectDataset(o.dir, o.row !== undefined ? { row: o.row } : {})}\n`);
  return 0;
}

async function runValidate(raw: unknown): Promise<number> {
  const o = parseOptions(ValidateFlags, raw);
  const { validateDataset, loadTokenizerFile, loadChatTemplate } = await lib();
  const tokenizer = await flagFile(o.tokenizer, loadTokenizerFile);
  const chatTemplate = await flagFile(o.chatTemplate, loadChatTemplate);
  try {
    const r = await validateDataset(o.dir, { ...(o.excludeMrnsFrom ? { excludeMrnsFrom: o.excludeMrnsFrom } : {}), ...(tokenizer ? { tokenizer } : {}), ...(chatTemplate ? { chatTemplate } : {}) });
    const re = r.tokens?.retokenized;
    if (r.tokens)
      process.stdout.write(
        `tokens: ${r.tokens.rows} rows${re ? `; ${re.differ} of ${r.tokens.rows} re-tokenise to different ids with ${o.tokenizer} when the chat is rendered again (${o.chatTemplate ? `with ${o.chatTemplate}` : "as ChatML"})${re.examples.length ? ` (first: ${re.examples[0]})` : ""}` : ""}\n`,
      );
    for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
    if (r.problems.length) {
      for (const p of r.problems) process.stderr.write(`${p}\n`);
      process.stderr.write(`ehrgym: ${o.dir}: ${r.problems.length}${r.problems.length >= 50 ? "+" : ""} problem(s)\n`);
      return 1;
    }
    process.stdout.write(`${o.dir}: valid (${r.rows} rows, ${r.files} files: schema, hashes, splits, decontamination, card)\n`);
    return 0;
  } catch (err) {
    return await buildOrValidateFailed(err);
  }
}

const PushFlags = z
  .object({
    dir: existingDir,
    repo: z.string().regex(/^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/, "owner/name"),
    private: z.boolean().default(false),
    revision: z.string().min(1).default("main"),
    message: z.string().min(1).optional(),
    hubUrl: z.url({ protocol: /^https?$/ }).optional(),
    dryRun: z.boolean().default(false),
    tokenEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name").default("HF_TOKEN"),
    timeout: z.coerce.number().positive().max(86_400).default(300),
  })
  .strict();

async function runPush(raw: unknown): Promise<number> {
  const o = parseOptions(PushFlags, raw);
  const { DatasetError, dryRun, findToken, pushDataset, PushError } = await lib();
  const hubUrl = (o.hubUrl ?? process.env.HF_ENDPOINT)?.replace(/\/+$/, "");
  let files;
  try {
    files = await dryRun(o.dir);
  } catch (err) {
    if (err instanceof DatasetError) {
      process.stderr.write(`ehrgym: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const target = `${hubUrl ?? "https://huggingface.co"}/datasets/${o.repo} (revision ${o.revision}${o.private ? ", private" : ""})`;
  if (o.dryRun) {
    process.stdout.write(`dry run: would upload ${files.length} files (${files.reduce((n, f) => n + f.bytes, 0)} bytes) to ${target} in one commit\n`);
    for (const f of files) process.stdout.write(`  ${f.path}  ${f.bytes} bytes  sha256 ${f.sha256}\n`);
    return 0;
  }
  const found = findToken(process.env, o.tokenEnv);
  if (!found) throw new UserError(`no Hugging Face token: set ${o.tokenEnv} (or name another variable with --token-env), or run \`huggingface-cli login\``);
  try {
    const r = await pushDataset({
      dir: o.dir,
      repo: o.repo,
      private: o.private,
      revision: o.revision,
      ...(o.message ? { message: o.message } : {}),
      ...(hubUrl ? { hubUrl } : {}),
      token: found.token,
      timeoutMs: o.timeout * 1000,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    process.stdout.write(r.commit ? `pushed ${r.uploaded} files to ${r.url} in commit ${r.commit}${r.deleted ? ` (removed ${r.deleted} stale files)` : ""}\n` : `${r.url} is up to date: no commit\n`);
    return 0;
  } catch (err) {
    if (err instanceof PushError) {
      process.stderr.write(`ehrgym: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

const exitWith = (code: number) => {
  if (code !== 0) process.exitCode = code;
};

export function registerDataset(program: Command): void {
  const dataset = program.command("dataset").description("SFT datasets from rollout rows: build, inspect, validate, push to the Hugging Face Hub");
  dataset
    .command("build")
    .description("Make rollout JSONL into a dataset folder (JSONL + Arrow + openai format, card, manifest)")
    .requiredOption("--from <files...>", "rollout/eval JSONL files (any number of shards)")
    .requiredOption("--out <dir>", "dataset folder to create")
    .option("--keep <which>", "clean (reward 1, every assistant turn a valid action) | correct (reward 1) | all", "clean")
    .option("--max-per-task <k>", "at most K samples per task")
    .option("--pairs-per-task <k>", "formats dpo/kto: at most K pairs (dpo), K correct and K failed rows (kto) per task prompt", "4")
    .option("--dedupe", "drop trajectories whose assistant turns repeat another's for the same task")
    .option("--min-reward <r>", "keep rows with reward >= r")
    .option("--split-fractions <list>", "fractions per split, e.g. 0.9,0.05,0.05")
    .option("--splits <list>", "split names, e.g. train")
    .option("--seed <n>", "seed of the patient-to-split assignment", "0")
    .option("--exclude-mrns-from <files...>", "evaluation task files or MRN lists whose patients must not appear")
    .option("--format <list>", "trl (always), openai, arrow, tokens (per trajectory, what TRL's rollout_func returns, from rows of rollout --capture tokens), dpo (preference pairs), kto (labelled singles)", "trl,openai,arrow")
    .option("--name <name>", "dataset name (default: the --out folder's name)")
    .option("--license <id>", "licence id for the card", "mit")
    .option("--shard-rows <n>", "rows per shard file", "50000")
    .option("--force", "replace an existing --out")
    .option("--show-endpoint", "name the teacher endpoints' hosts in the card (default: only their kind)")
    .option("--reasoning <rule>", "keep | drop: keep each assistant turn's reasoning as reasoning_content (where Qwen3-style chat templates read it) or drop it", "drop")
    .option("--tokenizer <file>", "the model's tokenizer.json (byte-level BPE): the card's length percentiles in its tokens (else in characters), and what --max-tokens counts")
    .option("--chat-template <file>", "the model's chat template (tokenizer_config.json or a .jinja file) to render rows with for their lengths (default: ChatML)")
    .option("--max-tokens <n>", "drop rows whose conversation (rendered as ChatML, tools included) is longer than N tokens of --tokenizer, from every config")
    .action(async (opts: Record<string, unknown>) => exitWith(await runBuild(opts)));
  dataset
    .command("inspect <dir>")
    .description("Counts, and one row rendered as a chat")
    .option("--row <n>", "row to render (0-based, across splits)")
    .action(async (dir: string, opts: Record<string, unknown>) => exitWith(await runInspect({ dir, ...opts })));
  dataset
    .command("validate <dir>")
    .description("Check schema, hashes, patient-disjoint splits, decontamination and the card")
    .option("--exclude-mrns-from <files...>", "held-out task files or MRN lists (default: those the build used)")
    .option("--tokenizer <file>", "tokenizer.json: report how many token rows re-tokenise to different ids when the chat is rendered again")
    .option("--chat-template <file>", "the model's chat template (tokenizer_config.json or a .jinja file) to render the chat with (default: ChatML, as the stand-in renders it)")
    .action(async (dir: string, opts: Record<string, unknown>) => exitWith(await runValidate({ dir, ...opts })));
  dataset
    .command("check <files...>")
    .description("Check SFT JSONL files line by line (format trl or openai): the checks `validate` runs on each file")
    .option("--keep <which>", "the rule the rows were built with: clean flags invalid assistant turns in format trl", "clean")
    .action(async (files: string[], opts: Record<string, unknown>) => exitWith(await runCheck({ files, ...opts })));
  dataset
    .command("push <dir>")
    .description("Publish the dataset folder to the Hugging Face Hub in one commit (no commit when nothing changed)")
    .requiredOption("--repo <owner/name>", "dataset repo")
    .option("--private", "create the repo private")
    .option("--revision <branch>", "branch to commit to", "main")
    .option("--message <text>", "commit message")
    .option("--hub-url <url>", "Hub endpoint (default: $HF_ENDPOINT, else huggingface.co)")
    .option("--token-env <name>", "variable holding the token (else the `huggingface-cli login` token file)", "HF_TOKEN")
    .option("--timeout <s>", "per request", "300")
    .option("--dry-run", "print what would be uploaded, contact nothing")
    .action(async (dir: string, opts: Record<string, unknown>) => exitWith(await runPush({ dir, ...opts })));
}

