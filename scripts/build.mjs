// `npm run build` (run by `npm ci` and `npm install` through `prepare`): compiles the CLI and the
// library to dist/ (plain JavaScript: `npx ehrgym` starts one Node process, with no TypeScript
// compiler at run time) and copies beside it the files the code reads at run time.
import { spawnSync } from "node:child_process";
import { cpSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "dist");
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const r = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], { stdio: "inherit" });
if (r.status !== 0) process.exit(r.status ?? 1);

/** Every file under `dir` that is not TypeScript source (prompt texts, references). */
function assets(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && !e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name));
}
for (const top of ["env", "rollout", "datasets"]) {
  for (const file of assets(join(root, top))) cpSync(file, join(dist, relative(root, file)));
}
