// Reward server over loopback: 1,000 concurrent episodes, each a text-protocol episode of GETs from the
// MedAgentBench query mix and a FINISH, over JSON then MessagePack. The server runs in a child process
// (this file, started with EHRGYM_BENCH_SERVER_CHILD=1) so the load generator does not share its core.
import { spawn, type ChildProcess } from "node:child_process";
import { Client } from "undici";
import WebSocket from "ws";
import { fileURLToPath } from "node:url";
import msgpack from "msgpack-lite";
import { percentile, report } from "./report.ts";

/**
 * V8 settings of the load generator (this process; the server child runs with the product's). It
 * stands in for a thousand trainer workers, which would not share one heap: with the product's small
 * young generation its in-flight state (a request, a think-time timer) was promoted, and its own
 * scavenges and mark-compacts, every ~120 ms and every few seconds, were measured as server latency
 * (paced JSON p99 8-72 ms with them, 5-6 ms without).
 */
export const sectionNodeOptions = ["--max-semi-space-size=64"];

export const CONCURRENCY = Number(process.env.EHRGYM_BENCH_CONCURRENCY ?? 1000);
export const SECONDS = Number(process.env.EHRGYM_BENCH_SECONDS ?? 10);
export const WARMUP_SECONDS = 2;
export const API_BASE = "http://localhost:8080/fhir/";
const CHILD_FLAG = "EHRGYM_BENCH_SERVER_CHILD";

// ---------------------------------------------------------------------------------------------
// Child: the server over the default synthetic population.

export interface Workload {
  tasks: string[];
  /** Per task: the GET turns an agent would issue, then the FINISH. */
  turns: Record<string, string[]>;
}

async function serveChild(): Promise<void> {
  const { EmbeddedBackend, EnvConfig } = await import("../../env/core/index.ts");
  const { generateStore } = await import("../../env/ehr/index.ts");
  const { FhirService } = await import("../../env/fhir/index.ts");
  const { createRewardServer, medAgentBackend } = await import("../../env/server/index.ts");
  const patients = process.env.EHRGYM_BENCH_PATIENTS ? Number(process.env.EHRGYM_BENCH_PATIENTS) : undefined;
  const generated = generateStore(patients ? { patients } : {}) as unknown;
  const store = ((generated as { store?: unknown }).store ?? generated) as import("../../env/fhir/index.ts").FhirStore;
  const tasks: import("../../env/tasks/index.ts").Task[] = [];
  const turns: Record<string, string[]> = {};
  for (const p of store.search("Patient", "_count=1000").resources) {
    const name = (p.name as Array<{ family: string; given: string[] }>)[0]!;
    const mrn = (p.identifier as Array<{ value: string }>)[0]!.value;
    const id = `task1_bench_${p.id}`;
    tasks.push({ id, suite: "mab-v1", type: "task1", instruction: `What's the MRN of the patient with name ${name.given[0]} ${name.family} and DOB of ${p.birthDate}?`, context: "", sol: [mrn] });
    // The MedAgentBench query mix (replies are HAPI pages of at most the default count).
    turns[id] = [
      `GET ${API_BASE}Patient?family=${encodeURIComponent(name.family)}&given=${encodeURIComponent(name.given[0]!)}&birthdate=${p.birthDate}`,
      `GET ${API_BASE}Patient?identifier=${mrn}`,
      `GET ${API_BASE}Observation?patient=${mrn}&code=MG&date=ge2023-11-12T10:15:00+00:00`,
      `GET ${API_BASE}Observation?patient=${mrn}&code=K`,
      `GET ${API_BASE}Observation?patient=${mrn}&code=A1C&_sort=-date&_count=1`,
      `GET ${API_BASE}Condition?patient=${mrn}`,
      `FINISH(["${mrn}"])`,
    ];
  }
  const service = new FhirService(store, { baseUrl: API_BASE });
  const config = new EnvConfig({ backend: new EmbeddedBackend(store, service, API_BASE), tasks });
  const server = createRewardServer({ backend: medAgentBackend(config, tasks), maxEpisodes: CONCURRENCY * 4 });
  const url = await server.listen(0);
  process.send!({ url, workload: { tasks: tasks.map((t) => t.id), turns } satisfies Workload, resources: store.size });
  const { monitorEventLoopDelay } = await import("node:perf_hooks");
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  process.on("message", (m) => {
    if (m === "cpu") process.send!({ cpu: process.cpuUsage() });
    // The soak's samples: after a full GC, what the server still holds.
    if (m === "gc") {
      (globalThis as { gc?: () => void }).gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      process.send!({ memory: { rss, heapUsed } });
    }
    if (m === "loop") {
      process.send!({ loop: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6, over20: 0 } });
      loop.reset();
    }
  });
  process.on("disconnect", () => void server.close().then(() => process.exit(0)));
}

