// The package as `npm pack` makes it: the compiled dist/ (gitignored) and the bin, no sources or
// tests; unpacked into another folder's node_modules, its `ehrgym` command and its library entry
// work there. (Dependencies are linked from this checkout's node_modules: no registry is reachable.)
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/shared.ts";

describe("npm pack", () => {
  it("packs dist/ and the bin; the unpacked package runs `ehrgym` and imports as `ehrgym`", () => {
    const tmp = mkdtempSync(join(tmpdir(), "ehrgym-pack-"));
    // --ignore-scripts: `prepare` would rebuild dist/ under the other tests; globalSetup built it.
    const packed = spawnSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", tmp], { cwd: PROJECT_ROOT, encoding: "utf8" });
    expect(packed.status, packed.stderr).toBe(0);
    const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    const files = info!.files.map((f) => f.path);
    for (const f of ["bin/ehrgym.js", "dist/scripts/cli.js", "dist/env/index.js", "dist/env/index.d.ts", "dist/env/protocol/assets/text-prompt.txt", "package.json", "README.md"]) expect(files).toContain(f);
    expect(files.filter((f) => f.startsWith("test/") || (f.endsWith(".ts") && !f.endsWith(".d.ts")))).toEqual([]);

    const pkg = join(tmp, "app", "node_modules", "ehrgym");
    mkdirSync(pkg, { recursive: true });
    const untar = spawnSync("tar", ["-xzf", join(tmp, info!.filename), "-C", pkg, "--strip-components=1"], { encoding: "utf8" });
    expect(untar.status, untar.stderr).toBe(0);
    const { dependencies } = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    for (const dep of Object.keys(dependencies)) {
      const link = join(tmp, "app", "node_modules", dep);
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(join(PROJECT_ROOT, "node_modules", dep), link, "dir");
    }

    const app = join(tmp, "app");
    const bin = join(pkg, "bin", "ehrgym.js");
    const run = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: app, encoding: "utf8", env: { ...process.env, EHRGYM_CACHE: join(tmp, "cache") } });
    const help = run("--help");
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain("Usage: ehrgym");
    // An eval reads the prompt assets shipped in dist/ and generates the population into the cache.
    const evaluated = run("eval", "--policy", "expert", "--patients", "2", "--per-type", "1", "--limit", "2", "--no-progress", "--out", "e.jsonl");
    expect(evaluated.status, evaluated.stderr).toBe(0);
    const rows = readFileSync(join(app, "e.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { reward: number });
    expect(rows.map((r) => r.reward)).toEqual([1, 1]);

    const imported = spawnSync(process.execPath, ["--input-type=module", "-e", 'const m = await import("ehrgym"); console.log(typeof m.MedAgentEnv, typeof m.generateStore);'], { cwd: app, encoding: "utf8" });
    expect(imported.status, imported.stderr).toBe(0);
    expect(imported.stdout.trim()).toBe("function function");
  });
});
