// `ehrgym ehr generate|stats`: write the synthetic EHR as per-type NDJSON, and describe an export
// (counts per type and code, grading-branch coverage of every task type of both suites).
import { closeSync, existsSync, openSync, readdirSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import {
  DEFAULT_PATIENTS,
  DEFAULT_SEED,
  EhrInputError,
  MAX_PATIENTS,
  generateIntoBuilder,
  readChartsFor,
  readPatientsNdjson,
  type EhrGenerateOptions,
  type GenerateSummary,
  type ResourceSink,
} from "../../env/ehr/index.ts";
import { NdjsonIndexStream, createStoreBuilder, loadNdjson, type FhirReader } from "../../env/fhir/index.ts";
import { BranchError, branchOf, branchesOf, taskTypes, type Suite } from "../../env/tasks/index.ts";
import { existingDir, existingFile, parseOptions } from "./common.ts";
import { exportFiles } from "./fhir.ts";
import { createMeter, type Meter } from "./progress.ts";
import { UserError, writeFolderAtomic } from "../../env/util/index.ts";


const GenerateFlags = z
  .object({
    out: z.string().min(1, "an output directory is required"),
    seed: z.coerce.number().int().min(0).max(2 ** 32 - 1).optional(),
    patients: z.coerce.number().int().min(1).max(MAX_PATIENTS).optional(),
    patientsFrom: existingFile.optional(),
    chartsFor: z.array(existingFile).min(1).optional(),
    progress: z.boolean().default(true),
  })
  .strict();

const StatsFlags = z.object({ data: existingDir, json: z.boolean().default(false) }).strict();

/** NDJSON export layout: one `<Type>.ndjson` per resource type (as `ehrgym fhir export` writes), each with its index sidecar. */
const EXPORT_FILE = /^[A-Z][A-Za-z]+\.ndjson(\.idx)?$/;

/** Buffers lines per type and appends them to `<dir>/<Type>.ndjson` (and to the index stream, if any). */
class NdjsonSink implements ResourceSink {
  private readonly files = new Map<string, { path: string; fd: number; buf: string[]; size: number }>();
  constructor(
    private readonly dir: string,
    private readonly index?: NdjsonIndexStream,
  ) {}

  addText(json: string): void {
    const type = /^\{"resourceType":"([A-Za-z]+)"/.exec(json)?.[1];
    if (!type) throw new Error(`resource text does not start with resourceType: ${json.slice(0, 60)}`);
    let f = this.files.get(type);
    if (!f) {
      const path = join(this.dir, `${type}.ndjson`);
      this.files.set(type, (f = { path, fd: openSync(path, "w"), buf: [], size: 0 }));
    }
    f.buf.push(json, "\n");
    f.size += json.length + 1;
    if (f.size > 1 << 20) this.flush(f);
  }

  private flush(f: { path: string; fd: number; buf: string[]; size: number }): void {
    const text = f.buf.join("");
    writeSync(f.fd, text);
    this.index?.write(f.path, text);
    f.buf = [];
    f.size = 0;
  }

  close(): void {
    for (const f of this.files.values()) {
      this.flush(f);
      closeSync(f.fd);
    }
  }
}

function progressReporter(enabled: boolean): ((done: number, total: number) => void) | undefined {
  if (!enabled) return undefined;
  let meter: Meter | undefined;
  return (done, total) => {
    meter ??= createMeter({ label: "ehr: charts", unit: "patients", total });
    meter.update(done);
    if (done === total) meter.stop();
  };
}

/** Refuse an output dir with content other than a previous export; returns whether it exists. */
function checkOut(target: string, flag = "--out"): boolean {
  if (!existsSync(target)) return false;
  if (!statSync(target).isDirectory()) throw new UserError(`${flag}: ${JSON.stringify(target)} exists and is not a directory`);
  const other = readdirSync(target).filter((f) => !EXPORT_FILE.test(f));
  if (other.length) throw new UserError(`${flag}: ${JSON.stringify(target)} is not empty and holds other files (${other.slice(0, 3).join(", ")}); choose a new or empty directory`);
  return true;
}

export interface GenerateResult {
  summary: GenerateSummary;
  /** Seconds the index sidecars took after the NDJSON was written (the worker indexes while the generator runs). */
  indexSeconds: number;
  /** Files that got no sidecar, with the reason. */
  unindexed: string[];
}

export async function generateToDir(out: string, opts: EhrGenerateOptions): Promise<GenerateResult> {
  const target = resolve(out);
  checkOut(target);
  if (!existsSync(dirname(target))) throw new UserError(`--out: parent directory of ${JSON.stringify(out)} does not exist`);
  // The generator only writes text: a worker thread parses it as it is written, as a load would,
  // and writes the index sidecars, so that loads of this export read those instead.
  const index = await NdjsonIndexStream.start();
  try {
    return await writeFolderAtomic(target, async (tmp) => {
      const sink = new NdjsonSink(tmp, index);
      let summary: GenerateSummary;
      try {
        summary = generateIntoBuilder(sink, opts);
      } finally {
        sink.close();
      }
      const t0 = performance.now();
      const unindexed: string[] = [];
      for (const [file, r] of [...(await index.close())].sort()) if ("skipped" in r) unindexed.push(`${basename(file)}: ${r.skipped}`);
      const indexSeconds = (performance.now() - t0) / 1000;
      return { summary, indexSeconds, unindexed };
    });
  } catch (err) {
    await index.abort();
    if (err instanceof RangeError) throw new UserError(err.message);
    throw err;
  }
}

async function generateCommand(raw: Record<string, unknown>): Promise<void> {
  const o = parseOptions(GenerateFlags, raw);
  if (o.patientsFrom && o.patients !== undefined) throw new UserError("--patients cannot be combined with --patients-from (the file is the population)");
  const opts: EhrGenerateOptions = { seed: o.seed ?? DEFAULT_SEED, onProgress: progressReporter(o.progress) };
  const input = <T>(flag: string, read: () => T): T => {
    try {
      return read();
    } catch (err) {
      throw err instanceof EhrInputError ? new UserError(`${flag}: ${err.message}`) : err;
    }
  };
  if (o.patientsFrom) opts.patientsFrom = input("--patients-from", () => readPatientsNdjson(o.patientsFrom!));
  else opts.patients = o.patients ?? DEFAULT_PATIENTS;
  if (o.chartsFor) {
    const charts = input("--charts-for", () => readChartsFor(o.chartsFor!));
    opts.chartsFor = charts.mrns;
    opts.anchors = charts.anchors;
  }
  const t0 = performance.now();
  const { summary, indexSeconds, unindexed } = await generateToDir(o.out, opts);
  const types = Object.entries(summary.byType)
    .map(([t, n]) => `${t} ${n.toLocaleString("en-US")}`)
    .join(", ");
  const total = (performance.now() - t0) / 1000;
  process.stderr.write(
    `ehr: wrote ${summary.resources.toLocaleString("en-US")} resources (${types}) for ${summary.patients} patients, ${summary.charted.length} charted, seed ${summary.seed}, to ${o.out} in ${total.toFixed(1)} s (index sidecars: ${indexSeconds.toFixed(1)} s after the generator)\n`,
  );
  for (const u of unindexed) process.stderr.write(`ehr: no index sidecar for ${u} (loads parse it)\n`);
}

export interface EhrStats {
  resources: number;
  byType: Record<string, number>;
  /** Per resource type, counts per code (first coding's code). */
  byCode: Record<string, Record<string, number>>;
  charted: number;
  /** suite -> type -> branch -> patients (an "error" entry counts patients the grader cannot grade). */
  coverage: Record<string, Record<string, Record<string, number>>>;
}

function codeOf(resource: Record<string, unknown>): string {
  const med = resource.medicationCodeableConcept as { text?: string } | undefined;
  if (med?.text) return med.text;
  const cc = resource.code as { coding?: { code?: string }[]; text?: string } | undefined;
  return cc?.coding?.[0]?.code ?? cc?.text ?? "(none)";
}

/** Counts and branch coverage of an export (patients with a chart = those with any Observation). */
export async function ehrStats(dir: string): Promise<EhrStats> {
  const builder = createStoreBuilder();
  await loadNdjson(exportFiles(dir), builder, { onWarning: (m) => process.stderr.write(`warning: ${m}\n`) });
  const store = builder.build();
  const byType = store.countsByType();
  const byCode: Record<string, Record<string, number>> = {};
  const patients = readPatientsNdjson(join(dir, "Patient.ndjson")).map((p) => p.id as string);
  const charted: string[] = [];
  for (const mrn of patients) {
    let any = false;
    for (const type of Object.keys(byType)) {
      if (type === "Patient") continue;
      const list = store.byPatient(type, mrn);
      if (list.length) any = true;
      const counts = (byCode[type] ??= {});
      for (const r of list) {
        const code = codeOf(r);
        counts[code] = (counts[code] ?? 0) + 1;
      }
    }
    if (any) charted.push(mrn);
  }
  return { resources: store.size, byType, byCode, charted: charted.length, coverage: coverageOf(store, charted) };
}

export function coverageOf(reader: FhirReader, mrns: string[]): EhrStats["coverage"] {
  const coverage: EhrStats["coverage"] = {};
  for (const suite of ["mab-v1", "mab-v2"] as Suite[]) {
    const bySuite: Record<string, Record<string, number>> = (coverage[suite] = {});
    for (const type of taskTypes(suite)) {
      const counts: Record<string, number> = Object.fromEntries(branchesOf(suite, type).map((b) => [b, 0]));
      for (const mrn of mrns) {
        let branch: string;
        try {
          branch = branchOf(suite, type, reader, mrn);
        } catch (err) {
          if (!(err instanceof BranchError)) throw err;
          branch = "error";
        }
        counts[branch] = (counts[branch] ?? 0) + 1;
      }
      bySuite[type] = counts;
    }
  }
  return coverage;
}

function printStats(s: EhrStats): void {
  const n = (v: number) => v.toLocaleString("en-US");
  console.log(`resources: ${n(s.resources)}`);
  for (const [type, count] of Object.entries(s.byType)) console.log(`  ${type.padEnd(18)} ${n(count).padStart(10)}`);
  for (const [type, codes] of Object.entries(s.byCode)) {
    console.log(`\n${type} by code:`);
    const rows = Object.entries(codes).sort((a, b) => b[1] - a[1]);
    for (const [code, count] of rows) console.log(`  ${code.slice(0, 60).padEnd(60)} ${n(count).padStart(10)}`);
  }
  console.log(`\nbranch coverage over ${s.charted} charted patients (patients per grading branch; * = fewer than 3):`);
  for (const [suite, types] of Object.entries(s.coverage)) {
    for (const [type, branches] of Object.entries(types)) {
      const cells = Object.entries(branches).map(([b, c]) => `${b}=${c}${c < 3 ? "*" : ""}`);
      console.log(`  ${`${suite} ${type}`.padEnd(20)} ${cells.join("  ")}`);
    }
  }
}

export function registerEhr(program: Command): void {
  const ehr = program.command("ehr").description("the synthetic EHR: generate a population, describe an export");
  ehr
    .command("generate")
    .description("generate the synthetic population and write one NDJSON file per resource type into --out")
    .requiredOption("--out <dir>", "output directory (new, empty, or a previous export to replace)")
    .option("--seed <n>", `seed (default ${DEFAULT_SEED})`)
    .option("--patients <n>", `number of generated patients (default ${DEFAULT_PATIENTS})`)
    .option("--patients-from <file>", "Patient NDJSON to use as the population (loaded as-is)")
    .option("--charts-for <files...>", "task files (their eval_MRNs) or MRN lists: who gets a full chart (default: the first 100)")
    .option("--no-progress", "no progress on stderr")
    .action(async (opts: Record<string, unknown>) => generateCommand(opts));
  ehr
    .command("stats")
    .description("counts per resource type and code, and the grading-branch coverage of every task type")
    .requiredOption("--data <dir>", "an export directory (ehrgym ehr generate / fhir export)")
    .option("--json", "print JSON")
    .action(async (opts: Record<string, unknown>) => {
      const o = parseOptions(StatsFlags, opts);
      const stats = await ehrStats(o.data);
      if (o.json) console.log(JSON.stringify(stats, null, 2));
      else printStats(stats);
    });
}
