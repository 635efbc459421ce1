// vitest global setup: the compiled CLI (dist/, what `node bin/ehrgym.js` runs) is rebuilt before the tests
// when any source is newer than it, so tests of the `ehrgym` command never run stale JavaScript; and
// the tests' commands cache the synthetic population in a temp folder of this run, never the user's.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "./shared.ts";

function newestSource(): number {
  let newest = statSync(join(PROJECT_ROOT, "tsconfig.build.json")).mtimeMs;
  for (const top of ["env", "rollout", "datasets", "scripts/cli.ts", "scripts/pipeline.ts", "scripts/commands", "scripts/build.mjs"]) {
    const path = join(PROJECT_ROOT, top);
    const files = statSync(path).isDirectory() ? readdirSync(path, { recursive: true, encoding: "utf8" }).map((f) => join(path, f)) : [path];
    for (const f of files) newest = Math.max(newest, statSync(f).mtimeMs);
  }
  return newest;
}

export default function setup(): () => void {
  const cache = mkdtempSync(join(tmpdir(), "ehrgym-test-cache-"));
  process.env.EHRGYM_CACHE = cache;
  const teardown = () => rmSync(cache, { recursive: true, force: true });
  const built = join(PROJECT_ROOT, "dist", "scripts", "cli.js");
  if (existsSync(built) && statSync(built).mtimeMs >= newestSource()) return teardown;
  const r = spawnSync(process.execPath, [join(PROJECT_ROOT, "scripts", "build.mjs")], { cwd: PROJECT_ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}${r.stderr}`);
  return teardown;
}
