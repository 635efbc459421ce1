// `ehrgym serve`: the HTTP reward server for trainers in other languages (JSON + MessagePack).
import type { Command } from "commander";
import { z } from "zod";
import { EmbeddedBackend, EnvConfig } from "../../env/core/index.ts";
import { FhirService, type FhirStore } from "../../env/fhir/index.ts";
import { loadFunctions, loadPromptTemplate, loadToolSchemas, ThinkBlocks, V2Semantics } from "../../env/protocol/index.ts";
import { createRewardServer, DEFAULTS, medAgentBackend, type RewardServer } from "../../env/server/index.ts";
import { generateTasks, loadTaskFile, type Task } from "../../env/tasks/index.ts";
import { addPopulationOptions, addProtocolOptions, existingDir, existingFile, parseOptions, REPRODUCIBLE_FHIR_HELP } from "./common.ts";
import { openStore } from "./fhir.ts";
import { ALL_SUITES, SUITE_CHOICES_HELP, SuiteChoice, suitesOf } from "./suites.ts";
import { UserError } from "../../env/util/index.ts";

const intFlag = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const ServeOptions = z
  .object({
    port: intFlag(0, 65_535).default(8000),
    host: z.string().min(1).default("127.0.0.1"),
    data: existingDir.optional(),
    synthetic: z.boolean().optional(),
    seed: intFlag(0, 2 ** 31 - 1).optional(),
    patients: intFlag(1, 100_000).optional(),
    cache: z.boolean().default(true),
    tasks: z.array(existingFile).optional(),
    suite: SuiteChoice.optional(),
    perType: intFlag(1, 100_000).default(10),
    apiBase: z.url().refine((u) => u.endsWith("/"), { message: "must end with /" }).default("http://localhost:8080/fhir/"),
    promptTemplate: existingFile.optional(),
    functions: existingFile.optional(),
    toolSchemas: existingFile.optional(),
    v2Semantics: V2Semantics.default("original"),
    thinkBlocks: ThinkBlocks.default("split"),
    maxRounds: intFlag(1, 1000).default(8),
    writes: z.enum(["execute", "record"]).default("execute"),
    maxEpisodes: intFlag(1, 10_000_000).default(DEFAULTS.maxEpisodes),
    idleTtl: z.coerce.number().min(0).default(DEFAULTS.idleTtlMs / 1000),
    finishedTtl: z.coerce.number().min(0).default(DEFAULTS.finishedTtlMs / 1000),
    maxBody: intFlag(1024, 1024 ** 3).default(DEFAULTS.maxBodyBytes),
    token: z.string().min(1).optional(),
    drainTimeout: z.coerce.number().min(0).max(3600).default(30),
    reproducibleFhir: z.boolean().default(false),
    replicaId: z.string().regex(/^[A-Za-z0-9_.]+$/, "letters, digits, _ and . only").default(DEFAULTS.replicaId),
  })
  .strict();
export type ServeOptions = z.infer<typeof ServeOptions>;

function selectTasks(o: ServeOptions, store: FhirStore): Task[] {
  const hint = o.suite;
  if (o.tasks && hint === "all") throw new UserError(`--suite: all names no one suite for the tasks of --tasks (give ${ALL_SUITES.join(", ")}, or leave it out to detect it)`);
  const tasks = o.tasks
    ? o.tasks.flatMap((file) => loadTaskFile(file, hint && hint !== "all" ? { suite: hint } : {}))
    : (o.suite ? suitesOf(o.suite) : (["mab-v1", "mab-v2"] as const)).flatMap((suite) =>
        generateTasks(store, { suite, perType: o.perType, ...(o.seed !== undefined ? { seed: o.seed } : {}) }),
      );
  const seen = new Set<string>();
  for (const t of tasks) {
    if (seen.has(t.id)) throw new UserError(`--tasks: task id ${JSON.stringify(t.id)} appears twice`);
    seen.add(t.id);
  }
  if (tasks.length === 0) throw new UserError("--tasks: no tasks loaded");
  return tasks;
}

/** Loads the EHR and the tasks and builds the server (not listening yet). */
export async function buildServer(raw: unknown): Promise<{ server: RewardServer; options: ServeOptions; tasks: Task[] }> {
  const o = parseOptions(ServeOptions, raw);
  if (o.data && o.synthetic) throw new UserError("--data and --synthetic are exclusive");
  const token = o.token ?? process.env.EHRGYM_TOKEN;
  if (o.data && o.patients !== undefined) throw new UserError("--patients needs the synthetic EHR (not --data)");
  // With --data, --seed only seeds the task generator.
  const store = await openStore(o.data ? { data: o.data } : { synthetic: true, seed: o.seed, patients: o.patients, cache: o.cache });
  const tasks = selectTasks(o, store);
  const service = new FhirService(store, { baseUrl: o.apiBase, reproducible: o.reproducibleFhir });
  const config = new EnvConfig({
    backend: new EmbeddedBackend(store, service, o.apiBase),
    tasks,
    maxRounds: o.maxRounds,
    writes: o.writes,
    ...(o.promptTemplate ? { promptTemplate: loadPromptTemplate(o.promptTemplate) } : {}),
    ...(o.functions ? { functions: loadFunctions(o.functions) } : {}),
    ...(o.toolSchemas ? { toolSchemas: usage(() => loadToolSchemas(o.toolSchemas!)) } : {}),
    v2Semantics: o.v2Semantics,
    thinkBlocks: o.thinkBlocks,
  });
  const server = createRewardServer({
    backend: medAgentBackend(config, tasks),
    maxEpisodes: o.maxEpisodes,
    idleTtlMs: Math.round(o.idleTtl * 1000),
    finishedTtlMs: Math.round(o.finishedTtl * 1000),
    maxBodyBytes: o.maxBody,
    token: token || undefined,
    replicaId: o.replicaId,
  });
  return { server, options: o, tasks };
}

