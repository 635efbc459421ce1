// `npm run bench -- scale`: steps/s and p99 step latency at 1,000 concurrent episodes through the
// nginx of deploy/nginx with 1, 2 and 3 `ehrgym serve` replicas, beside a direct connection to one
// replica in the same run, and what the proxy adds. On a 2-core machine the replicas, nginx and this
// load generator share the cores: the figures show what the proxy costs, not a scaling curve.
// EHRGYM_BENCH_SCALE_EPISODES / EHRGYM_BENCH_SCALE_SECONDS shorten a check run.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { report } from "./report.ts";

const PROJECT_ROOT = fileURLToPath(new URL("../..", import.meta.url));

const EPISODES = Number(process.env.EHRGYM_BENCH_SCALE_EPISODES ?? 1000);
const SECONDS = Number(process.env.EHRGYM_BENCH_SCALE_SECONDS ?? 10);
const SERVE = ["--patients", "20", "--per-type", "2", "--seed", "7", "--max-episodes", "8192"];
const PROBE = "GET http://localhost:8080/fhir/Patient?name=Smith";

function startReplica(id: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, "bin", "ehrgym.js"), "serve", "--port", "0", "--replica-id", id, ...SERVE], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", (line) => resolve({ child, url: (JSON.parse(line) as { url: string }).url }));
    child.once("exit", (code) => reject(new Error(`replica ${id} exited with ${code}`)));
  });
}

function startNginx(replicas: string[], port: number): { child: ChildProcess; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "ehrgym-bench-nginx-"));
  const conf = readFileSync(join(PROJECT_ROOT, "deploy", "nginx", "ehrgym.conf"), "utf8");
  const opts = /server 127\.0\.0\.1:\d+ (.*);/.exec(conf)![1];
  const servers = replicas.map((u) => `    server ${u.replace("http://", "")} ${opts};\n`).join("");
  writeFileSync(join(dir, "ehrgym.conf"), conf.replace(/^ *server 127\.0\.0\.1:\d+ .*;\n/gm, "").replace("    keepalive 64;", `${servers}    keepalive 64;`).replace("listen 8000;", `listen 127.0.0.1:${port};`));
  const main = readFileSync(join(PROJECT_ROOT, "deploy", "nginx", "nginx.conf"), "utf8");
  writeFileSync(join(dir, "nginx.conf"), (process.getuid?.() === 0 ? "user root;\n" : "") + main);
  const child = spawn("nginx", ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], { stdio: ["ignore", "ignore", "inherit"] });
  return { child, dir };
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} did not answer /healthz`);
}

interface Result {
  steps: number;
  errors: number;
  seconds: number;
  p50: number;
  p99: number;
}

/** EPISODES loops, each: open an episode under its own id, step it until it ends, delete it; again. */
async function load(url: string, taskIds: string[], duration = SECONDS): Promise<Result> {
  const dispatcher = new Agent({ connections: 256, pipelining: 1, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  let errors = 0;
  let steps = 0;
  const until = performance.now() + duration * 1000;
  const call = async (method: "POST" | "DELETE", path: string, id: string, body?: unknown) => {
    const res = await request(url + path, {
      method,
      dispatcher,
      headers: { "content-type": "application/json", "x-episode-id": id },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 120)}`);
    return text;
  };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: EPISODES }, async (_, w) => {
      for (let n = 0; performance.now() < until; n++) {
        const id = `bench-${w}-${n}`;
        try {
          await call("POST", "/v1/episodes", id, { task_id: taskIds[(w + n) % taskIds.length], episode_id: id, max_rounds: 4 });
          for (let s = 0; s < 3 && performance.now() < until; s++) {
            const t = performance.now();
            await call("POST", `/v1/episodes/${id}/step`, id, { action: s < 2 ? PROBE : "FINISH([])" });
            latencies.push(performance.now() - t);
            steps++;
          }
          await call("DELETE", `/v1/episodes/${id}`, id);
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await dispatcher.close();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { steps, errors, seconds, p50: q(0.5), p99: q(0.99) };
}

export async function run(): Promise<void> {
  if (spawnSync("nginx", ["-v"]).status !== 0) throw new Error("nginx is not installed (apt-get install nginx-light)");
  const replicas = await Promise.all(["r1", "r2", "r3"].map(startReplica));
  const nginxes: { child: ChildProcess; dir: string }[] = [];
  try {
    const tasks = (await (await fetch(`${replicas[0]!.url}/v1/tasks`)).json()) as { tasks: { id: string }[] };
    const taskIds = tasks.tasks.map((t) => t.id);
    // Warm every replica (JIT, heap) before anything is measured.
    for (const r of replicas) await load(r.url, taskIds, 3);
    const rows: [string, Result][] = [["direct, 1 replica", await load(replicas[0]!.url, taskIds)]];
    for (const n of [1, 2, 3]) {
      const port = 20_000 + Math.floor(Math.random() * 20_000);
      const proxy = startNginx(replicas.slice(0, n).map((r) => r.url), port);
      nginxes.push(proxy);
      const url = `http://127.0.0.1:${port}`;
      await waitFor(url);
      rows.push([`nginx, ${n} replica${n > 1 ? "s" : ""}`, await load(url, taskIds)]);
    }
    console.log(`${EPISODES} concurrent episodes, closed loop, ${SECONDS} s per path; ~3 steps per episode (2 FHIR searches, FINISH)`);
    const direct = rows[0]![1];
    const rate = (r: Result) => r.steps / r.seconds;
    report({ name: `scale: steps/s, direct to 1 replica, ${EPISODES} concurrent episodes`, value: rate(direct), unit: "steps/s" });
    report({ name: "scale: step p99, direct to 1 replica", value: direct.p99, unit: "ms" });
    for (const [name, r] of rows.slice(1)) {
      report({ name: `scale: steps/s, ${name}`, value: rate(r), unit: "steps/s", peer: { name: "direct", value: rate(direct), ratio: rate(r) / rate(direct) } });
      report({ name: `scale: step p99, ${name}`, value: r.p99, unit: "ms", peer: { name: "direct", value: direct.p99, ratio: r.p99 / direct.p99 } });
    }
    const one = rows[1]![1];
    report({ name: "scale: latency the proxy adds, 1 replica, same load, p50", value: one.p50 - direct.p50, unit: "ms" });
    report({ name: "scale: latency the proxy adds, 1 replica, same load, p99", value: one.p99 - direct.p99, unit: "ms" });
    const errors = rows.reduce((n, [, r]) => n + r.errors, 0);
    report({ name: "scale: errors, all paths", value: errors, unit: "errors", target: "0", ok: errors === 0 });
    console.log("  2-core caveat: replicas, nginx and this load generator share 2 cores, so more replicas cannot add throughput here; read the rows as the proxy's cost, not a scaling curve.");
  } finally {
    for (const p of nginxes) {
      const exited = new Promise((r) => p.child.once("exit", r));
      p.child.kill("SIGQUIT");
      await exited;
      rmSync(p.dir, { recursive: true, force: true });
    }
    for (const r of replicas) r.child.kill("SIGTERM");
  }
}
