// Reward server over loopback: the paced step p99 of ordinary episodes (the server section's query
// mix, JSON) with N worst-case FHIR searches in flight beside none, on one server (Node's defaults, as
// `ehrgym serve` runs). Each slow episode steps searches no index narrows (`value-quantity`, `:not`,
// `_sort` by value) back to back; each reads up to the 50,000-resource budget in slices, then is
// refused too-costly. EHRGYM_BENCH_SLOW_SEARCHES=N (default 4, the "four at once"), and the
// server section's EHRGYM_BENCH_CONCURRENCY / EHRGYM_BENCH_SECONDS / EHRGYM_BENCH_PATIENTS.
import { percentile, report } from "./report.ts";
import { API_BASE, CONCURRENCY, load, paced, SECONDS, startChild, WARMUP_SECONDS } from "./server.ts";

export { sectionNodeOptions } from "./server.ts";

const SLOW = Number(process.env.EHRGYM_BENCH_SLOW_SEARCHES ?? 4);
const WORST = ["Observation?value-quantity=lt5", "Observation?status:not=final", "Observation?code:not=x&_sort=value-quantity", "Observation?value-quantity=gt1000"];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function post(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const value = await res.json();
  if (!res.ok) throw new Error(`${res.status} ${JSON.stringify(value).slice(0, 200)}`);
  return value;
}

/** `n` loops stepping worst-case searches in their own episodes until `stop()`; each search's wall time. */
function slowSearches(url: string, taskId: string, n: number): { stop: () => Promise<number[]> } {
  let running = true;
  const times: number[] = [];
  const loop = async (k: number) => {
    for (let q = k; running; ) {
      const { episode_id } = await post(`${url}/v1/episodes`, { task_id: taskId });
      for (let ended = false; running && !ended; q++) {
        const t0 = performance.now();
        const r = await post(`${url}/v1/episodes/${episode_id}/step`, { action: `GET ${API_BASE}${WORST[q % WORST.length]}` });
        times.push(performance.now() - t0);
        ended = r.terminated || r.truncated;
      }
      await fetch(`${url}/v1/episodes/${episode_id}`, { method: "DELETE" });
    }
  };
  const loops = Array.from({ length: n }, (_, k) => loop(k));
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return times;
    },
  };
}

/** /healthz latencies, probed every 100 ms until `stop()` (as a liveness probe would). */
function probeHealth(url: string): { stop: () => Promise<number[]> } {
  let running = true;
  const times: number[] = [];
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
      times.push(performance.now() - t0);
      await sleep(100);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return times;
    },
  };
}

export async function run(): Promise<void> {
  const t0 = performance.now();
  const { child, url, workload, resources } = await startChild([]);
  console.log(
    `server ready over ${resources.toLocaleString("en-US")} resources in ${((performance.now() - t0) / 1000).toFixed(1)} s; ` +
      `${CONCURRENCY} concurrent episodes paced, ${SECONDS} s per phase, then ${SLOW} worst-case searches in flight`,
  );
  try {
    await load(url, workload, "json", WARMUP_SECONDS, 0, 0);
    const quiet = probeHealth(url);
    const none = await paced(child, url, workload, "json", "no slow search", false);
    const quietHealth = (await quiet.stop()).sort((a, b) => a - b);

    const slow = slowSearches(url, workload.tasks[0]!, SLOW);
    const busy = probeHealth(url);
    await sleep(1000); // every slow loop is inside a search before the measured phase starts
    const withSlow = await paced(child, url, workload, "json", `${SLOW} slow searches in flight`, false);
    const busyHealth = (await busy.stop()).sort((a, b) => a - b);
    const searches = (await slow.stop()).sort((a, b) => a - b);

    const p99 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 99);
    const pNone = p99(none.latencies);
    const pSlow = p99(withSlow.latencies);
    report({
      name: `reward server step p99 with ${SLOW} slow searches in flight beside none, json paced`,
      value: pSlow,
      unit: "ms",
      peer: { name: "none in flight", value: pNone, ratio: pSlow / pNone },
    });
    report({
      name: `reward server /healthz max, ${SLOW} slow searches in flight`,
      value: busyHealth.at(-1) ?? NaN,
      unit: "ms",
      peer: { name: "none in flight", value: quietHealth.at(-1) ?? NaN, ratio: (busyHealth.at(-1) ?? NaN) / (quietHealth.at(-1) ?? NaN) },
    });
    report({ name: `worst-case search step, wall time while sharing the server, median of ${searches.length}`, value: percentile(searches, 50), unit: "ms" });
    const errors = none.errors + withSlow.errors;
    report({ name: "reward server errors, slow-search phases", value: errors, unit: "errors", target: "0", ok: errors === 0 });
    if (none.firstError ?? withSlow.firstError) console.log(`  first error: ${none.firstError ?? withSlow.firstError}`);
  } finally {
    if (child.connected) child.disconnect();
    if (child.exitCode === null) await new Promise((r) => child.once("exit", r));
  }
}
