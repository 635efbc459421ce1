// What `eval` and `rollout` share: the EHR to run on, the tasks, and the model policy's flags.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { DEFAULT_API_BASE, EmbeddedBackend, EnvConfig, MedAgentEnv, type Policy, Sampling } from "../../env/core/index.ts";
import { DEFAULT_PATIENTS as DEFAULT_EHR_PATIENTS, DEFAULT_SEED as DEFAULT_EHR_SEED, generateStore } from "../../env/ehr/index.ts";
import { FhirService, type FhirResource, type FhirStore } from "../../env/fhir/index.ts";
import { loadToolSchemas, ThinkBlocks, V2Semantics, type OpenAITool } from "../../env/protocol/index.ts";
import { generateTasks, loadTaskFile, Suite, TaskFileError, type Task } from "../../env/tasks/index.ts";
import { createExpertPolicy, createModelPolicy } from "../../rollout/index.ts";
import { addPopulationOptions, addProtocolOptions, collect, existingDir, existingFile, REPRODUCIBLE_FHIR_HELP } from "./common.ts";
import { openStore } from "./fhir.ts";
import { ALL_SUITES, checkTypesInSuites, SUITE_CHOICES_HELP, SuiteChoice, SuiteList, suitesOf, suitesWithTypes, TypesFlag } from "./suites.ts";
import { readMrns } from "./tasks.ts";
import { UserError, utf8Text } from "../../env/util/index.ts";

export const intFlag = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const list = z.string().transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean));
const number = (min: number, max: number) => z.coerce.number().min(min).max(max);

/** Where episodes run and on which tasks. */
export const SetupFlags = z.object({
  tasks: existingFile.optional(),
  suite: SuiteChoice.optional(),
  suites: SuiteList.optional(),
  perType: intFlag(1, 100_000).default(10),
  split: z.enum(["train", "val", "test", "all"]).optional(),
  patientsFrom: existingFile.optional(),
  chartsFor: z.array(existingFile).default([]),
  data: existingDir.optional(),
  synthetic: z.boolean().optional(),
  seed: intFlag(0, 2 ** 31 - 1).optional(),
  patients: intFlag(1, 100_000).optional(),
  cache: z.boolean().default(true),
  excludeMrnsFrom: z.array(existingFile).default([]),
  protocol: z.enum(["text", "tools"]).default("text"),
  maxRounds: intFlag(1, 1000).default(8),
  writes: z.enum(["execute", "record"]).default("execute"),
  limit: intFlag(1, 10_000_000).optional(),
  types: TypesFlag.optional(),
  toolSchemas: existingFile.optional(),
  v2Semantics: V2Semantics.default("original"),
  thinkBlocks: ThinkBlocks.default("split"),
  reproducibleFhir: z.boolean().default(false),
});
export type SetupFlags = z.infer<typeof SetupFlags>;

