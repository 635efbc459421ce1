// In-process FHIR store bench: NDJSON load time and peak RSS (child process), search latency on the
// mixed MedAgentBench workload through FhirService.handle, and the same queries against
// @medplum/fhir-router's MemoryRepository on a patient subset (speed ratio + equal result sets).
//   npm run bench -- fhir
//   env: FHIR_BENCH_PATIENTS=100 FHIR_BENCH_QUERIES=20000 FHIR_BENCH_LOAD_RUNS=3 (each: through the
//        index sidecars, and by parsing) FHIR_BENCH_PEER_PATIENTS=10
//        FHIR_BENCH_SCALING=25,50,100,200 (the default; "off" skips it)
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createFhirService,
  createStoreBuilder,
  exportNdjson,
  loadNdjson,
  type FhirRequest,
  type FhirResource,
  type FhirService,
  type FhirStore,
} from "../../env/fhir/index.ts";
import { median, percentile, report } from "./report.ts";
import { Rng } from "../../env/util/index.ts";

const SELF = fileURLToPath(import.meta.url);
const SEED = 1;
const env = (name: string, dflt: number) => (process.env[name] ? Number(process.env[name]) : dflt);

function log(msg: string): void {
  process.stderr.write(`[bench fhir] ${msg}\n`);
}

/** Synthetic population as NDJSON with index sidecars, cached in the temp dir (generator of env/ehr, else a lab-only filler). */
async function dataDir(patients: number): Promise<string> {
  // "-idx": folders cached before exports had index sidecars are not reused.
  const dir = join(tmpdir(), "ehrgym-bench-fhir", `seed${SEED}-p${patients}-idx`);
  if (existsSync(dir)) return dir;
  const builder = createStoreBuilder();
  const t = performance.now();
  let source = "synthetic filler";
  try {
    const ehr = (await import("../../env/ehr/index.ts")) as { generateIntoBuilder?: (b: unknown, o: unknown) => unknown };
    if (typeof ehr.generateIntoBuilder !== "function") throw new Error("no generator");
    log(`generating ${patients} patients with env/ehr ...`);
    ehr.generateIntoBuilder(builder, { seed: SEED, patients, onProgress: (d: number, n: number) => d % 10 === 0 && log(`  ${d}/${n} patients`) });
    source = "env/ehr generator";
  } catch {
    filler(builder, patients);
  }
  const store = builder.build();
  log(`${source}: ${store.size} resources in ${((performance.now() - t) / 1000).toFixed(1)} s; writing NDJSON`);
  const tmp = `${dir}.tmp-${process.pid}`;
  await exportNdjson(store, tmp);
  mkdirSync(join(dir, ".."), { recursive: true });
  renameSync(tmp, dir);
  return dir;
}

/** Lab-only stand-in when env/ehr is absent: MedAgentBench-shaped Observations, ids not chronological. */
function filler(builder: ReturnType<typeof createStoreBuilder>, patients: number): void {
  let id = 100000;
  const codes = ["K", "NA", "GLU", "A1C", "MG", "CREAT", "HGB", "WBC"];
  for (let p = 0; p < patients; p++) {
    const mrn = `S${1000000 + p * 7919}`;
    builder.addText(`{"resourceType":"Patient","id":"${mrn}","identifier":[{"value":"${mrn}"}],"name":[{"family":"Fam${p}","given":["Giv${p}"]}],"gender":"male","birthDate":"1950-01-${String((p % 28) + 1).padStart(2, "0")}"}`);
    for (let k = 0; k < 7000; k++) {
      const code = codes[k % codes.length]!;
      const t = new Date(Date.UTC(2018, 0, 1) + ((k * 7919 + p * 104729) % (5 * 365 * 24 * 60)) * 60_000).toISOString().replace(".000Z", "+00:00");
      builder.addText(`{"resourceType":"Observation","id":"${id++}","status":"final","category":[{"coding":[{"code":"laboratory"}]}],"code":{"coding":[{"system":"http://loinc.org","code":"${code}"}],"text":"${code}"},"subject":{"reference":"Patient/${mrn}"},"effectiveDateTime":"${t}","valueQuantity":{"value":${(k % 50) / 10 + 1}.0,"unit":"mmol/L"}}`);
    }
  }
}

function files(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith(".ndjson")).map((f) => join(dir, f));
}

/** Child-process entry: load the NDJSON folder (through its index sidecars unless `parse`), print seconds and peak RSS as JSON. */
async function loadChild(dir: string, parse: boolean): Promise<void> {
  const t = performance.now();
  const b = createStoreBuilder();
  const warnings: string[] = [];
  await loadNdjson(files(dir), b, { useIndex: !parse, onWarning: (m) => warnings.push(m) });
  if (warnings.length) throw new Error(`index sidecars not used: ${warnings.join("; ")}`);
  const store = b.build();
  const seconds = (performance.now() - t) / 1000;
  const cpu = process.cpuUsage();
  console.log(JSON.stringify({ seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, size: store.size, maxRssBytes: process.resourceUsage().maxRSS * 1024 }));
}