// ---------------------------------------------------------------------------------------------
// Parent: the load generator.

type Format = "json" | "msgpack";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The server's event-loop delay since the last call (how long its loop was held: GC pauses, long tasks). */
function serverLoopDelay(child: ChildProcess): Promise<{ p99: number; max: number }> {
  return new Promise((resolve) => {
    child.once("message", (m) => resolve((m as { loop: { p99: number; max: number } }).loop));
    child.send("loop");
  });
}

function serverCpu(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once("message", (m) => {
      const { user, system } = (m as { cpu: NodeJS.CpuUsage }).cpu;
      resolve((user + system) / 1000);
    });
    child.send("cpu");
  });
}

export function startChild(nodeFlags: string[]): Promise<{ child: ChildProcess; url: string; workload: Workload; resources: number }> {
  return new Promise((resolve, reject) => {
    // EHRGYM_BENCH_PROFILE=DIR writes a V8 CPU profile of the server process there.
    const profile = process.env.EHRGYM_BENCH_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.EHRGYM_BENCH_PROFILE}`] : [];
    const child = spawn(process.execPath, [...nodeFlags, ...profile, "--import", "tsx", fileURLToPath(import.meta.url)], {
      env: { ...process.env, [CHILD_FLAG]: "1" },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    child.once("message", (m) => resolve({ child, ...(m as { url: string; workload: Workload; resources: number }) }));
    child.once("exit", (code) => reject(new Error(`bench server exited with code ${code} before listening`)));
  });
}

export interface Stats {
  steps: number;
  errors: number;
  latencies: number[];
  firstError?: string;
}

/** The reply's small trailing fields (reward, terminated, truncated, info) without parsing the
 *  observation text before them: the load generator should spend its CPU sending, not re-reading. */
function tail(text: string): any {
  const at = text.indexOf('],"reward":'); // the end of the observation list (inside strings, quotes are escaped)
  return JSON.parse(at > 0 && text.startsWith('{"observation":') ? `{${text.slice(at + 2)}` : text);
}

/** Offset just past the MessagePack value at `at` (skips it without decoding its strings). */
function skipMsgpack(b: Buffer, at: number): number {
  const t = b[at]!;
  const items = (n: number, from: number) => {
    for (let i = 0; i < n; i++) from = skipMsgpack(b, from);
    return from;
  };
  if (t <= 0x7f || t >= 0xe0 || (t >= 0xc0 && t <= 0xc3)) return at + 1; // fixint, nil, bool
  if (t >= 0xa0 && t <= 0xbf) return at + 1 + (t & 0x1f); // fixstr
  if (t >= 0x90 && t <= 0x9f) return items(t & 0x0f, at + 1); // fixarray
  if (t >= 0x80 && t <= 0x8f) return items(2 * (t & 0x0f), at + 1); // fixmap
  switch (t) {
    case 0xc4: case 0xd9: return at + 2 + b[at + 1]!; // bin8, str8
    case 0xc5: case 0xda: return at + 3 + b.readUInt16BE(at + 1); // bin16, str16
    case 0xc6: case 0xdb: return at + 5 + b.readUInt32BE(at + 1); // bin32, str32
    case 0xcc: case 0xd0: return at + 2;
    case 0xcd: case 0xd1: return at + 3;
    case 0xca: case 0xce: case 0xd2: return at + 5;
    case 0xcb: case 0xcf: case 0xd3: return at + 9;
    case 0xdc: return items(b.readUInt16BE(at + 1), at + 3);
    case 0xdd: return items(b.readUInt32BE(at + 1), at + 5);
    case 0xde: return items(2 * b.readUInt16BE(at + 1), at + 3);
    case 0xdf: return items(2 * b.readUInt32BE(at + 1), at + 5);
  }
  throw new Error(`bench: unexpected MessagePack type 0x${t.toString(16)}`);
}

const OBSERVATION_KEY = Buffer.from([0xab, ...Buffer.from("observation")]);

/** The MessagePack twin of `tail`: a reply's fields after `observation`, without decoding the observation. */
function msgpackTail(b: Buffer): any {
  const t = b[0]!;
  if (t < 0x81 || t > 0x8f || !b.subarray(1, 1 + OBSERVATION_KEY.length).equals(OBSERVATION_KEY)) return msgpack.decode(b);
  const rest = skipMsgpack(b, 1 + OBSERVATION_KEY.length);
  return msgpack.decode(Buffer.concat([Buffer.from([t - 1]), b.subarray(rest)]));
}

async function call(client: Client, method: "POST" | "DELETE", path: string, body: unknown, format: Format, full = true): Promise<{ status: number; value: any }> {
  const wire = format === "json" ? "application/json" : "application/msgpack";
  const payload = body === undefined ? undefined : format === "json" ? JSON.stringify(body) : msgpack.encode(body);
  const headers: Record<string, string> = { accept: wire };
  if (payload !== undefined) headers["content-type"] = wire;
  const res = await client.request({ method, path, headers, body: payload });
  const type = String(res.headers["content-type"] ?? "");
  const value = type.startsWith("application/msgpack")
    ? (full ? msgpack.decode : msgpackTail)(Buffer.from(await res.body.arrayBuffer()))
    : full
      ? await res.body.json()
      : tail(await res.body.text());
  return { status: res.statusCode, value };
}

/** Runs CONCURRENCY episode loops for `settle` + `seconds`; only steps that start after the settling
 *  second count. `thinkMs` > 0 paces each loop like a trainer waiting on its model between steps
 *  (uniform jitter in [0.5, 1.5] x thinkMs, staggered starts); 0 is a closed loop. */
export async function load(url: string, workload: Workload, format: Format, seconds: number, thinkMs: number, settle = 1): Promise<Stats & { elapsed: number }> {
  // undici: a far lighter client than node:http, so the shared 2 cores go to the server under test.
  // One connection per episode loop, as a trainer's rollout workers would hold (a Pool of 1,000 also
  // scans its connections for a free one on every request).
  const clients = Array.from({ length: CONCURRENCY }, () => new Client(url, { pipelining: 1 }));
  const stats: Stats = { steps: 0, errors: 0, latencies: [] };
  const measureFrom = performance.now() + settle * 1000;
  const deadline = measureFrom + seconds * 1000;
  const fail = (what: string) => {
    stats.errors++;
    stats.firstError ??= what;
  };
  const worker = async (w: number) => {
    const client = clients[w]!;
    let n = w;
    if (thinkMs > 0) await sleep(Math.random() * thinkMs);
    while (performance.now() < deadline) {
      const taskId = workload.tasks[n++ % workload.tasks.length]!;
      try {
        const created = await call(client, "POST", "/v1/episodes", { task_id: taskId }, format);
        if (created.status !== 201) {
          fail(`create ${created.status}: ${JSON.stringify(created.value)}`);
          continue;
        }
        const id = created.value.episode_id as string;
        for (const turn of workload.turns[taskId]!) {
          if (thinkMs > 0) await sleep(thinkMs * (0.5 + Math.random()));
          if (performance.now() >= deadline) break;
          const t0 = performance.now();
          const r = await call(client, "POST", `/v1/episodes/${id}/step`, { action: turn }, format, false);
          const counted = t0 >= measureFrom;
          if (counted) stats.latencies.push(performance.now() - t0);
          if (r.status !== 200 || r.value.info?.status === "error") fail(`step ${r.status}: ${JSON.stringify(r.value).slice(0, 200)}`);
          else if (counted) stats.steps++;
          if (r.value.terminated || r.value.truncated) break;
        }
        const d = await call(client, "DELETE", `/v1/episodes/${id}`, undefined, format);
        if (d.status !== 200) fail(`delete ${d.status}`);
      } catch (err) {
        fail((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => worker(i)));
  const elapsed = (deadline - measureFrom) / 1000;
  await Promise.all(clients.map((c) => c.destroy()));
  return { ...stats, elapsed };
}

/** Cumulative counts of the server's step-route latency histogram (from /metrics), by bucket bound. */
async function stepHistogram(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out = new Map<string, number>();
  const re = /^ehrgym_http_request_duration_seconds_bucket\{route="POST \/v1\/episodes\/:id\/step",le="([^"]+)"\} (\d+)$/gm;
  for (const m of text.matchAll(re)) out.set(m[1]!, Number(m[2]));
  return out;
}

/** The bucket bound under which 99% of the steps between two snapshots fell, as the server timed them. */
function serverP99(before: Map<string, number>, after: Map<string, number>): string {
  const total = (after.get("+Inf") ?? 0) - (before.get("+Inf") ?? 0);
  for (const [le, n] of after) if (n - (before.get(le) ?? 0) >= 0.99 * total) return le === "+Inf" ? "> 2.5 s" : `<= ${Number(le) * 1000} ms`;
  return "n/a";
}

const targetRate = 3000;

/** Paced load: CONCURRENCY episodes, each stepping every ~CONCURRENCY/targetRate s; its step latencies and p99. */
export async function paced(child: ChildProcess, url: string, workload: Workload, format: Format, label: string, target: boolean): Promise<Stats> {
  const thinkMs = (CONCURRENCY / targetRate) * 1000;
  const pacedCpu0 = await serverCpu(child);
  const clientCpu0 = process.cpuUsage();
  const histogram0 = await stepHistogram(url);
  await serverLoopDelay(child);
  const run = await load(url, workload, format, SECONDS, thinkMs);
  const loop = await serverLoopDelay(child);
  const histogram1 = await stepHistogram(url);
  const pacedServerShare = ((await serverCpu(child)) - pacedCpu0) / (run.elapsed * 1000);
  const clientCpu = process.cpuUsage(clientCpu0);
  const clientShare = (clientCpu.user + clientCpu.system) / 1000 / (run.elapsed * 1000);
  const sorted = run.latencies.sort((a, b) => a - b);
  const p99 = percentile(sorted, 99);
  report({ name: `reward server steps/s, ${format}, ${CONCURRENCY} concurrent episodes paced at ${targetRate.toLocaleString("en-US")}/s offered, ${label}`, value: run.steps / run.elapsed, unit: "steps/s" });
  report({ name: `reward server step p50, ${format}, paced, ${label}`, value: percentile(sorted, 50), unit: "ms" });
  report({ name: `reward server step p99, ${format}, paced, ${label}`, value: p99, unit: "ms", ...(target ? { target: "<= 20", ok: p99 <= 20 } : {}) });
  console.log(`  paced: server-side step p99 ${serverP99(histogram0, histogram1)} (request in to reply out, as the server times it)`);
  console.log(`  paced: server event-loop delay p99 ${loop.p99.toFixed(1)} ms, max ${loop.max.toFixed(1)} ms (how long the server's loop was held: GC pauses, long tasks)`);
  console.log(`  paced: server CPU ${(pacedServerShare * 100).toFixed(0)}%, load generator CPU ${(clientShare * 100).toFixed(0)}% of a core`);
  return run;
}

// ---------------------------------------------------------------------------------------------
// /ws beside /v1: the same episodes, the same server, `clients` closed loops each; then the soak.

type Transport = "v1" | "ws";

/** The server's RSS and heap in use after a full GC (the child runs with --expose-gc for this). */
function serverMemoryAfterGc(child: ChildProcess): Promise<{ rss: number; heapUsed: number }> {
  return new Promise((resolve) => {
    child.once("message", (m) => resolve((m as { memory: { rss: number; heapUsed: number } }).memory));
    child.send("gc");
  });
}

/** `tail` for a /ws reply: {type, data: {reward, done}} without parsing the observation before them. */
function wsTail(text: string): any {
  const at = text.lastIndexOf('},"reward":');
  if (!text.startsWith('{"type":"observation"') || at < 0) return JSON.parse(text);
  return { type: "observation", data: JSON.parse(`{${text.slice(at + 2, -1)}`) };
}

/** One OpenEnv /ws session of the `ws` client (which, like the server, sets TCP_NODELAY); `ask` sends a message and resolves with its reply. */
async function wsSession(url: string): Promise<{ ask: (msg: unknown) => Promise<any>; close: () => void }> {
  const ws = new WebSocket(`${url.replace("http://", "ws://")}/ws`, { perMessageDeflate: false });
  let waiting: ((v: any) => void) | undefined;
  ws.on("message", (data: Buffer) => {
    const w = waiting;
    waiting = undefined;
    w?.(wsTail(data.toString()));
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return {
    ask: (msg) => new Promise((resolve) => ((waiting = resolve), ws.send(JSON.stringify(msg)))),
    close: () => ws.close(),
  };
}

/**
 * `clients` closed loops, each playing whole episodes over one connection until `steps` steps are
 * counted (or `seconds` passed); step latencies of every counted step. `every.run` is called each `every.steps` steps.
 */
async function transportLoad(url: string, workload: Workload, transport: Transport, clients: number, limit: { seconds?: number; steps?: number }, every?: { steps: number; run: (n: number) => Promise<void> }): Promise<Stats & { elapsed: number }> {
  const stats: Stats = { steps: 0, errors: 0, latencies: [] };
  const fail = (what: string) => {
    stats.errors++;
    stats.firstError ??= what;
  };
  const started = performance.now();
  const deadline = limit.seconds ? started + limit.seconds * 1000 : Infinity;
  const more = () => performance.now() < deadline && (limit.steps === undefined || stats.steps < limit.steps);
  let nextReport = every?.steps ?? Infinity;
  const counted = async (ms: number) => {
    stats.steps++;
    if (limit.steps === undefined) stats.latencies.push(ms);
    if (every && stats.steps >= nextReport) {
      nextReport += every.steps;
      await every.run(stats.steps);
    }
  };
  const v1Worker = async (w: number) => {
    const client = new Client(url, { pipelining: 1 });
    let n = w;
    try {
      while (more()) {
        const taskId = workload.tasks[n++ % workload.tasks.length]!;
        const created = await call(client, "POST", "/v1/episodes", { task_id: taskId }, "json");
        if (created.status !== 201) {
          fail(`create ${created.status}`);
          continue;
        }
        const id = created.value.episode_id as string;
        for (const turn of workload.turns[taskId]!) {
          const t0 = performance.now();
          const r = await call(client, "POST", `/v1/episodes/${id}/step`, { action: turn }, "json", false);
          if (r.status !== 200) fail(`step ${r.status}`);
          else await counted(performance.now() - t0);
          if (r.value.terminated || r.value.truncated || !more()) break;
        }
        await call(client, "DELETE", `/v1/episodes/${id}`, undefined, "json");
      }
    } finally {
      await client.destroy();
    }
  };
  const wsWorker = async (w: number) => {
    const session = await wsSession(url);
    let n = w;
    try {
      while (more()) {
        // A reset replaces the session's episode (the server deletes the one before).
        const taskId = workload.tasks[n++ % workload.tasks.length]!;
        const opened = await session.ask({ type: "reset", data: { task_id: taskId } });
        if (opened.type !== "observation") {
          fail(`reset ${JSON.stringify(opened).slice(0, 200)}`);
          continue;
        }
        for (const turn of workload.turns[taskId]!) {
          const t0 = performance.now();
          const r = await session.ask({ type: "step", data: { content: turn } });
          if (r.type !== "observation") fail(`step ${JSON.stringify(r).slice(0, 200)}`);
          else await counted(performance.now() - t0);
          if (r.data?.done || !more()) break;
        }
      }
    } finally {
      session.close();
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, i) => (transport === "ws" ? wsWorker : v1Worker)(i)));
  return { ...stats, elapsed: (performance.now() - started) / 1000 };
}

const WS_CLIENTS = [1, 8, 64];
const WS_SECONDS = Number(process.env.EHRGYM_BENCH_WS_SECONDS ?? 6);
const SOAK_STEPS = Number(process.env.EHRGYM_BENCH_SOAK_STEPS ?? 200_000);

/** /ws step latency beside /v1's at 1, 8 and 64 clients (each pair back to back, /v1 first then /ws, then the reverse order). */
async function wsBesideV1(url: string, workload: Workload): Promise<void> {
  console.log(`/ws beside /v1: closed loops of whole episodes, JSON, ${WS_SECONDS} s per transport and client count, measured in both orders`);
  await transportLoad(url, workload, "ws", 8, { seconds: WARMUP_SECONDS });
  for (const clients of WS_CLIENTS) {
    const runs: Record<Transport, (Stats & { elapsed: number })[]> = { v1: [], ws: [] };
    for (const order of [["v1", "ws"], ["ws", "v1"]] as const) {
      for (const transport of order) runs[transport].push(await transportLoad(url, workload, transport, clients, { seconds: WS_SECONDS / 2 }));
    }
    const merged = (t: Transport) => {
      const latencies = runs[t].flatMap((r) => r.latencies).sort((a, b) => a - b);
      const steps = runs[t].reduce((a, r) => a + r.steps, 0);
      const elapsed = runs[t].reduce((a, r) => a + r.elapsed, 0);
      const errors = runs[t].reduce((a, r) => a + r.errors, 0);
      return { latencies, rate: steps / elapsed, errors, firstError: runs[t].find((r) => r.firstError)?.firstError };
    };
    const v1 = merged("v1");
    const ws = merged("ws");
    const v1p99 = percentile(v1.latencies, 99);
    const wsp99 = percentile(ws.latencies, 99);
    const ratio = wsp99 / v1p99;
    report({ name: `reward server /ws step p99, ${clients} client${clients > 1 ? "s" : ""}`, value: wsp99, unit: "ms", target: "<= 2x /v1", ok: ratio <= 2, peer: { name: "/v1", value: v1p99, ratio } });
    report({ name: `reward server /ws step p50, ${clients} client${clients > 1 ? "s" : ""}`, value: percentile(ws.latencies, 50), unit: "ms", peer: { name: "/v1", value: percentile(v1.latencies, 50), ratio: percentile(ws.latencies, 50) / percentile(v1.latencies, 50) } });
    report({ name: `reward server /ws steps/s, ${clients} client${clients > 1 ? "s" : ""}`, value: ws.rate, unit: "steps/s", peer: { name: "/v1", value: v1.rate, ratio: ws.rate / v1.rate } });
    const errors = v1.errors + ws.errors;
    if (errors) console.log(`  errors: ${errors}; first: ${v1.firstError ?? ws.firstError}`);
  }
}

/**
 * SOAK_STEPS steps over many short episodes (64 /ws sessions, each resetting to a new episode after
 * its ~7 steps). Every 20,000 steps the server runs a full GC and reports its RSS and heap in use:
 * what it still holds, not the garbage a mark-compact has yet to take. A leak shows as the heap
 * growing from sample to sample, and as the RSS after the soak above its plateau (the second half's samples).
 */
async function soak(child: ChildProcess, url: string, workload: Workload): Promise<void> {
  const samples: { steps: number; rss: number; heapUsed: number }[] = [];
  const t0 = performance.now();
  const run = await transportLoad(url, workload, "ws", 64, { steps: SOAK_STEPS }, {
    steps: 20_000,
    run: async (steps) => void samples.push({ steps, ...(await serverMemoryAfterGc(child)) }),
  });
  const seconds = (performance.now() - t0) / 1000;
  await sleep(500);
  const after = await serverMemoryAfterGc(child);
  const mb = (b: number) => b / 1024 / 1024;
  // The first samples still carry what the 1,000-episode phases before left (V8 returns pages slowly).
  const secondHalf = samples.slice(Math.floor(samples.length / 2)).map((s) => s.rss).sort((a, b) => a - b);
  const plateau = percentile(secondHalf, 50);
  const first = samples[0]!;
  report({ name: `reward server soak RSS plateau (after a full GC, median of the samples from ${(SOAK_STEPS / 2).toLocaleString("en-US")} steps on)`, value: mb(plateau), unit: "MB" });
  report({ name: `reward server soak RSS after ${run.steps.toLocaleString("en-US")} /ws steps (after a full GC) over its plateau`, value: ((after.rss - plateau) / plateau) * 100, unit: "%", target: "<= 5: back to its plateau", ok: after.rss <= plateau * 1.05 });
  report({ name: `reward server soak heap in use after the soak over the first sample (${first.steps.toLocaleString("en-US")} steps in)`, value: ((after.heapUsed - first.heapUsed) / first.heapUsed) * 100, unit: "%", target: "<= 5", ok: after.heapUsed <= first.heapUsed * 1.05 });
  report({ name: "reward server soak errors", value: run.errors, unit: "errors", target: "0", ok: run.errors === 0 });
}

/**
 * One server with Node's defaults, as `ehrgym serve` runs: for each format in turn (MessagePack
 * after JSON, on a server that has carried load for ~25 s) capacity, CPU per step, then paced latency
 * against the p99 target. EHRGYM_BENCH_NODE_FLAGS="..." gives the server child V8 flags (--trace-gc).
 */
export async function run(): Promise<void> {
  const flags = (process.env.EHRGYM_BENCH_NODE_FLAGS ?? "").split(/\s+/).filter(Boolean);
  const label = flags.length ? flags.join(" ") : "Node defaults";
  const t0 = performance.now();
  // --expose-gc lets the soak ask for a full GC between its samples; V8 collects as it would without it.
  const { child, url, workload, resources } = await startChild([...flags, "--expose-gc"]);
  console.log(`server (${label}) ready over ${resources.toLocaleString("en-US")} resources in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${CONCURRENCY} concurrent episodes, ${SECONDS} s per phase`);
  try {
    for (const format of ["json", "msgpack"] as const) {
      await load(url, workload, format, WARMUP_SECONDS, 0, 0);
      const cpu0 = await serverCpu(child);
      const closed = await load(url, workload, format, SECONDS, 0);
      const cpuShare = ((await serverCpu(child)) - cpu0) / (closed.elapsed * 1000);
      const rate = closed.steps / closed.elapsed;
      const closedSorted = closed.latencies.sort((a, b) => a - b);
      report({
        name: `reward server capacity, ${format}, ${CONCURRENCY} concurrent episodes, closed loop`,
        value: rate,
        unit: "steps/s",
        ...(format === "json" ? { target: `>= ${targetRate.toLocaleString("en-US")}`, ok: rate >= targetRate } : {}),
      });
      // CPU time per step is robust to other load on a shared machine (wall-clock rates are not).
      const cpuPerStepUs = (cpuShare * closed.elapsed * 1e6) / Math.max(1, closed.steps);
      report({ name: `reward server CPU per step (incl. create/delete), ${format}`, value: cpuPerStepUs, unit: "us" });
      console.log(`  => ${Math.round(1e6 / cpuPerStepUs).toLocaleString("en-US")} steps/s per fully available core`);
      console.log(`  closed loop: step p50 ${percentile(closedSorted, 50).toFixed(1)} ms, p99 ${percentile(closedSorted, 99).toFixed(1)} ms (queueing: latency = episodes / rate), server CPU ${(cpuShare * 100).toFixed(0)}% of a core`);
      const p = await paced(child, url, workload, format, label, true);
      const errors = closed.errors + p.errors;
      report({ name: `reward server errors, ${format}`, value: errors, unit: "errors", target: "0", ok: errors === 0 });
      const firstError = closed.firstError ?? p.firstError;
      if (firstError) console.log(`  first error: ${firstError}`);
    }
    await wsBesideV1(url, workload);
    await soak(child, url, workload);
  } finally {
    if (child.connected) child.disconnect();
    if (child.exitCode === null) await new Promise((r) => child.once("exit", r));
  }
}

if (process.env[CHILD_FLAG] === "1" && process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  serveChild().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