const ExtraBody = z.string().transform((s, ctx) => {
  try {
    const v = JSON.parse(s) as unknown;
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  ctx.addIssue({ code: "custom", message: "expected a JSON object like '{\"top_k\": 20}'" });
  return z.NEVER;
});

/** Whether earlier turns' reasoning goes back to the model (THINK_HELP). */
const ReasoningHistory = z.enum(["drop", "keep"]);

/** The model policy's flags (ROLLOUT.md "The model policy"). */
export const ModelFlags = z.object({
  model: z.string().min(1).optional(),
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name").default("OPENAI_API_KEY"),
  // The bounds of core's one Sampling schema, after the flag's text is read as a number.
  temperature: z.coerce.number().pipe(Sampling.shape.temperature.unwrap()).optional(),
  topP: z.coerce.number().pipe(Sampling.shape.top_p.unwrap()).optional(),
  maxTokens: intFlag(1, 10_000_000).optional(),
  samplingSeed: intFlag(-(2 ** 53), 2 ** 53).optional(),
  stop: z.array(z.string().min(1)).optional(),
  extraBody: ExtraBody.optional(),
  capture: z.enum(["tokens"], { message: "--capture: expected tokens" }).optional(),
  samples: intFlag(1, 10_000).default(1),
  concurrency: intFlag(1, 4096).default(16),
  rpm: intFlag(1, 100_000_000).optional(),
  tpm: intFlag(1, 10_000_000_000).optional(),
  timeout: number(0.001, 86_400).default(120),
  maxRetries: intFlag(0, 100).default(6),
  reasoningHistory: ReasoningHistory.default("drop"),
});
export type ModelFlags = z.infer<typeof ModelFlags>;

export function addSetupOptions(cmd: Command, defaults: { perType: string }): Command {
  cmd
    .option("--tasks <file>", "task file (official JSON or ehrgym tasks JSONL); default: generated tasks")
    .option("--suite <suite>", `suite of --tasks when it cannot be detected, or the suite to generate: ${SUITE_CHOICES_HELP}`)
    .option("--suites <list>", `suites to generate tasks for, comma-separated, or all (${ALL_SUITES.join(", ")}) (default mab-v1,mab-v2, or with --types the suites that have those types)`)
    .option("--per-type <n>", "generated tasks per type", defaults.perType)
    .option("--split <split>", "generated tasks: patients of this split only (train | val | test | all)")
    .option("--patients-from <file>", "Patient NDJSON to use as the population")
    .option("--charts-for <file>", "task file whose patients get full charts (repeatable; default: --tasks with --patients-from)", collect, []);
  addPopulationOptions(cmd)
    .option("--exclude-mrns-from <file>", "never use patients of this task file or MRN list (repeatable)", collect, [])
    .option("--protocol <p>", "text | tools", "text")
    .option("--max-rounds <n>", "round limit per episode", "8")
    .option("--writes <mode>", "execute | record", "execute")
    .option("--limit <n>", "run at most N tasks")
    .option("--types <list>", "only these task types, e.g. task1,task5, or review (the workflows suite's chart reviews)");
  return addProtocolOptions(cmd).option("--reproducible-fhir", REPRODUCIBLE_FHIR_HELP);
}

export function addModelOptions(cmd: Command, defaults: { concurrency: string }): Command {
  return cmd
    .option("--model <name>", "model name sent with each request")
    .option("--base-url <url>", "OpenAI-compatible endpoint root (.../v1); default $OPENAI_BASE_URL, else OpenAI")
    .option("--api-key-env <name>", "environment variable holding the key", "OPENAI_API_KEY")
    .option("--temperature <t>", "sampling temperature")
    .option("--top-p <p>", "nucleus sampling")
    .option("--max-tokens <n>", "completion tokens per turn")
    .option("--sampling-seed <n>", "the `seed` sent to the endpoint")
    .option("--stop <text>", "stop sequence (repeatable)", collect)
    .option("--extra-body <json>", "JSON object merged into each request body (e.g. vLLM's top_k)")
    .option("--capture <what>", "tokens: ask a vLLM-compatible endpoint for token ids and logprobs and keep them per turn")
    .option("--samples <n>", "episodes per task", "1")
    .option("--concurrency <n>", "episodes in flight", defaults.concurrency)
    .option("--rpm <n>", "client-side requests per minute limit")
    .option("--tpm <n>", "client-side tokens per minute limit")
    .option("--timeout <s>", "per request, seconds", "120")
    .option("--max-retries <n>", "per request, for 408/409/429/5xx/connection errors", "6")
    .option("--reasoning-history <mode>", "drop | keep: send earlier turns' reasoning back to the model as reasoning_content (default drop, as Qwen3 and DeepSeek-R1 document)", "drop");
}

function readPatients(path: string): FhirResource[] {
  const out: FhirResource[] = [];
  utf8Text(readFileSync(path), `--patients-from: ${path}`)
    .split("\n")
    .forEach((line, i) => {
      if (!line.trim()) return;
      let r: unknown;
      try {
        r = JSON.parse(line);
      } catch {
        throw new UserError(`--patients-from: ${path}:${i + 1} is not JSON`);
      }
      if (!r || typeof r !== "object" || (r as FhirResource).resourceType !== "Patient") throw new UserError(`--patients-from: ${path}:${i + 1} is not a Patient resource`);
      out.push(r as FhirResource);
    });
  if (out.length === 0) throw new UserError(`--patients-from: no Patient resources in ${path}`);
  return out;
}

function loadTasks(path: string, choice: SuiteChoice | undefined): Task[] {
  if (choice === "all") throw new UserError(`--suite: all names no one suite for the tasks of ${path} (give ${ALL_SUITES.join(", ")}, or leave it out to detect it)`);
  const suite: Suite | undefined = choice;
  try {
    return loadTaskFile(path, suite ? { suite } : {});
  } catch (err) {
    if (err instanceof TaskFileError) throw new UserError(`--tasks: ${err.message}`);
    throw err;
  }
}

/** The suites to generate tasks of (none with --tasks), the flags that choose them checked against
 *  each other before anything loads. */
function generatedSuites(o: SetupFlags): Suite[] | undefined {
  if (o.tasks) {
    if (o.suite === "all") throw new UserError(`--suite: all names no one suite for the tasks of ${o.tasks} (give ${ALL_SUITES.join(", ")}, or leave it out to detect it)`);
    return undefined;
  }
  const suites: Suite[] = o.suites ?? (o.suite ? suitesOf(o.suite) : o.types ? suitesWithTypes(o.types) : ["mab-v1", "mab-v2"]);
  if (o.types && o.suites) checkTypesInSuites(o.types, suites, `--suites ${o.suites.join(",")}`);
  else if (o.types && o.suite) checkTypesInSuites(o.types, suites, `--suite ${o.suite}`);
  return suites;
}

export async function buildStore(o: SetupFlags): Promise<FhirStore> {
  generatedSuites(o);
  if (o.data && (o.patientsFrom || o.seed !== undefined || o.patients !== undefined || o.synthetic))
    throw new UserError("--data cannot be combined with --synthetic, --patients-from, --seed or --patients");
  if (o.data) return openStore({ data: o.data });
  if (o.chartsFor.length && !o.patientsFrom) throw new UserError("--charts-for needs --patients-from");
  if (!o.patientsFrom) return openStore({ synthetic: true, seed: o.seed, patients: o.patients, cache: o.cache });
  const chartsFor = o.chartsFor.length ? o.chartsFor : o.tasks ? [o.tasks] : [];
  const t0 = performance.now();
  const { store } = generateStore({
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.patients !== undefined ? { patients: o.patients } : {}),
    ...(o.patientsFrom ? { patientsFrom: readPatients(o.patientsFrom) } : {}),
    ...(chartsFor.length ? { chartsFor: [...new Set(chartsFor.flatMap((f) => loadTasks(f, o.suite).flatMap((t) => (t.eval_MRN ? [t.eval_MRN] : []))))] } : {}),
  });
  process.stderr.write(`generated ${store.size.toLocaleString("en-US")} resources in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  return store;
}

/** Where the EHR's patients come from, as rows record it (file names only, never a path). */
export function patientSource(o: SetupFlags): string {
  if (o.data) return `data ${basename(resolve(o.data))}`;
  if (o.patientsFrom) return `population ${basename(o.patientsFrom)}`;
  return `synthetic (seed ${o.seed ?? DEFAULT_EHR_SEED}, ${o.patients ?? DEFAULT_EHR_PATIENTS} patients)`;
}

export interface TaskSelection {
  tasks: Task[];
  /** Tasks dropped because their patient is held out. */
  heldOut: number;
  /** What the run's meta records about where the tasks came from. */
  source: Record<string, unknown>;
}

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

export function selectTasks(o: SetupFlags, store: FhirStore): TaskSelection {
  const exclude = new Set(o.excludeMrnsFrom.flatMap(readMrns));
  let tasks: Task[];
  let source: Record<string, unknown>;
  if (o.tasks) {
    tasks = loadTasks(o.tasks, o.suite);
    source = { kind: "file", path: o.tasks, sha256: sha256(o.tasks) };
  } else {
    const suites = generatedSuites(o)!;
    const split = o.split && o.split !== "all" ? o.split : undefined;
    const seed = o.seed ?? 1;
    tasks = suites.flatMap((suite) => generateTasks(store, { suite, perType: o.perType, seed, excludeMrns: exclude, ...(split ? { split } : {}) }));
    source = { kind: "generated", suites, per_type: o.perType, seed, ...(split ? { split } : {}) };
  }
  const before = tasks.length;
  if (exclude.size) tasks = tasks.filter((t) => !(t.eval_MRN && exclude.has(t.eval_MRN)));
  const heldOut = before - tasks.length;
  if (o.types) {
    const wanted = new Set(o.types);
    tasks = tasks.filter((t) => wanted.has(t.type));
  }
  if (o.limit !== undefined) tasks = tasks.slice(0, o.limit);
  if (o.excludeMrnsFrom.length) source.exclude_mrns_from = o.excludeMrnsFrom.map((path) => ({ path, sha256: sha256(path) }));
  if (tasks.length === 0) throw new UserError(`no tasks selected (check --tasks, --types, --limit${heldOut ? `; ${heldOut} held out by --exclude-mrns-from` : ""})`);
  return { tasks, heldOut, source };
}

export function makeEnvFactory(
  store: FhirStore,
  flags: Pick<SetupFlags, "toolSchemas" | "v2Semantics" | "reproducibleFhir"> & Partial<Pick<SetupFlags, "thinkBlocks">> = { v2Semantics: "original", reproducibleFhir: false },
): () => MedAgentEnv {
  const config = new EnvConfig({
    backend: new EmbeddedBackend(store, new FhirService(store, { baseUrl: DEFAULT_API_BASE, reproducible: flags.reproducibleFhir }), DEFAULT_API_BASE),
    v2Semantics: flags.v2Semantics,
    thinkBlocks: flags.thinkBlocks ?? "split",
    ...(flags.toolSchemas ? { toolSchemas: toolSchemasOf(flags.toolSchemas) } : {}),
  });
  return () => new MedAgentEnv(config);
}

/** `--tool-schemas FILE`, or a usage error naming the problem. */
export function toolSchemasOf(path: string): OpenAITool[] {
  try {
    return loadToolSchemas(path);
  } catch (e) {
    throw new UserError((e as Error).message);
  }
}

/** The sampling parameters given, with a default temperature for the job (rollout 0.7, eval 0). */
export function samplingOf(m: ModelFlags, defaultTemperature: number): Sampling {
  return {
    temperature: m.temperature ?? defaultTemperature,
    ...(m.topP !== undefined ? { top_p: m.topP } : {}),
    ...(m.maxTokens !== undefined ? { max_tokens: m.maxTokens } : {}),
    ...(m.samplingSeed !== undefined ? { seed: m.samplingSeed } : {}),
    ...(m.stop?.length ? { stop: m.stop.length === 1 ? m.stop[0]! : m.stop } : {}),
  };
}

export function makeModelPolicy(m: ModelFlags, defaultTemperature: number): Policy {
  if (!m.model) throw new UserError("--model: required with a model policy (the name the endpoint serves, e.g. gpt-4o-mini or Qwen/Qwen3-8B)");
  const baseURL = m.baseUrl ?? process.env.OPENAI_BASE_URL;
  // OpenAI itself (the default endpoint) needs a key: say so before any task runs, not after a
  // table of failed episodes. Local endpoints often take none.
  const host = baseURL ? URL.parse(baseURL)?.hostname : "api.openai.com";
  if (host === "api.openai.com" && !process.env[m.apiKeyEnv])
    throw new UserError(`$${m.apiKeyEnv} is not set: ${baseURL ? baseURL : "OpenAI (the default endpoint; --base-url names another)"} needs an API key in it (or name another variable with --api-key-env)`);
  return createModelPolicy({
    model: m.model,
    ...(baseURL ? { baseURL } : {}),
    ...(process.env[m.apiKeyEnv] ? { apiKey: process.env[m.apiKeyEnv] } : {}),
    apiKeyEnv: m.apiKeyEnv,
    sampling: samplingOf(m, defaultTemperature),
    ...(m.extraBody ? { extraBody: m.extraBody } : {}),
    ...(m.capture ? { capture: m.capture } : {}),
    timeoutMs: m.timeout * 1000,
    maxRetries: m.maxRetries,
    ...(m.rpm ? { rpm: m.rpm } : {}),
    ...(m.tpm ? { tpm: m.tpm } : {}),
    reasoningHistory: m.reasoningHistory,
  });
}

export function makeExpertPolicy(o: SetupFlags): Policy {
  return createExpertPolicy({ apiBase: DEFAULT_API_BASE, maxRounds: o.maxRounds });
}
