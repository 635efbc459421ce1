// Env core bench: reset (rollback) latency and its independence from episode writes, in-process
// steps/s with expert-like actions, memory per idle open episode, env share of a model call, and a
// naive per-episode deep copy of the store for contrast. EHRGYM_BENCH_PATIENTS (default 100) sizes the population.
import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { EnvConfig, MedAgentEnv } from "../../env/core/index.ts";
import { generateStore } from "../../env/ehr/index.ts";
import type { FhirResource, FhirStore } from "../../env/fhir/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { median, report } from "./report.ts";
import { workflowEpisodeCpuMs } from "./workflows.ts";

const API_BASE = "http://localhost:8080/fhir/";
const PATIENTS = Number(process.env.EHRGYM_BENCH_PATIENTS ?? 100);
const COPY_PATIENTS = 10;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function storeOf(generated: unknown): FhirStore {
  return ((generated as { store?: FhirStore }).store ?? generated) as FhirStore;
}

function patientTasks(store: FhirStore): { tasks: Task[]; turns: Map<string, string[]> } {
  const tasks: Task[] = [];
  const turns = new Map<string, string[]>();
  for (const p of store.search("Patient", "_count=5000").resources) {
    const mrn = p.id!;
    const id = `bench/${mrn}`;
    tasks.push({ id, suite: "mab-v1", type: "task1", instruction: `What is the MRN of ${mrn}?`, context: "It's 2023-11-13T10:15:00+00:00 now", eval_MRN: mrn, sol: [mrn] });
    turns.set(id, [
      `GET ${API_BASE}Patient?identifier=${mrn}`,
      `GET ${API_BASE}Observation?patient=${mrn}&code=K`,
      `GET ${API_BASE}Observation?patient=${mrn}&code=MG&date=ge2023-11-12T10:15:00+00:00`,
      `POST ${API_BASE}MedicationRequest\n${JSON.stringify(medicationRequest(mrn))}`,
      `GET ${API_BASE}Observation?patient=${mrn}&code=A1C&_sort=-date&_count=1`,
      `FINISH(["${mrn}"])`,
    ]);
  }
  return { tasks, turns };
}

function medicationRequest(mrn: string) {
  return {
    resourceType: "MedicationRequest",
    medicationCodeableConcept: { coding: [{ system: "http://hl7.org/fhir/sid/ndc", code: "0338-1715-40", display: "Magnesium sulfate" }], text: "Magnesium sulfate" },
    authoredOn: "2023-11-13T10:15:00+00:00",
    dosageInstruction: [{ route: { text: "IV" }, doseAndRate: [{ doseQuantity: { value: 2, unit: "g" }, rateQuantity: { value: 2, unit: "h" } }] }],
    status: "active",
    intent: "order",
    subject: { reference: `Patient/${mrn}` },
  };
}

const micros = (start: bigint) => Number(process.hrtime.bigint() - start) / 1000;

async function resetLatency(config: EnvConfig, tasks: Task[]): Promise<number> {
  const env = new MedAgentEnv(config);
  const samples: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    const t0 = process.hrtime.bigint();
    await env.reset({ task: tasks[i % tasks.length]! });
    samples.push(micros(t0));
  }
  return median(samples.slice(2000));
}

/** Median time of the reset that ends an episode which made `steps` turns (writes or reads). The reads
 *  peer does the same amount of work without writing, so the ratio isolates what writes cost the rollback
 *  (both are slower than a hot-loop reset: the turns evict the reset path from the CPU caches). */
async function resetAfter(config: EnvConfig, task: Task, turn: string, steps: number, trials: number): Promise<number> {
  const env = new MedAgentEnv(config);
  const samples: number[] = [];
  await env.reset({ task, maxRounds: steps + 1 });
  for (let t = 0; t < trials; t++) {
    for (let w = 0; w < steps; w++) await env.step(turn);
    const t0 = process.hrtime.bigint();
    await env.reset({ task, maxRounds: steps + 1 });
    samples.push(micros(t0));
  }
  return median(samples);
}

async function stepsPerSecond(config: EnvConfig, tasks: Task[], turns: Map<string, string[]>, seconds: number): Promise<number> {
  const env = new MedAgentEnv(config);
  let steps = 0;
  let i = 0;
  const t0 = process.hrtime.bigint();
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const task = tasks[i++ % tasks.length]!;
    await env.reset({ task });
    for (const turn of turns.get(task.id)!) {
      const s = await env.step(turn);
      steps++;
      if (s.terminated || s.truncated) {
        if (s.info.status !== "completed") throw new Error(`bench episode ${task.id} ended with ${s.info.status}`);
        break;
      }
    }
  }
  return steps / (micros(t0) / 1e6);
}

