// `ehrgym fhir ...`: serve the embedded FHIR server, snapshot a live one, import and export NDJSON.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import {
  FhirService,
  RemoteFhirError,
  createStoreBuilder,
  exportNdjson,
  loadNdjson,
  snapshotFhirServer,
  startFhirHttpServer,
  type FhirStore,
} from "../../env/fhir/index.ts";
import { collect, existingDir, existingFile, NO_CACHE_HELP, parseOptions, REPRODUCIBLE_FHIR_HELP, stoppable } from "./common.ts";
import { UserError, writeFolderAtomic } from "../../env/util/index.ts";
import { createMeter, type Meter } from "./progress.ts";

const intFlag = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Where a store comes from: --import FILE..., --data DIR (an export), or --synthetic. */
const StoreSource = z.object({
  import: z.array(existingFile).optional(),
  data: existingDir.optional(),
  synthetic: z.boolean().optional(),
  seed: intFlag(0, 2 ** 31 - 1).optional(),
  patients: intFlag(1, 100_000).optional(),
  /** false (`--no-cache`): generate the synthetic population afresh instead of loading it from the cache. */
  cache: z.boolean().optional(),
});
type StoreSource = z.infer<typeof StoreSource>;

function describeSource(o: StoreSource, cached?: string): string {
  if (cached) return `the synthetic population cached in ${cached}`;
  if (o.synthetic || (!o.data && !o.import?.length)) return `the synthetic population (seed ${o.seed ?? "default"}, ${o.patients ?? "default"} patients)`;
  return [...(o.data ? [o.data] : []), ...(o.import ?? [])].join(", ");
}

/** NDJSON files of an export folder, Patient first, then by name (load order fixes id order).
 *  Their index sidecars (`<Type>.ndjson.idx`) are found by loadNdjson, not listed here. */
export function exportFiles(dir: string): string[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".ndjson"))
    .sort((a, b) => (a === "Patient.ndjson" ? -1 : b === "Patient.ndjson" ? 1 : a < b ? -1 : a > b ? 1 : 0));
  if (files.length === 0) throw new UserError(`--data: no .ndjson files in ${JSON.stringify(dir)}`);
  return files.map((f) => join(dir, f));
}

