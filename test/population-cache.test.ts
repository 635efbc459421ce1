// The cached synthetic population: written once (two concurrent first runs leave one whole copy),
// then loaded from its NDJSON + index sidecars, with the same resources as a fresh generation.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "./helpers/shared.ts";

const BIN = join(PROJECT_ROOT, "bin", "ehrgym.js");

function run(args: string[], cache: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, EHRGYM_CACHE: cache }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stderr })));
}

/** File name -> sha256 of its bytes. */
const files = (dir: string) => Object.fromEntries(readdirSync(dir).map((f) => [f, createHash("sha256").update(readFileSync(join(dir, f))).digest("hex")]));

describe("the cached synthetic population", () => {
  it("two concurrent first runs leave one whole copy; later runs load it, equal to a fresh generation", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "ehrgym-cache-test-"));
    const cache = join(tmp, "cache");
    const exportArgs = (out: string, ...more: string[]) => ["fhir", "export", "--synthetic", "--seed", "7", "--patients", "3", "--out", join(tmp, out), ...more];

    const [a, b] = await Promise.all([run(exportArgs("a"), cache), run(exportArgs("b"), cache)]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const entries = readdirSync(cache);
    expect(entries).toHaveLength(1); // no temp folder left behind
    expect(entries[0]).toMatch(/^population-seed7-patients3-[0-9a-f]{16}$/);
    const cached = files(join(cache, entries[0]!));
    expect(Object.keys(cached)).toContain("Patient.ndjson.idx");

    const again = await run(exportArgs("c"), cache);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/generating/);
    expect(again.stderr).toContain(`cached in ${join(cache, entries[0]!)}`);

    const fresh = await run(exportArgs("fresh", "--no-cache"), cache);
    expect(fresh.code, fresh.stderr).toBe(0);
    const ndjson = (dir: string) => Object.fromEntries(Object.entries(files(join(tmp, dir))).filter(([f]) => f.endsWith(".ndjson")));
    expect(Object.keys(ndjson("fresh")).length).toBeGreaterThan(3);
    for (const out of ["a", "b", "c"]) expect(ndjson(out)).toEqual(ndjson("fresh"));
    expect(readdirSync(cache)).toEqual(entries);
  });

  it("tasks generate without --data uses the cache of this test run, never the user's", () => {
    const out = join(mkdtempSync(join(tmpdir(), "ehrgym-cache-tasks-")), "tasks.jsonl");
    const r = spawnSync(process.execPath, [BIN, "tasks", "generate", "--patients", "4", "--ehr-seed", "3", "--per-type", "1", "--out", out], { cwd: PROJECT_ROOT, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`cached in ${join(process.env.EHRGYM_CACHE!, "population-seed3-patients4-")}`);
  });

  it("a generation killed midway leaves nothing for long: the next one removes the temp folders of dead processes", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "ehrgym-cache-sweep-"));
    const cache = join(tmp, "cache");
    const args = ["fhir", "export", "--synthetic", "--seed", "9", "--patients", "2", "--out", join(tmp, "out")];
    expect((await run(args, cache)).code).toBe(0);
    const [name] = readdirSync(cache);
    // A pid that runs nobody now, and this test's own (alive): what a killed and a running generation leave.
    let dead = 4_000_000;
    for (;;) {
      try {
        process.kill(dead, 0);
        dead++;
      } catch {
        break;
      }
    }
    renameSync(join(cache, name!), join(cache, `${name}.${dead}`));
    cpSync(join(cache, `${name}.${dead}`), join(cache, `.${name}.${dead}.tmp-${dead}`), { recursive: true });
    cpSync(join(cache, `${name}.${dead}`), join(cache, `${name}.${process.pid}`), { recursive: true });
    const again = await run([...args.slice(0, -1), join(tmp, "again")], cache);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/generating/);
    expect(readdirSync(cache).sort()).toEqual([name, `${name}.${process.pid}`].sort());
  });
});
