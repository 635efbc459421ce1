// Synthetic EHR bench: generation time, resources/s, resource count and peak RSS of the default
// population, and how they grow at 25/50/100/200 patients. Every measurement runs in a fresh
// child process so that peak RSS is clean.
//   npm run bench -- ehr
//   env: EHR_BENCH_RUNS=3 (default-population runs, median) EHR_BENCH_SIZES=25,50,100,200
//        EHR_BENCH_STORE_SIZES=25,50,100 (growth of generateStore, i.e. including the FHIR store load)
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { median, report } from "./report.ts";

const SELF = fileURLToPath(import.meta.url);
const TARGET_RESOURCES = 785_000;
const list = (name: string, dflt: string) =>
  (process.env[name] ?? dflt)
    .split(",")
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);

type Mode = "generate" | "store";
interface Measured {
  seconds: number;
  resources: number;
  maxRssMB: number;
}

function log(msg: string): void {
  process.stderr.write(`[bench ehr] ${msg}\n`);
}

/** In the child: "generate" = the generator alone into a counting sink; "store" = generateStore. */
async function child(mode: Mode, patients: number): Promise<void> {
  const ehr = await import("../../env/ehr/index.ts");
  const t0 = performance.now();
  let resources: number;
  if (mode === "generate") {
    let n = 0;
    ehr.generateIntoBuilder({ addText: () => void n++ }, { patients });
    resources = n;
  } else {
    resources = ehr.generateStore({ patients }).size;
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ seconds, resources, maxRssMB: process.resourceUsage().maxRSS / 1024 }));
}

function measure(mode: Mode, patients: number): Measured {
  const out = execFileSync(process.execPath, ["--import", "tsx", SELF, "--child", mode, String(patients)], { encoding: "utf8", maxBuffer: 16 << 20 });
  return JSON.parse(out.trim().split("\n").pop()!) as Measured;
}

export async function run(): Promise<void> {
  const runs = list("EHR_BENCH_RUNS", "3")[0] ?? 3;
  const gen: Measured[] = [];
  for (let i = 0; i < runs; i++) {
    gen.push(measure("generate", 100));
    log(`generator run ${i + 1}/${runs}: ${gen.at(-1)!.seconds.toFixed(2)} s`);
  }
  const genSecs = median(gen.map((m) => m.seconds));
  const resources = gen[0]!.resources;
  report({ name: "ehr generate default population (100 patients, generator alone)", value: genSecs, unit: "s", target: "<= 10 s", ok: genSecs <= 10 });
  report({ name: "ehr generate throughput (generator alone)", value: resources / genSecs, unit: "resources/s" });
  const within = Math.abs(resources - TARGET_RESOURCES) <= TARGET_RESOURCES * 0.05;
  report({ name: "ehr default population resource count", value: resources, unit: "resources", target: "785,000 +- 5%", ok: within });
  report({ name: "ehr generate peak RSS (generator alone)", value: median(gen.map((m) => m.maxRssMB)), unit: "MB" });

  const store: Measured[] = [];
  for (let i = 0; i < runs; i++) {
    store.push(measure("store", 100));
    log(`generateStore run ${i + 1}/${runs}: ${store.at(-1)!.seconds.toFixed(2)} s`);
  }
  const storeSecs = median(store.map((m) => m.seconds));
  report({ name: "ehr generateStore default population (generator + FHIR store load)", value: storeSecs, unit: "s", target: "<= 10 s", ok: storeSecs <= 10 });
  report({ name: "ehr generateStore throughput", value: resources / storeSecs, unit: "resources/s" });
  const rss = median(store.map((m) => m.maxRssMB));
  report({ name: "ehr generateStore peak RSS", value: rss, unit: "MB", target: "<= 2,500 MB", ok: rss <= 2500 });

  for (const n of list("EHR_BENCH_SIZES", "25,50,100,200")) {
    const m = measure("generate", n);
    report({ name: `ehr growth ${n} patients (generator alone, ${m.resources.toLocaleString("en-US")} resources)`, value: m.seconds, unit: "s" });
    report({ name: `ehr growth ${n} patients: peak RSS`, value: m.maxRssMB, unit: "MB" });
  }
  for (const n of list("EHR_BENCH_STORE_SIZES", "25,50,100")) {
    const m = measure("store", n);
    report({ name: `ehr growth ${n} patients (generateStore, ${m.resources.toLocaleString("en-US")} resources)`, value: m.seconds, unit: "s" });
    report({ name: `ehr growth ${n} patients (generateStore): peak RSS`, value: m.maxRssMB, unit: "MB" });
  }
}

if (process.argv[1] === SELF && process.argv[2] === "--child") {
  const mode = process.argv[3];
  if (mode !== "generate" && mode !== "store") throw new Error(`unknown child mode ${mode}`);
  await child(mode, Number(process.argv[4]));
} else if (process.argv[1] === SELF) {
  await run();
}