/** Build the store a command asked for. Exactly one of --synthetic, or --data and/or --import. */
export async function openStore(o: StoreSource): Promise<FhirStore> {
  const fromFiles = o.data !== undefined || (o.import?.length ?? 0) > 0;
  if (o.synthetic && fromFiles) throw new UserError("--synthetic cannot be combined with --data or --import");
  if (!o.synthetic && (o.seed !== undefined || o.patients !== undefined)) throw new UserError("--seed and --patients need --synthetic");
  const t0 = performance.now();
  let store: FhirStore;
  let cached: string | undefined;
  if ((o.synthetic || !fromFiles) && o.cache === false) {
    const { generateStore } = await import("../../env/ehr/index.ts");
    store = generateStore({ seed: o.seed, patients: o.patients });
  } else {
    if (o.synthetic || !fromFiles) cached = await (await import("./population.ts")).cachedPopulation(o.seed, o.patients);
    const builder = createStoreBuilder();
    const paths = cached ? exportFiles(cached) : [...(o.data ? exportFiles(o.data) : []), ...(o.import ?? [])];
    const totalBytes = paths.reduce((n, p) => n + statSync(p).size, 0);
    // Progress by bytes read (the loader reports characters; close enough for an ETA).
    const bar = createMeter({ label: "loading", unit: "MB", total: totalBytes, format: (n) => (n / 1e6).toFixed(1) });
    let doneBytes = 0;
    let lastFile = "";
    let fileBytes = 0;
    try {
      await loadNdjson(paths, builder, {
        onWarning: (m) => process.stderr.write(`${process.stderr.isTTY ? "\n" : ""}warning: ${m}\n`),
        onProgress: (p) => {
          if (p.file !== lastFile) {
            doneBytes += fileBytes;
            lastFile = p.file;
          }
          fileBytes = p.bytes;
          bar.update(Math.min(totalBytes, doneBytes + p.bytes), `${p.resources.toLocaleString("en-US")} resources`);
        },
      });
    } finally {
      bar.stop();
    }
    store = builder.build();
  }
  process.stderr.write(`loaded ${store.size.toLocaleString("en-US")} resources from ${describeSource(o, cached)} in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  return store;
}

/** Write the per-type NDJSON export of `store` into `out` atomically (temp folder, then rename). */
async function writeExport(store: FhirStore, out: string, force: boolean): Promise<void> {
  const target = resolve(out);
  if (existsSync(target)) {
    if (!statSync(target).isDirectory()) throw new UserError(`--out: ${JSON.stringify(out)} exists and is not a directory`);
    if (readdirSync(target).length > 0 && !force) throw new UserError(`--out: ${JSON.stringify(out)} is not empty (use --force to replace it)`);
  }
  await writeFolderAtomic(target, (tmp) => exportNdjson(store, tmp));
  const counts = store.countsByType();
  const summary = Object.entries(counts)
    .map(([t, n]) => `${t} ${n.toLocaleString("en-US")}`)
    .join(", ");
  process.stderr.write(`exported ${store.size.toLocaleString("en-US")} resources to ${out} (${summary})\n`);
}

function addStoreFlags(cmd: Command): Command {
  return cmd
    .option("--import <file>", "load an NDJSON file (one resource per line) or a JSON Bundle; repeatable", collect)
    .option("--data <dir>", "load an export folder (one NDJSON file per type, as written by `ehrgym fhir export`)")
    .option("--synthetic", "generate the synthetic EHR population (the default when no data is given)")
    .option("--seed <n>", "seed of the synthetic population")
    .option("--patients <n>", "number of synthetic patients")
    .option("--no-cache", NO_CACHE_HELP);
}

export function registerFhir(program: Command): void {
  const fhir = program.command("fhir").description("the embedded FHIR R4 server: serve, snapshot a live server, import and export NDJSON");

  addStoreFlags(
    fhir
      .command("serve")
      .description("serve a FHIR R4 store over HTTP at http://HOST:PORT/fhir/ (drop-in for the MedAgentBench HAPI image)")
      .option("--port <n>", "port (0 picks a free one)", "8080")
      .option("--host <host>", "address to bind", "127.0.0.1")
      .option("--base-path <path>", "URL path of the FHIR base", "/fhir/")
      .option("--max-body <bytes>", "largest accepted request body", String(16 * 1024 * 1024))
      .option("--reproducible-fhir", REPRODUCIBLE_FHIR_HELP),
  ).action(async (raw: unknown) => {
    const o = parseOptions(
      StoreSource.extend({
        port: intFlag(0, 65535),
        host: z.string().min(1),
        basePath: z.string().regex(/^\/([A-Za-z0-9._~-]+\/)*$/, "must look like /fhir/"),
        maxBody: intFlag(1, 2 ** 31 - 1),
        reproducibleFhir: z.boolean().default(false),
      }),
      raw,
    );
    const store = await openStore(o);
    let server;
    try {
      server = await startFhirHttpServer({
        service: (baseUrl) => new FhirService(store, { baseUrl, reproducible: o.reproducibleFhir }),
        host: o.host,
        port: o.port,
        basePath: o.basePath,
        maxBodyBytes: o.maxBody,
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EADDRINUSE") throw new UserError(`--port: ${o.port} is already in use on ${o.host}`);
      if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") throw new UserError(`--host: cannot bind to ${JSON.stringify(o.host)}`);
      throw err;
    }
    process.stdout.write(`FHIR server listening at ${server.url}\n`);
    await new Promise<void>((done) => {
      const stop = (): void => {
        process.stderr.write("shutting down\n");
        void server.close().then(done, done);
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
  });

  fhir
    .command("snapshot")
    .description("dump every resource of a live FHIR server to one NDJSON file per type (resumable: re-run to continue)")
    .requiredOption("--from <url>", "FHIR base URL, e.g. http://localhost:8080/fhir/")
    .requiredOption("--out <dir>", "output folder (holds the resume state while running)")
    .option("--types <list>", "comma-separated resource types (default: all types of the server's CapabilityStatement)")
    .option("--count <n>", "page size (_count)", "1000")
    .option("--no-progress", "no progress bar on stderr")
    .action(async (raw: unknown) => {
      const o = parseOptions(
        z.object({
          from: z.url({ protocol: /^https?$/ }),
          out: z.string().min(1),
          types: z
            .string()
            .regex(/^[A-Z][A-Za-z]*(,[A-Z][A-Za-z]*)*$/, "must be a comma-separated list of resource types, e.g. Patient,Observation")
            .transform((s) => s.split(","))
            .optional(),
          count: intFlag(1, 100_000),
          progress: z.boolean(),
        }),
        raw,
      );
      if (existsSync(o.out) && !statSync(o.out).isDirectory()) throw new UserError(`--out: ${JSON.stringify(o.out)} is not a directory`);
      let bar: Meter | undefined;
      try {
        const result = await stoppable((signal) =>
          snapshotFhirServer({
            from: o.from,
            out: o.out,
            types: o.types,
            count: o.count,
            signal,
            onProgress: (p) => {
              if (!o.progress) return;
              bar ??= createMeter({ label: "snapshot", unit: "resources", total: p.total ?? p.written, startAt: p.written - p.writtenThisRun });
              if (p.total === undefined || p.written > p.total) bar.setTotal(p.written);
              bar.update(p.written, p.type);
            },
          }),
        );
        bar?.stop();
        const total = Object.values(result.counts).reduce((a, b) => a + b, 0);
        if (result.interrupted) {
          process.stderr.write(`interrupted after ${total.toLocaleString("en-US")} resources; re-run the same command to resume\n`);
          process.exitCode = 130;
          return;
        }
        process.stderr.write(
          `snapshot of ${o.from} complete${result.resumed ? " (resumed)" : ""}: ${total.toLocaleString("en-US")} resources in ${result.files.length} files under ${o.out}\n`,
        );
      } catch (err) {
        bar?.stop();
        if (err instanceof RemoteFhirError) throw new Error(`snapshot failed: ${err.message} (re-run to resume)`);
        throw err;
      }
    });

  fhir
    .command("import")
    .description("load NDJSON files or Bundles, check them, and write the normalized per-type NDJSON export")
    .argument("<files...>", "NDJSON files (one resource per line) or JSON Bundles")
    .requiredOption("--out <dir>", "output folder for the export")
    .option("--force", "replace a non-empty output folder")
    .action(async (files: string[], raw: Record<string, unknown>) => {
      const o = parseOptions(z.object({ import: z.array(existingFile).min(1), out: z.string().min(1), force: z.boolean().default(false) }), {
        ...raw,
        import: files,
      });
      const store = await openStore({ import: o.import });
      await writeExport(store, o.out, o.force);
    });

  addStoreFlags(
    fhir
      .command("export")
      .description("write a store (from --data, --import or --synthetic) as one NDJSON file per resource type, byte-stable")
      .requiredOption("--out <dir>", "output folder")
      .option("--force", "replace a non-empty output folder"),
  ).action(async (raw: unknown) => {
    const o = parseOptions(StoreSource.extend({ out: z.string().min(1), force: z.boolean().default(false) }), raw);
    if (!o.synthetic && !o.data && !o.import?.length) throw new UserError("export needs --data DIR, --import FILE or --synthetic");
    const store = await openStore(o);
    await writeExport(store, o.out, o.force);
  });
}