// ---- the workload ----

interface PatientFacts {
  id: string;
  family: string;
  given: string;
  birthDate: string;
  labCodes: string[];
  obsIds: string[];
  dates: string[];
}

function facts(store: FhirStore, limit: number): PatientFacts[] {
  const patients = store.search("Patient", `_count=${Math.min(limit, 5000)}`).resources;
  return patients.map((p) => {
    const name = (p.name as { family?: string; given?: string[] }[] | undefined)?.[0];
    const obs = store.byPatient("Observation", p.id!);
    const codes = new Set<string>();
    const dates: string[] = [];
    for (const o of obs) {
      const c = (o.code as { coding?: { code?: string }[] } | undefined)?.coding?.[0]?.code;
      if (c) codes.add(c);
      if (typeof o.effectiveDateTime === "string") dates.push(o.effectiveDateTime.slice(0, 10));
    }
    return { id: p.id!, family: name?.family ?? "", given: name?.given?.[0] ?? "", birthDate: String(p.birthDate ?? ""), labCodes: [...codes], obsIds: obs.slice(0, 200).map((o) => o.id!), dates };
  });
}

interface Query {
  kind: string;
  req: FhirRequest;
}

function workload(pf: PatientFacts[], n: number, seed: number): Query[] {
  const rng = new Rng(seed, "mulberry32");
  const r = (): number => rng.float();
  const pick = <T>(a: T[]): T => rng.pick(a);
  const out: Query[] = [];
  const usable = pf.filter((p) => p.labCodes.length && p.dates.length);
  for (let i = 0; i < n; i++) {
    const p = pick(usable);
    const code = pick(p.labCodes);
    const day = pick(p.dates);
    const x = r();
    let kind: string;
    let path: string;
    if (x < 0.3) (kind = "patient+code"), (path = `Observation?patient=${p.id}&code=${code}`);
    else if (x < 0.45) (kind = "patient+code+date"), (path = `Observation?patient=${p.id}&code=${code}&date=ge${day}`);
    else if (x < 0.55) (kind = "latest (_sort=-date&_count=1)"), (path = `Observation?patient=${p.id}&code=${code}&_sort=-date&_count=1`);
    else if (x < 0.62) (kind = "vitals by date range"), (path = `Observation?patient=${p.id}&category=vital-signs&date=ge${day}T00:00:00Z&date=le${day}T23:59:59Z`);
    else if (x < 0.67) (kind = "problems"), (path = `Condition?patient=${p.id}&category=problem-list-item`);
    else if (x < 0.72) (kind = "medications"), (path = `MedicationRequest?patient=${p.id}`);
    else if (x < 0.77) (kind = "procedures"), (path = `Procedure?patient=${p.id}&_sort=-date`);
    else if (x < 0.83) (kind = "patient by name+birthdate"), (path = `Patient?family=${encodeURIComponent(p.family)}&given=${encodeURIComponent(p.given)}&birthdate=${p.birthDate}`);
    else if (x < 0.89) (kind = "patient by identifier"), (path = `Patient?identifier=${p.id}`);
    else if (x < 0.95) (kind = "read by id"), (path = `Observation/${pick(p.obsIds)}`);
    else {
      kind = "POST create";
      const body = JSON.stringify({ resourceType: "Observation", status: "final", category: [{ coding: [{ system: "http://hl7.org/fhir/observation-category", code: "vital-signs" }] }], code: { text: "BP" }, subject: { reference: `Patient/${p.id}` }, effectiveDateTime: `${day}T10:15:00+00:00`, valueString: "118/77 mmHg" });
      out.push({ kind, req: { method: "POST", path: "Observation", body } });
      continue;
    }
    out.push({ kind, req: { method: "GET", path } });
  }
  return out;
}

/** Latencies in microseconds of each query through the service, with a fresh overlay every 50 queries. */
function timeService(store: FhirStore, service: FhirService, queries: Query[]): number[] {
  const lat: number[] = [];
  let overlay = store.newOverlay();
  for (let i = 0; i < queries.length; i++) {
    if (i % 50 === 0) overlay = store.newOverlay();
    const q = queries[i]!;
    const t = performance.now();
    const res = service.handleSync(q.req, overlay);
    lat.push((performance.now() - t) * 1000);
    if (res.status >= 300) throw new Error(`${q.req.method} ${q.req.path} -> ${res.status}: ${res.text.slice(0, 300)}`);
  }
  return lat;
}

