// A full disk under `ehrgym rollout --out`: a real small tmpfs (mounted in a private mount namespace,
// so no root is needed and nothing outlives the test), filled by a ballast file until the run's rows
// no longer fit. The run names the file in one line and exits 1; once space is freed, the same command
// cuts off the torn line and resumes after the last whole row.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EpisodeRow } from "../../rollout/index.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { cli, EHR_FLAGS, smallWorld } from "./rollout-fixture.ts";

const NAMESPACE = ["--user", "--map-root-user", "--mount"];
const canMount = spawnSync("unshare", [...NAMESPACE, "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], { stdio: "ignore" }).status === 0;
if (!canMount && process.env.CI) throw new Error("disk-full test: `unshare --user --map-root-user --mount` with a tmpfs must work in CI");
const describeMount = canMount ? describe : describe.skip;

/** A tmpfs of `size` at `dir`, seen from this process as `path` (/proc/<pid>/root of the namespace's
 *  only process, which holds the mount until it is killed). */
async function tmpfs(dir: string, size: string): Promise<{ path: string; holder: ChildProcess }> {
  const holder = spawn("unshare", [...NAMESPACE, "sh", "-c", 'mount -t tmpfs -o "size=$1" tmpfs "$2" && echo mounted && exec sleep 3600', "sh", size, dir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const mounted = await new Promise<boolean>((resolve) => {
    holder.stdout!.once("data", (d) => resolve(String(d).trim() === "mounted"));
    holder.once("exit", () => resolve(false));
  });
  if (!mounted) throw new Error(`could not mount a tmpfs at ${dir}`);
  return { path: `/proc/${holder.pid}/root${dir}`, holder };
}

const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean);
const keyOf = (line: string) => {
  const row = EpisodeRow.parse(JSON.parse(line));
  return `${row.suite}/${row.task_id}/${row.sample}`;
};

describeMount("ehrgym rollout on a full disk", () => {
  const world = smallWorld(2);
  let teacher: TeacherServer;
  let disk: { path: string; holder: ChildProcess };
  beforeAll(async () => {
    teacher = await startTeacherServer({ tasks: world.tasks, seed: 3 });
    mkdirSync(join(world.dir, "disk"));
    disk = await tmpfs(join(world.dir, "disk"), "64m");
  });
  afterAll(async () => {
    disk?.holder.kill("SIGKILL");
    await teacher?.close();
    rmSync(world.dir, { recursive: true, force: true });
  });

  it("names the file in one line, exits 1, and the next run resumes past the torn line", async () => {
    const out = join(disk.path, "rollout.jsonl");
    const args = ["rollout", "--base-url", teacher.url, "--model", "ehrgym-stand-in", "--tasks", world.tasksFile, ...EHR_FLAGS, "--out", out, "--no-progress", "--concurrency", "2", "--samples", "2"];
    // Everything but 48 KiB taken: the lock file and a few rows fit, the run's other rows do not.
    const ballast = join(disk.path, "ballast");
    const { bavail, bsize } = statfsSync(disk.path);
    writeFileSync(ballast, Buffer.alloc(bavail * bsize - 48 * 1024));

    const full = await cli(args);
    expect(full.status, full.stderr).toBe(1);
    const reported = full.stderr.split("\n").filter((l) => l.startsWith("ehrgym:"));
    expect(reported).toEqual([`ehrgym: cannot write ${out}: no space left on device (ENOSPC); the rows before it are kept: free space and re-run the same command to resume`]);
    expect(full.stderr).not.toMatch(/^\s+at /m);
    expect(existsSync(`${out}.lock`)).toBe(false);

    // Whole rows, then at most one torn line (the tmpfs filled mid-row in every run seen: the failed
    // write stops at a page boundary), and nothing after it.
    const text = readFileSync(out, "utf8");
    const whole = text.slice(0, text.lastIndexOf("\n") + 1);
    const kept = lines(out).slice(0, whole.split("\n").length - 1).map(keyOf);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(world.tasks.length * 2);

    rmSync(ballast);
    const resumed = await cli(args);
    expect(resumed.status, resumed.stderr).toBe(0);
    const after = readFileSync(out, "utf8");
    expect(after.startsWith(whole)).toBe(true);
    expect(after.endsWith("\n")).toBe(true);
    const keys = lines(out).map(keyOf);
    expect(keys).toHaveLength(world.tasks.length * 2);
    expect(new Set(keys).size).toBe(keys.length);
    expect(resumed.stdout).toContain(`${kept.length} already in the file`);
  });
});
