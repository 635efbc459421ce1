// Rollout bench: the runner's own cost against the stand-in teacher (in its own process, so its CPU
// is not counted), and how close a high-latency endpoint's throughput comes to concurrency / latency.
// Rows are written to an --out file as `ehrgym rollout` writes them (encoding them is the runner's work).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { DEFAULT_API_BASE, EmbeddedBackend, EnvConfig, MedAgentEnv } from "../../env/core/index.ts";
import { generateStore } from "../../env/ehr/index.ts";
import { createFhirService } from "../../env/fhir/index.ts";
import { generateTasks, type Task } from "../../env/tasks/index.ts";
import { createModelPolicy, runEpisodes, type RunItem } from "../../rollout/index.ts";
import { report } from "./report.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** `ehrgym teacher serve` in its own process, with the V8 settings and environment the CLI gives it. */
export async function startTeacher(tasksFile: string, latencyMs: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "scripts/cli.ts", "teacher", "serve", "--port", "0", "--tasks", tasksFile, "--latency-ms", String(latencyMs), "--seed", "1"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout!.on("data", (d) => {
      text += String(d);
      const m = /(http:\/\/[^\s]+\/v1)\b/.exec(text);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (code) => reject(new Error(`teacher serve exited (${code}) before printing its URL`)));
  });
  return { url, child };
}

/** CPU time of another process so far (user + system, ms), from /proc; undefined where there is none. */
function processCpuMs(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks, USER_HZ = 100 on Linux
  } catch {
    return undefined;
  }
}

