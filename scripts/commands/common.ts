import { mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { UserError } from "../../env/util/index.ts";

function kindOf(p: string): "file" | "directory" | "other" | undefined {
  try {
    const st = statSync(p);
    return st.isFile() ? "file" : st.isDirectory() ? "directory" : "other";
  } catch {
    return undefined;
  }
}

/** A flag naming a file to read: "no such file" or "is a directory, expected a file". */
export const existingFile = z.string().superRefine((p, ctx) => {
  const kind = kindOf(p);
  if (kind === undefined) ctx.addIssue({ code: "custom", message: "no such file" });
  else if (kind === "directory") ctx.addIssue({ code: "custom", message: "is a directory, expected a file" });
});

/** A flag naming a folder to read: "no such directory" or "is a file, expected a directory". */
export const existingDir = z.string().superRefine((p, ctx) => {
  const kind = kindOf(p);
  if (kind === undefined) ctx.addIssue({ code: "custom", message: "no such directory" });
  else if (kind !== "directory") ctx.addIssue({ code: "custom", message: "is a file, expected a directory" });
});

/** Parse commander's option object with a zod schema; errors name the flag and the value given. */
export function parseOptions<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const key = issue.path.length ? String(issue.path[0]) : "";
    const flag = key ? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : "options";
    let given = key && raw && typeof raw === "object" ? (raw as Record<string, unknown>)[key] : undefined;
    // A repeatable flag: the one value at fault.
    if (Array.isArray(given) && typeof issue.path[1] === "number") given = given[issue.path[1]];
    return `${flag}: ${issue.message}${given !== undefined ? ` (got ${JSON.stringify(given)})` : ""}`;
  });
  throw new UserError(lines.join("\n"));
}

/** Help of `--think-blocks` on every command that runs episodes. */
export const THINK_BLOCKS_HELP = "split | official: read a turn's leading <think>...</think> block as reasoning, never as an action (split), or read the text as the official harness does (official: such a turn is invalid)";
/** Help of `--no-cache` on every command that can run on the synthetic population. */
export const REPRODUCIBLE_FHIR_HELP = "FHIR replies that repeat byte for byte: Bundle and paging ids from each episode's requests, every time 2023-11-13T10:15:00 (default: random ids and the clock, as HAPI)";
export const NO_CACHE_HELP = "generate the synthetic population afresh (default: generated once into the cache folder, $EHRGYM_CACHE or ~/.cache/ehrgym)";

/** Commander collects repeatable options through this. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Keeps a server command running until SIGINT or SIGTERM, then closes the server. */
export function closeOnSignal(server: { close(): Promise<void> }): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      void server.close().then(resolve);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

/** Runs `job` with a signal that SIGINT or SIGTERM aborts (a long command stops cleanly on either). */
export async function stoppable<T>(job: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    return await job(abort.signal);
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

/** The one-line usage error for an output path the process cannot create or write. */
export function unwritable(flag: string, path: string, err: unknown): UserError | unknown {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (typeof code !== "string" || !/^E[A-Z]+$/.test(code)) return err;
  return new UserError(`${flag} ${path}: cannot write there (${code}: ${(err as Error).message.replace(/^[A-Z]+: /, "").replace(/, \w+ '.*'$/, "")})`);
}

/**
 * Checks an output file path before any work: not a directory, and its folder can be made.
 * `inputs` are files the command reads: writing over one of them is refused.
 */
export function checkOutputFile(flag: string, path: string, inputs: readonly string[] = []): void {
  const target = resolve(path);
  for (const input of inputs) if (resolve(input) === target) throw new UserError(`${flag} ${path}: it is also an input of this command; give another path`);
  let isDir = false;
  try {
    isDir = statSync(target).isDirectory();
  } catch {
    // absent: created later
  }
  if (isDir) throw new UserError(`${flag} ${path}: is a directory; give a file path`);
  try {
    mkdirSync(dirname(target), { recursive: true });
  } catch (err) {
    throw unwritable(flag, path, err);
  }
}

/** Where the EHR comes from, as every command that builds one takes it. */
export function addPopulationOptions(cmd: Command): Command {
  return cmd
    .option("--data <dir>", "load an NDJSON export instead of generating")
    .option("--synthetic", "generate the synthetic EHR (the default)")
    .option("--seed <n>", "synthetic population and task generator seed")
    .option("--patients <n>", "synthetic population size")
    .option("--no-cache", NO_CACHE_HELP);
}

/** How the protocols read the model: the tool schemas shown, V2's semantics, think blocks. */
export function addProtocolOptions(cmd: Command): Command {
  return cmd
    .option("--tool-schemas <file>", "tool protocol: reference tool schemas shown to the model (exported from MedAgentBench V2)")
    .option("--v2-semantics <mode>", "tool protocol: original (MedAgentBench V2) | medarc (the verifiers port)", "original")
    .option("--think-blocks <mode>", THINK_BLOCKS_HELP, "split");
}
