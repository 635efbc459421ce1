// Kill -9 at random moments, Ctrl-C, torn lines, --retry-errors: re-running the same command ends
// with every key exactly once and every line whole.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mulberry32 } from "../../env/util/index.ts";
import { EpisodeRow } from "../../rollout/index.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { cli, cliAsync, EHR_FLAGS, finished, smallWorld } from "./rollout-fixture.ts";

const world = smallWorld(2);
let teacher: TeacherServer;
beforeAll(async () => {
  teacher = await startTeacherServer({ tasks: world.tasks, seed: 3, latencyMs: 15 });
});
afterAll(async () => teacher?.close());

const args = (out: string, ...extra: string[]) => [
  "rollout", "--base-url", teacher.url, "--model", "ehrgym-stand-in", "--tasks", world.tasksFile, ...EHR_FLAGS, "--out", out, "--no-progress", "--concurrency", "4", "--samples", "2", ...extra,
];

function lines(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter(Boolean);
}

const keysOf = (path: string) => lines(path).map((l) => EpisodeRow.parse(JSON.parse(l))).map((r) => `${r.suite}/${r.task_id}/${r.sample}`);

/** Resolves once the file has at least `n` lines (polling; the child writes it). */
async function waitForLines(path: string, n: number, child: { exitCode: number | null }): Promise<void> {
  while (lines(path).length < n && child.exitCode === null) await new Promise((r) => setTimeout(r, 25));
}

describe("ehrgym rollout: interrupted and resumed", () => {
  it("kill -9 at random moments, then the same command: every key once, no torn line", async () => {
    const out = join(world.dir, "killed.jsonl");
    const random = mulberry32(20261124);
    const total = world.tasks.length * 2;
    for (let round = 0; round < 4; round++) {
      const before = lines(out).length;
      const child = cliAsync(args(out));
      const done = finished(child);
      await waitForLines(out, before + 1, child);
      await new Promise((r) => setTimeout(r, Math.floor(random() * 400)));
      child.kill("SIGKILL");
      await done;
      // What is there parses, except perhaps a torn last line.
      const now = lines(out);
      now.slice(0, -1).forEach((l) => EpisodeRow.parse(JSON.parse(l)));
    }
    const r = await cli(args(out));
    expect(r.status, r.stderr).toBe(0);
    const keys = keysOf(out);
    expect(keys).toHaveLength(total);
    expect(new Set(keys).size).toBe(total);
  });

  it("a torn last line is cut off and its episode re-run", async () => {
    const out = join(world.dir, "torn.jsonl");
    expect((await cli(args(out, "--max-episodes", "5"))).status).toBe(0);
    const whole = lines(out);
    const last = whole.pop()!;
    // Simulate kill -9 mid-write of the fifth row.
    const text = readFileSync(out, "utf8");
    const cut = text.slice(0, text.length - last.length - 1) + last.slice(0, Math.floor(last.length / 2));
    writeFileSync(out, cut);
    expect((await cli(args(out, "--max-episodes", "5"))).status).toBe(0);
    const keys = keysOf(out);
    expect(keys).toHaveLength(5);
    expect(new Set(keys).size).toBe(5);
  });

  it("Ctrl-C ends in-flight requests, keeps what finished, and says how to resume", async () => {
    const out = join(world.dir, "sigint.jsonl");
    const child = cliAsync(args(out));
    const done = finished(child);
    await waitForLines(out, 3, child);
    child.kill("SIGINT");
    const r = await done;
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/interrupted: \d+ rows in .*sigint\.jsonl; re-run the same command to resume/);
    const keys = keysOf(out);
    expect(keys.length).toBeGreaterThanOrEqual(3);
    expect(keys.length).toBeLessThan(world.tasks.length * 2);
    const resumed = await cli(args(out));
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(new Set(keysOf(out)).size).toBe(world.tasks.length * 2);
  });

  it("--retry-errors re-runs model_error rows and leaves one row per key", async () => {
    const out = join(world.dir, "errors.jsonl");
    const flaky = await startTeacherServer({ tasks: world.tasks, seed: 9, faults: "500:0.3" });
    try {
      const first = await cli([...args(out, "--max-retries", "0"), "--base-url", flaky.url]);
      expect(first.status, first.stderr).toBe(0);
      const errored = lines(out).filter((l) => JSON.parse(l).status === "model_error").length;
      expect(errored).toBeGreaterThan(0);
      // Rows that stay are kept byte for byte (one written with spaces by another tool too), in their
      // order, ahead of the re-run ones.
      const before = lines(out);
      const spaced = before.findIndex((l) => JSON.parse(l).status !== "model_error");
      before[spaced] = JSON.stringify(JSON.parse(before[spaced]!), null, 1).replaceAll("\n", "");
      writeFileSync(out, before.map((l) => `${l}\n`).join(""));
      const kept = before.filter((l) => JSON.parse(l).status !== "model_error");
      expect(kept).toContain(before[spaced]);
      const again = await cli(args(out, "--retry-errors"));
      expect(again.status, again.stderr).toBe(0);
      expect(again.stdout).toContain(`${errored} model_error rows re-run`);
      const rows = lines(out).map((l) => JSON.parse(l));
      expect(rows.filter((r) => r.status === "model_error")).toHaveLength(0);
      expect(new Set(keysOf(out)).size).toBe(world.tasks.length * 2);
      expect(rows).toHaveLength(world.tasks.length * 2);
      expect(lines(out).slice(0, kept.length)).toEqual(kept);
    } finally {
      await flaky.close();
    }
  });
});