/** The same GET/POST requests straight into the FHIR service (one overlay), FINISH excluded: the floor under env steps/s. */
function serviceOnlyRate(config: EnvConfig, tasks: Task[], turns: Map<string, string[]>): number {
  const backend = config.backend as { store?: FhirStore; service?: { handleSync(req: unknown, overlay?: unknown): unknown } };
  if (!backend.store || !backend.service) return NaN;
  const reqs: { method: "GET" | "POST"; path: string; body?: string }[] = [];
  for (const t of tasks) {
    for (const turn of turns.get(t.id)!) {
      if (turn.startsWith("GET ")) reqs.push({ method: "GET", path: turn.slice(4 + API_BASE.length) + "&_format=json" });
      else if (turn.startsWith("POST ")) {
        const nl = turn.indexOf("\n");
        reqs.push({ method: "POST", path: turn.slice(5 + API_BASE.length, nl), body: turn.slice(nl + 1) });
      }
    }
  }
  const samples: number[] = [];
  for (let r = 0; r < 3; r++) {
    let n = 0;
    let overlay = backend.store.newOverlay();
    const t0 = process.hrtime.bigint();
    const end = Date.now() + 2000;
    while (Date.now() < end) {
      const req = reqs[n++ % reqs.length]!;
      if (n % 5 === 0) overlay = backend.store.newOverlay();
      backend.service.handleSync(req, overlay);
    }
    samples.push(n / (micros(t0) / 1e6));
  }
  return median(samples);
}

async function idleEpisodeBytes(config: EnvConfig, tasks: Task[]): Promise<number> {
  const n = 5000;
  const envs: MedAgentEnv[] = [];
  // Warm up shared structures first so they are not charged to the episodes.
  for (let i = 0; i < 100; i++) await new MedAgentEnv(config).reset({ task: tasks[i % tasks.length]! });
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) {
    const env = new MedAgentEnv(config);
    await env.reset({ task: tasks[i % tasks.length]! });
    envs.push(env);
  }
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  if (envs.length !== n) throw new Error("unreachable");
  return (after - before) / n;
}

function deepCopyMicros(store: FhirStore): { micros: number; resources: number } {
  const all: FhirResource[] = [];
  const types = Object.keys(store.countsByType());
  for (const p of store.search("Patient", "_count=5000").resources) {
    all.push(p);
    for (const type of types) if (type !== "Patient") all.push(...store.byPatient(type, p.id!));
  }
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = process.hrtime.bigint();
    structuredClone(all);
    samples.push(micros(t0));
  }
  return { micros: median(samples), resources: all.length };
}

export async function run(): Promise<void> {
  const t0 = Date.now();
  const store = storeOf(generateStore({ patients: PATIENTS }));
  console.error(`env bench: ${store.size.toLocaleString("en-US")} resources, ${PATIENTS} patients, generated in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const { tasks, turns } = patientTasks(store);
  const config = new EnvConfig({ store, apiBase: API_BASE, tasks });

  const reset = await resetLatency(config, tasks);
  report({ name: "env reset (rollback), median", value: reset, unit: "us", target: "<= 20 us", ok: reset <= 20 });

  const mrn = tasks[0]!.eval_MRN!;
  const post = `POST ${API_BASE}MedicationRequest\n${JSON.stringify(medicationRequest(mrn))}`;
  const read = `GET ${API_BASE}Patient?identifier=${mrn}`;
  const r0 = await resetAfter(config, tasks[0]!, post, 0, 200);
  const rReads = await resetAfter(config, tasks[0]!, read, 1000, 60);
  const rWrites = await resetAfter(config, tasks[0]!, post, 1000, 60);
  report({
    name: "env reset after an episode with 1,000 writes, median",
    value: rWrites,
    unit: "us",
    target: "independent of writes: ratio to the reads-only peer <= 1.5",
    ok: rWrites <= 1.5 * rReads,
    peer: { name: "after 1,000 reads (no writes)", value: rReads, ratio: rWrites / rReads, note: `after an empty episode: ${r0.toFixed(2)} us` },
  });

  const rates: number[] = [];
  for (let i = 0; i < 3; i++) rates.push(await stepsPerSecond(config, tasks, turns, 2));
  const rate = median(rates);
  report({ name: "env steps/s in-process, expert-like actions (GET/POST/FINISH), median of 3", value: rate, unit: "steps/s", target: ">= 20,000", ok: rate >= 20_000 });

  const serviceRate = serviceOnlyRate(config, tasks, turns);
  report({
    name: "FHIR service alone on the same requests (no env), requests/s",
    value: serviceRate,
    unit: "req/s",
    peer: { name: "env steps/s", value: rate, ratio: serviceRate / rate, note: `env overhead ~${Math.max(0, 1e6 / rate - 1e6 / serviceRate).toFixed(1)} us/step` },
  });

  const share = (1e6 / rate / 500_000) * 100;
  report({ name: "env share of a rollout step with a 500 ms model call", value: share, unit: "%", target: "<= 1%", ok: share <= 1 });

  const wf = await workflowEpisodeCpuMs(store, API_BASE);
  report({ name: `env CPU per expert workflows episode (text, median ${wf.calls} calls; grading included)`, value: wf.ms, unit: "ms", target: "<= 10 ms", ok: wf.ms <= 10 });

  const bytes = await idleEpisodeBytes(config, tasks);
  report({ name: "memory per idle open episode", value: bytes / 1024, unit: "KB", target: "<= 16 KB", ok: bytes <= 16 * 1024 });

  const small = storeOf(generateStore({ patients: COPY_PATIENTS }));
  const copy = deepCopyMicros(small);
  report({
    name: `naive per-episode deep copy (structuredClone of a ${COPY_PATIENTS}-patient store, ${copy.resources.toLocaleString("en-US")} resources)`,
    value: copy.micros,
    unit: "us",
    peer: { name: "overlay reset", value: reset, ratio: copy.micros / reset, note: `a ${PATIENTS}-patient store is ~${Math.round(store.size / small.size)}x bigger still` },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
