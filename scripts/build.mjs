// `npm run build` (run by `npm ci` and `npm install` through `prepare`): compiles the CLI and the
// library to dist/ (plain JavaScript: `node bin/ehrgym.js` starts one Node process, with no
// TypeScript compiler at run time) and copies beside it the files the code reads at run time.
// The build fills a temp folder and swaps it in only when it is complete, so a process running
// from dist/ meanwhile never finds it half-written, and a failed build leaves the old one.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");
const tmp = join(root, `.dist.tmp-${process.pid}`);
const old = join(root, `.dist.old-${process.pid}`);

/** Temp folders of builds that were killed (their process is gone). */
function removeStale() {
  for (const name of readdirSync(root)) {
    const pid = /^\.dist\.(?:tmp|old)-(\d+)$/.exec(name)?.[1];
    if (pid === undefined) continue;
    try {
      process.kill(Number(pid), 0);
    } catch (e) {
      if (e.code === "ESRCH") rmSync(join(root, name), { recursive: true, force: true });
    }
  }
}

/** Every file under `dir` that is not TypeScript source (prompt texts, references). */
function assets(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && !e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name));
}

removeStale();
rmSync(tmp, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const r = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", tmp], { stdio: "inherit" });
if (r.status !== 0) {
  rmSync(tmp, { recursive: true, force: true });
  process.exit(r.status ?? 1);
}
for (const top of ["env", "rollout", "datasets"]) {
  for (const file of assets(join(root, top))) cpSync(file, join(tmp, relative(root, file)));
}
// The same swap as env/util/atomic.ts swapFolder (TypeScript, which this plain Node script cannot import).
if (existsSync(dist)) {
  renameSync(dist, old);
  try {
    renameSync(tmp, dist);
  } catch (err) {
    renameSync(old, dist);
    throw err;
  }
  rmSync(old, { recursive: true, force: true });
} else renameSync(tmp, dist);