export async function runServe(raw: unknown): Promise<void> {
  const { server, options: o, tasks } = await buildServer(raw);
  let url: string;
  try {
    url = await server.listen(o.port, o.host);
  } catch (err) {
    throw new UserError(`--port: cannot listen on ${o.host}:${o.port} (${(err as Error).message})`);
  }
  process.stderr.write(
    `ehrgym reward server on ${url} (replica ${o.replicaId}, ${tasks.length} tasks, ${o.token || process.env.EHRGYM_TOKEN ? "bearer token required" : "no token"}); Ctrl-C stops\n`,
  );
  // Machine-readable line for wrappers that start the server on port 0.
  process.stdout.write(`${JSON.stringify({ url, replica_id: o.replicaId, tasks: tasks.length })}\n`);
  await stopOnSignals(server, o.drainTimeout);
}

const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * SIGTERM or SIGINT (Kubernetes stopping the pod, Ctrl-C): refuse new episodes, let the requests in
 * flight finish (at most `drainTimeout` seconds; open episodes between steps are not waited for),
 * then stop. A second signal stops at once.
 */
function stopOnSignals(server: RewardServer, drainTimeout: number): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: keyof typeof SIGNAL_EXIT) => {
      if (stopping) {
        process.stderr.write(`${signal} again: stopping now\n`);
        process.exitCode = SIGNAL_EXIT[signal];
        void server.close();
        return;
      }
      stopping = true;
      void (async () => {
        if (drainTimeout > 0 && server.inFlight.size > 0) {
          process.stderr.write(`finishing ${server.inFlight.size} request(s) in flight, at most ${drainTimeout} s (${signal === "SIGINT" ? "Ctrl-C" : signal} again stops now)\n`);
          if (!(await server.drain(drainTimeout * 1000))) process.stderr.write(`stopping with ${server.inFlight.size} request(s) unanswered\n`);
        }
        await server.close();
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        resolve();
      })();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

export function registerServe(program: Command): void {
  const cmd = program
    .command("serve")
    .description("HTTP reward server for trainers (episodes, steps, score; JSON or MessagePack)")
    .option("--port <n>", "port (0 picks a free one)", "8000")
    .option("--host <addr>", "address to bind", "127.0.0.1");
  addPopulationOptions(cmd)
    .option("--tasks <file>", "task file (repeatable); default: generated tasks of mab-v1 and mab-v2 (--suite names others)", (v: string, p: string[] = []) => [...p, v])
    .option("--suite <suite>", `suite of --tasks when it cannot be detected, or the suite to generate: ${SUITE_CHOICES_HELP}`)
    .option("--per-type <n>", "generated tasks per type", "10")
    .option("--api-base <url>", "FHIR base URL the agent sees (trailing slash)", "http://localhost:8080/fhir/")
    .option("--prompt-template <file>", "text protocol prompt template")
    .option("--functions <file>", "text protocol function list");
  addProtocolOptions(cmd)
    .option("--max-rounds <n>", "default round limit per episode", "8")
    .option("--writes <mode>", "execute | record", "execute")
    .option("--max-episodes <n>", "episodes kept at once", String(DEFAULTS.maxEpisodes))
    .option("--idle-ttl <seconds>", "drop episodes idle this long (0: never)", String(DEFAULTS.idleTtlMs / 1000))
    .option("--finished-ttl <seconds>", "keep finished episodes for GET this long (0: until --idle-ttl)", String(DEFAULTS.finishedTtlMs / 1000))
    .option("--max-body <bytes>", "largest request body", String(DEFAULTS.maxBodyBytes))
    .option("--token <token>", "require Authorization: Bearer <token> (default: $EHRGYM_TOKEN)")
    .option("--drain-timeout <seconds>", "on SIGTERM/SIGINT, refuse new episodes and wait this long for the requests in flight (0: stop at once; a second signal stops at once)", "30")
    .option("--replica-id <id>", "episode id prefix for sticky routing across replicas", DEFAULTS.replicaId)
    .option("--reproducible-fhir", REPRODUCIBLE_FHIR_HELP)
    .action(async (opts: Record<string, unknown>) => {
      await runServe(opts);
    });
}

function usage<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new UserError((e as Error).message);
  }
}
