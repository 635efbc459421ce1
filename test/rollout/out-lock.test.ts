// One writer per output: a second rollout/eval on the same --out is refused naming the holder, a
// killed holder's lock is taken over, duplicated keys are reported, and bad output paths fail before
// any work. Real child processes throughout.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EpisodeRow } from "../../rollout/index.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { cli, cliAsync, EHR_FLAGS, finished, smallWorld } from "./rollout-fixture.ts";

const world = smallWorld(1);
let teacher: TeacherServer;
beforeAll(async () => {
  teacher = await startTeacherServer({ tasks: world.tasks, seed: 5, latencyMs: 150 });
});
afterAll(async () => teacher?.close());

const rolloutArgs = (out: string, ...extra: string[]) => [
  "rollout", "--base-url", teacher.url, "--model", "ehrgym-stand-in", "--tasks", world.tasksFile, ...EHR_FLAGS, "--out", out, "--no-progress", "--concurrency", "1", ...extra,
];
const evalArgs = (out: string, ...extra: string[]) => ["eval", "--tasks", world.tasksFile, ...EHR_FLAGS, "--out", out, "--no-progress", ...extra];

const lines = (path: string) => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : []);
const keysOf = (path: string) => lines(path).map((l) => EpisodeRow.parse(JSON.parse(l))).map((r) => `${r.suite}/${r.task_id}/${r.sample}`);
const stderrLines = (s: string) => s.split("\n").filter(Boolean);

describe("one writer per --out", () => {
  it("refuses a second rollout on a file in use, naming the holder; takes over the lock once the holder is killed", async () => {
    const out = join(world.dir, "locked.jsonl");
    const first = cliAsync(rolloutArgs(out));
    const firstDone = finished(first);
    while (lines(out).length === 0 && first.exitCode === null) await new Promise((r) => setTimeout(r, 25));
    expect(first.exitCode).toBeNull();
    const lock = JSON.parse(readFileSync(`${out}.lock`, "utf8"));
    expect(lock).toMatchObject({ pid: first.pid, command: "ehrgym rollout" });

    const second = await cli(rolloutArgs(out));
    expect(second.status).toBe(2);
    expect(stderrLines(second.stderr)).toHaveLength(1);
    expect(second.stderr).toContain(`is being written by pid ${first.pid} on ${lock.host} (ehrgym rollout`);
    // The refused run wrote nothing: every line so far is the first run's, each key once.
    expect(new Set(keysOf(out)).size).toBe(keysOf(out).length);

    first.kill("SIGKILL");
    await firstDone;
    expect(existsSync(`${out}.lock`)).toBe(true); // a kill -9 leaves it behind

    const third = await cli(rolloutArgs(out, "--concurrency", "8"));
    expect(third.status, third.stderr).toBe(0);
    expect(third.stderr).toContain(`took over the lock of pid ${first.pid}`);
    const keys = keysOf(out);
    expect(keys).toHaveLength(world.tasks.length);
    expect(new Set(keys).size).toBe(world.tasks.length);
    expect(existsSync(`${out}.lock`)).toBe(false);
  });

  it("eval reports duplicated keys in an existing file on resume", async () => {
    const out = join(world.dir, "dup.jsonl");
    expect((await cli(evalArgs(out))).status).toBe(0);
    const once = readFileSync(out, "utf8");
    writeFileSync(out, once + once); // as two runs on one file once left it
    const again = await cli(evalArgs(out));
    expect(again.status, again.stderr).toBe(0);
    const n = world.tasks.length;
    expect(again.stderr).toContain(`warning: ${out} holds ${n} duplicate row(s): ${2 * n} rows for ${n} keys`);
    expect(again.stdout).toContain(`${n} already in the file`);
  });
});

describe("output paths are checked before any work", () => {
  it("rollout --out /proc/x.jsonl fails at once with one line", async () => {
    const r = await cli(rolloutArgs("/proc/x.jsonl"));
    expect(r.status).toBe(2);
    expect(stderrLines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/--out \/proc\/x\.jsonl: cannot write there \(E[A-Z]+/);
    expect(r.stdout).toBe("");
  });

  it("refuses an --out that is an input or a directory, leaving the input untouched", async () => {
    const tasksCopy = join(world.dir, "tasks-copy.jsonl");
    copyFileSync(world.tasksFile, tasksCopy);
    const before = readFileSync(tasksCopy, "utf8");
    for (const args of [
      ["eval", "--tasks", tasksCopy, ...EHR_FLAGS, "--out", tasksCopy, "--no-progress"],
      ["rollout", "--base-url", teacher.url, "--model", "m", "--tasks", tasksCopy, ...EHR_FLAGS, "--out", tasksCopy, "--no-progress"],
    ]) {
      const r = await cli(args);
      expect(r.status).toBe(2);
      expect(stderrLines(r.stderr)).toHaveLength(1);
      expect(r.stderr).toContain(`--out ${tasksCopy}: it is also an input of this command; give another path`);
    }
    expect(readFileSync(tasksCopy, "utf8")).toBe(before);
    const dir = join(world.dir, "a-dir");
    mkdirSync(dir, { recursive: true });
    const r = await cli(evalArgs(dir));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`--out ${dir}: is a directory; give a file path`);
  });
});