function storeFrom(resources: FhirResource[]): FhirStore {
  const b = createStoreBuilder();
  for (const r of resources) b.addResource(r);
  return b.build();
}

async function peer(store: FhirStore, pf: PatientFacts[], queries: number): Promise<void> {
  const { MedplumPeer } = await import("./peers/medplum.ts");
  // MemoryRepository scans and re-evaluates every resource per search (about 20 s per Observation
  // search on one synthetic patient's ~9k resources here): keep its share small.
  const n = env("FHIR_BENCH_PEER_PATIENTS", 1);
  const subset = pf.slice(0, n);
  const resources: FhirResource[] = [];
  for (const p of subset) {
    resources.push(store.read("Patient", p.id)!);
    for (const type of ["Observation", "Condition", "MedicationRequest", "Procedure", "ServiceRequest"]) resources.push(...store.byPatient(type, p.id));
  }
  const mine = storeFrom(resources);
  const service = createFhirService(mine);
  const medplum = new MedplumPeer();
  let t = performance.now();
  await medplum.load(resources);
  log(`medplum loaded ${resources.length} resources (${n} patients) in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const qs = workload(facts(mine, n), env("FHIR_BENCH_PEER_QUERIES", 12), 7);
  timeService(mine, service, qs); // render rows once, as on a warm server
  const ehrLat = timeService(mine, service, qs);
  const mpLat: number[] = [];
  let equal = 0;
  let compared = 0;
  const differing = new Map<string, number>();
  for (const [i, q] of qs.entries()) {
    t = performance.now();
    const theirs = await medplum.handle(q.req);
    mpLat.push((performance.now() - t) * 1000);
    log(`  medplum ${i + 1}/${qs.length} ${q.kind}: ${(mpLat[i]! / 1000).toFixed(0)} ms`);
    if (q.req.method !== "GET" || !q.req.path.includes("?")) continue;
    // same result set: every match, with an accurate total (medplum counts only when asked)
    const full = `${q.req.path.replace(/&_count=\d+/, "")}&_count=1000&_total=accurate`;
    const ours = JSON.parse(service.handleSync({ method: "GET", path: full }).text) as { total: number; entry?: { resource: { id: string } }[] };
    const other = await medplum.search(full);
    const a = (ours.entry ?? []).map((e) => e.resource.id);
    const b = other.ids;
    const same = ours.total === other.total && (full.includes("_sort=") ? a.join() === b.join() : [...a].sort().join() === [...b].sort().join());
    compared++;
    if (same) equal++;
    else differing.set(q.kind, (differing.get(q.kind) ?? 0) + 1);
  }
  ehrLat.sort((a, b) => a - b);
  mpLat.sort((a, b) => a - b);
  const ours50 = percentile(ehrLat, 50);
  const theirs50 = percentile(mpLat, 50);
  const note = `same ${qs.length} queries on a ${n}-patient subset (${resources.length} resources); equal result sets ${equal}/${compared}` + (differing.size ? ` (differ: ${[...differing].map(([k, v]) => `${k} ${v}`).join(", ")})` : "");
  report({ name: "search p50 vs medplum MemoryRepository", value: ours50, unit: "us", target: ">= 50x faster", ok: theirs50 / ours50 >= 50, peer: { name: "medplum", value: theirs50, ratio: theirs50 / ours50, note } });
  const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / a.length;
  report({ name: "search mean vs medplum MemoryRepository", value: mean(ehrLat), unit: "us", peer: { name: "medplum", value: mean(mpLat), ratio: mean(mpLat) / mean(ehrLat) } });
}

async function scaling(sizes: number[], queries: number): Promise<void> {
  for (const n of sizes) {
    const dir = await dataDir(n);
    const child = loadRun(dir, false);
    const b = createStoreBuilder();
    await loadNdjson(files(dir), b);
    const store = b.build();
    const service = createFhirService(store);
    const lat = timeService(store, service, workload(facts(store, n), queries, 3)).sort((a, b) => a - b);
    report({ name: `scaling ${n} patients (${child.size.toLocaleString("en-US")} resources): search p50 (first pass, rows rendered on first use)`, value: percentile(lat, 50), unit: "us" });
    report({ name: `scaling ${n} patients: search p99`, value: percentile(lat, 99), unit: "us" });
    report({ name: `scaling ${n} patients: peak RSS after load`, value: child.maxRssBytes / 1e6, unit: "MB" });
  }
}

export async function run(): Promise<void> {
  const patients = env("FHIR_BENCH_PATIENTS", 100);
  const queries = env("FHIR_BENCH_QUERIES", 20000);
  const dir = await dataDir(patients);

  // Load time and peak RSS, each run in a fresh process: through the index sidecars (what a load
  // of an export does), and by parsing every line (files without sidecars).
  const runs: LoadRun[] = [];
  const parsed: LoadRun[] = [];
  for (let i = 0; i < env("FHIR_BENCH_LOAD_RUNS", 3); i++) {
    runs.push(loadRun(dir, false));
    log(`load run ${i + 1}: ${runs[i]!.seconds.toFixed(2)} s`);
    parsed.push(loadRun(dir, true));
    log(`load run ${i + 1} without index: ${parsed[i]!.seconds.toFixed(2)} s`);
  }
  if (runs.length) reportLoad(runs, parsed, patients);
  await runSearches(dir, patients, queries);
}

interface LoadRun {
  seconds: number;
  cpuSeconds: number;
  maxRssBytes: number;
  size: number;
}

function loadRun(dir: string, parse: boolean): LoadRun {
  const out = execFileSync(process.execPath, ["--import", "tsx", SELF, "--load-child", dir, ...(parse ? ["--parse"] : [])], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").pop()!) as LoadRun;
}

function reportLoad(runs: LoadRun[], parsed: LoadRun[], patients: number): void {
  const size = runs[0]!.size;
  const loadS = median(runs.map((r) => r.seconds));
  const parseS = median(parsed.map((r) => r.seconds));
  report({ name: `load ${size.toLocaleString("en-US")} resources from NDJSON export (${patients} patients, index sidecars, median of ${runs.length})`, value: loadS, unit: "s", target: "<= 5 s", ok: loadS <= 5 });
  report({ name: "load CPU time (user+sys, median)", value: median(runs.map((r) => r.cpuSeconds)), unit: "s" });
  report({ name: `load from NDJSON without index (parse path, median of ${parsed.length})`, value: parseS, unit: "s" });
  report({ name: "load CPU time without index (user+sys, median)", value: median(parsed.map((r) => r.cpuSeconds)), unit: "s" });
  const rss = Math.max(...runs.map((r) => r.maxRssBytes)) / 1e9;
  report({ name: "peak RSS with the population loaded", value: rss, unit: "GB", target: "<= 2.5 GB", ok: rss <= 2.5 });
  report({ name: "peak RSS with the population loaded without index (parse path)", value: Math.max(...parsed.map((r) => r.maxRssBytes)) / 1e9, unit: "GB" });
}

async function runSearches(dir: string, patients: number, queries: number): Promise<void> {
  // In-process search latency, mixed workload.
  const b = createStoreBuilder();
  await loadNdjson(files(dir), b);
  const store = b.build();
  const service = createFhirService(store);
  log("collecting workload facts ...");
  const pf = facts(store, patients);
  const qs = workload(pf, queries, 1);
  timeService(store, service, workload(pf, Math.min(2000, queries), 2)); // JIT warm-up, other patients/codes
  // Cold: rows are rendered to reply text the first time a search returns them.
  const cold = timeService(store, service, qs).sort((a, b) => a - b);
  report({ name: "in-process search, first pass (rows rendered on first use): p50", value: percentile(cold, 50), unit: `us, p99 ${(percentile(cold, 99) / 1000).toFixed(2)} ms` });
  // Warm: the same requests again, as a long-running server sees them.
  const lat = timeService(store, service, qs);
  const sorted = [...lat].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  const p99 = percentile(sorted, 99);
  report({ name: `in-process search p50 (mixed workload, ${qs.length} requests via FhirService.handle, second pass)`, value: p50, unit: "us", target: "<= 20 us", ok: p50 <= 20 });
  report({ name: "in-process search p99", value: p99 / 1000, unit: "ms", target: "<= 0.5 ms", ok: p99 <= 500 });
  const byKind = new Map<string, number[]>();
  qs.forEach((q, i) => {
    const l = byKind.get(q.kind);
    if (l) l.push(lat[i]!);
    else byKind.set(q.kind, [lat[i]!]);
  });
  for (const [kind, l] of byKind) {
    l.sort((a, b) => a - b);
    report({ name: `  ${kind}: p50 / p99`, value: percentile(l, 50), unit: `us / ${percentile(l, 99).toFixed(1)} us` });
  }

  await peer(store, pf, queries);

  const scale = process.env.FHIR_BENCH_SCALING ?? "25,50,100,200";
  if (scale && scale !== "off") await scaling(scale.split(",").map(Number), Math.min(queries, 5000));
}

if (process.argv[1] === SELF && process.argv[2] === "--load-child") {
  await loadChild(process.argv[3]!, process.argv[4] === "--parse");
} else if (process.argv[1] === SELF) {
  await run();
}

export function cleanBenchData(): void {
  rmSync(join(tmpdir(), "ehrgym-bench-fhir"), { recursive: true, force: true });
}
