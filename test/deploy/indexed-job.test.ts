// deploy/kubernetes's Indexed Job, rehearsed with local processes: N `ehrgym rollout --shards N`
// with JOB_COMPLETION_INDEX=0..N-1 against the stand-in teacher, one SIGKILLed mid-run and rerun
// (as Kubernetes retries a failed index), then one `dataset build` over the shards: byte for byte the
// data files of a single process running the same tasks and seeds. Both run with --reproducible-fhir:
// by default every FHIR search reply carries a fresh Bundle id and lastUpdated time (as HAPI's do),
// and the stand-in's seeded draws hash the conversation, so two runs would differ in those bytes and
// in everything that follows from them, sharded or not.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { cli, cliAsync, EHR_FLAGS, finished, smallWorld } from "../rollout/rollout-fixture.ts";

const SHARDS = 3;
const world = smallWorld(2);
let teacher: TeacherServer;

beforeAll(async () => {
  // Some latency, so the killed shard is caught mid-run.
  teacher = await startTeacherServer({ tasks: world.tasks, seed: 11, latencyMs: 20 });
});
afterAll(async () => {
  await teacher?.close();
});

const rolloutArgs = (out: string, ...extra: string[]) => [
  "rollout", "--base-url", teacher.url, "--model", "ehrgym-stand-in", "--tasks", world.tasksFile, ...EHR_FLAGS,
  "--samples", "2", "--seed", "5", "--concurrency", "4", "--out", out, "--no-progress", "--reproducible-fhir", ...extra,
];
const lines = (path: string) => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean).length : 0);

/** Per JSONL data file of a built dataset, the rows' keys in file order (which split, which order). */
function dataKeys(dir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of readdirSync(join(dir, "data")).sort()) {
    if (!f.endsWith(".jsonl")) continue;
    const rows = readFileSync(join(dir, "data", f), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    out.set(f, rows.map((r) => `${r.id} ${r.suite}/${r.task_id}#${r.sample}`));
  }
  return out;
}

/** The bytes of every data file (JSONL and Arrow, both layouts) of a built dataset, by path. */
function dataBytes(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const sub of ["data", "openai"]) {
    if (!existsSync(join(dir, sub))) continue;
    for (const f of readdirSync(join(dir, sub)).sort()) out.set(`${sub}/${f}`, readFileSync(join(dir, sub, f)));
  }
  return out;
}

describe("the rollout Indexed Job, rehearsed locally", () => {
  it("merges shards (one killed and rerun) into data files byte-identical to a single process's", async () => {
    const single = join(world.dir, "single.jsonl");
    const r = await cli(rolloutArgs(single));
    expect(r.status, r.stderr).toBe(0);

    const shard = (k: number) => join(world.dir, `shard-${k}.jsonl`);
    const run = (k: number) => cliAsync(rolloutArgs(shard(k), "--shards", String(SHARDS)), { JOB_COMPLETION_INDEX: String(k) });
    const children = Array.from({ length: SHARDS }, (_, k) => run(k));
    const results = children.map((c) => finished(c));
    // Index 1 dies (SIGKILL, no chance to clean up) once it has written some rows.
    const victim = 1;
    while (lines(shard(victim)) < 2 && children[victim]!.exitCode === null) await new Promise((res) => setTimeout(res, 10));
    children[victim]!.kill("SIGKILL");
    const done = await Promise.all(results);
    expect(done[victim]!.signal).toBe("SIGKILL");
    for (const k of [0, 2]) expect(done[k]!.code, done[k]!.stderr).toBe(0);
    const partial = lines(shard(victim));

    const rerun = await finished(run(victim));
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(lines(shard(victim))).toBeGreaterThan(partial);
    const total = Array.from({ length: SHARDS }, (_, k) => lines(shard(k))).reduce((a, b) => a + b, 0);
    expect(total).toBe(lines(single));

    const build = (out: string, ...from: string[]) => cli(["dataset", "build", "--from", ...from, "--out", out, "--keep", "all"]);
    const a = join(world.dir, "ds-single");
    const b = join(world.dir, "ds-shards");
    expect((await build(a, single)).status).toBe(0);
    const bs = await build(b, ...Array.from({ length: SHARDS }, (_, k) => shard(k)));
    expect(bs.status, bs.stderr).toBe(0);
    expect(readdirSync(join(b, "data")).sort()).toEqual(readdirSync(join(a, "data")).sort());
    const fa = dataKeys(a);
    expect([...fa.values()].flat().length).toBeGreaterThan(0);
    expect(dataKeys(b)).toEqual(fa);
    const ba = dataBytes(a);
    const bb = dataBytes(b);
    expect([...bb.keys()]).toEqual([...ba.keys()]);
    for (const [f, bytes] of ba) expect(bb.get(f)!.equals(bytes), `${f} differs`).toBe(true);
  });
});