/** After a full GC: live JS objects, and the resident set. */
function liveMemory(): { heap: number; rss: number } {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

function items(tasks: Task[], n: number): RunItem[] {
  return Array.from({ length: n }, (_, i) => ({ task: tasks[i % tasks.length]!, sample: Math.floor(i / tasks.length) }));
}

export async function run(): Promise<void> {
  const { store } = generateStore({ patients: 20, seed: 1 });
  const tasks = (["mab-v1", "mab-v2"] as const).flatMap((suite) => generateTasks(store, { suite, perType: 10, seed: 1 }));
  const dir = mkdtempSync(join(tmpdir(), "ehrgym-bench-rollout-"));
  const tasksFile = join(dir, "tasks.jsonl");
  writeFileSync(tasksFile, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");
  const config = new EnvConfig({ backend: new EmbeddedBackend(store, createFhirService(store, { baseUrl: DEFAULT_API_BASE }), DEFAULT_API_BASE) });
  const makeEnv = () => new MedAgentEnv(config);

  // 1. Zero latency, concurrency 64: the runner's CPU per model turn and episodes/s.
  {
    const { url, child } = await startTeacher(tasksFile, 0);
    try {
      const policy = createModelPolicy({ model: "ehrgym-stand-in", baseURL: url, apiKey: "x" });
      // Warm-up, then a steady state long enough that JIT and heap growth at the start do not count.
      await runEpisodes({ makeEnv, policy, items: items(tasks, 400), protocol: "text", maxRounds: 8, concurrency: 64, progress: false, out: join(dir, "warm-up.jsonl") });
      const cpu0 = process.cpuUsage();
      const requests0 = policy.stats.requests;
      const t0 = performance.now();
      const { ran } = await runEpisodes({ makeEnv, policy, items: items(tasks, 2400), protocol: "text", maxRounds: 8, concurrency: 64, progress: false, out: join(dir, "zero-latency.jsonl") });
      const secs = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const turns = policy.stats.requests - requests0;
      const perTurnMs = (cpu.user + cpu.system) / 1000 / turns;
      report({ name: "rollout runner CPU per model turn (zero-latency stand-in, concurrency 64, rows written)", value: perTurnMs, unit: "ms", target: "<= 2 ms", ok: perTurnMs <= 2 });
      report({ name: "rollout episodes/s (zero-latency stand-in, concurrency 64)", value: ran.episodes / secs, unit: "episodes/s" });
      report({ name: "rollout model turns/s (same run)", value: turns / secs, unit: "turns/s" });

      // --capture tokens (vLLM's token ids and logprobs in every reply, kept in the rows) against the same
      // run without, interleaved in rounds so the machine's load and the JIT's warmth fall on both alike.
      const capturing = createModelPolicy({ model: "ehrgym-stand-in", baseURL: url, apiKey: "x", capture: "tokens" });
      await runEpisodes({ makeEnv, policy: capturing, items: items(tasks, 400), protocol: "text", maxRounds: 8, concurrency: 64, progress: false, out: join(dir, "tokens-warm-up.jsonl") });
      const cpuPerTurn = async (p: typeof policy, out: string) => {
        const c0 = process.cpuUsage();
        const r0 = p.stats.requests;
        await runEpisodes({ makeEnv, policy: p, items: items(tasks, 800), protocol: "text", maxRounds: 8, concurrency: 64, progress: false, out: join(dir, out) });
        const c = process.cpuUsage(c0);
        return { ms: (c.user + c.system) / 1000, turns: p.stats.requests - r0 };
      };
      const plain = { ms: 0, turns: 0 };
      const withTokens = { ms: 0, turns: 0 };
      for (let round = 0; round < 3; round++) {
        for (const [p, sum, out] of [[policy, plain, "plain"], [capturing, withTokens, "tokens"]] as const) {
          const m = await cpuPerTurn(p, `${out}-${round}.jsonl`);
          sum.ms += m.ms;
          sum.turns += m.turns;
        }
      }
      const plainMs = plain.ms / plain.turns;
      const tokensMs = withTokens.ms / withTokens.turns;
      const ratio = tokensMs / plainMs;
      report({
        name: "rollout runner CPU per model turn with --capture tokens vs without (3 interleaved rounds of 800 episodes each)",
        value: tokensMs,
        unit: "ms",
        target: "<= 1.10x of without",
        ok: ratio <= 1.1,
        peer: { name: "without capture", value: plainMs, ratio },
      });
    } finally {
      child.kill();
    }
  }

  // 2. 1 s per reply, concurrency 256: throughput against the ideal concurrency / latency.
  {
    const latency = 1000;
    const concurrency = 256;
    const { url, child } = await startTeacher(tasksFile, latency);
    try {
      const policy = createModelPolicy({ model: "ehrgym-stand-in", baseURL: url, apiKey: "x" });
      // The stand-in is a fresh process: warm it (its JIT, its caches) before measuring, as part 1 does.
      await runEpisodes({ makeEnv, policy, items: items(tasks, concurrency * 2), protocol: "text", maxRounds: 8, concurrency, progress: false, out: join(dir, "latency-warm-up.jsonl") });
      // At rest: no episode in flight.
      const rest = liveMemory();
      let inFlight: { heap: number; rss: number } | undefined;
      const cpu0 = process.cpuUsage();
      const standIn0 = processCpuMs(child.pid);
      const requests0 = policy.stats.requests;
      // Steady state: from 1 s in until the last keys are handed out (then fewer than `concurrency` stay in flight).
      const total = concurrency * 6;
      const t0 = performance.now();
      let start: { t: number; n: number } | undefined;
      let end: { t: number; n: number } | undefined;
      let done = 0;
      const window = setInterval(() => {
        if (!start && performance.now() - t0 >= 1000) start = { t: performance.now(), n: policy.stats.requests };
      }, 20);
      await runEpisodes({
        makeEnv, policy, items: items(tasks, total), protocol: "text", maxRounds: 8, concurrency, progress: false, out: join(dir, "latency.jsonl"),
        onRow: () => {
          if (++done !== total - concurrency) return;
          end = { t: performance.now(), n: policy.stats.requests };
          // The last keys are handed out: `concurrency` episodes in flight (the GC pause falls after the window).
          inFlight = liveMemory();
        },
      });
      clearInterval(window);
      const cpu = process.cpuUsage(cpu0);
      const standIn1 = processCpuMs(child.pid);
      const requests = policy.stats.requests - requests0;
      if (!start || !end || end.t <= start.t) throw new Error("the run was too short to measure a steady state");
      const turnsPerSec = (end.n - start.n) / ((end.t - start.t) / 1000);
      const ideal = concurrency / (latency / 1000);
      report({
        name: `rollout throughput at ${latency} ms latency, concurrency ${concurrency}`,
        value: turnsPerSec / ideal,
        unit: "x ideal",
        target: ">= 0.9",
        ok: turnsPerSec / ideal >= 0.9,
        peer: { name: "ideal concurrency/latency", value: ideal, ratio: turnsPerSec / ideal, note: `${turnsPerSec.toFixed(0)} turns/s measured` },
      });
      report({ name: `rollout runner CPU per model turn (same run)`, value: (cpu.user + cpu.system) / 1000 / requests, unit: "ms" });
      if (standIn0 !== undefined && standIn1 !== undefined) report({ name: "stand-in CPU per request (same run, same 2 cores)", value: (standIn1 - standIn0) / requests, unit: "ms" });
      if (inFlight !== undefined) {
        const per = (bytes: number) => bytes / concurrency / 1024;
        report({ name: `memory per in-flight episode: live JS heap after a full GC, ${concurrency} in flight vs none, / ${concurrency}`, value: per(inFlight.heap - rest.heap), unit: "KB" });
        report({ name: "memory per in-flight episode: resident set, same moments", value: per(inFlight.rss - rest.rss), unit: "KB" });
      }
    } finally {
      child.kill();
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
