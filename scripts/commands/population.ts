// The synthetic population a command runs on when given no data: generated once into a cache folder
// as an NDJSON export with index sidecars, then loaded from there (about a second) by every command.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_PATIENTS, DEFAULT_SEED } from "../../env/ehr/index.ts";
import { processRuns } from "../../env/util/index.ts";

/** `EHRGYM_CACHE`, else the platform's cache folder. */
export function cacheRoot(): string {
  if (process.env.EHRGYM_CACHE) return process.env.EHRGYM_CACHE;
  if (process.platform === "darwin") return join(homedir(), "Library", "Caches", "ehrgym");
  if (process.platform === "win32" && process.env.LOCALAPPDATA) return join(process.env.LOCALAPPDATA, "ehrgym", "Cache");
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "ehrgym");
}

/**
 * The generator's version: a hash of its sources (env/ehr and the env/util it draws on, TypeScript
 * beside the compiled code when present) and of faker's version, so a changed generator never reads
 * a population an older one wrote.
 */
let version: string | undefined;
function generatorVersion(): string {
  if (version) return version;
  const hash = createHash("sha256");
  // scripts/commands/ -> the package root; from dist/scripts/commands/ the sources are one more up.
  const here = fileURLToPath(new URL(".", import.meta.url));
  const roots = [join(here, "..", ".."), join(here, "..", "..", "..")];
  const root = roots.find((r) => existsSync(join(r, "env", "ehr", "generate.ts"))) ?? roots[0]!;
  for (const dir of ["env/ehr", "env/util"].map((d) => join(root, d)).filter((d) => existsSync(d))) {
    for (const f of readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
      if (!/\.(ts|js)$/.test(f)) continue;
      hash.update(f).update("\0").update(readFileSync(join(dir, f))).update("\0");
    }
  }
  const faker = JSON.parse(readFileSync(fileURLToPath(import.meta.resolve("@faker-js/faker/package.json")), "utf8")) as { version: string };
  hash.update(faker.version);
  return (version = hash.digest("hex").slice(0, 16));
}

/** The cache folder of a population (complete when it exists: it appears by a rename). */
export function populationDir(seed = DEFAULT_SEED, patients = DEFAULT_PATIENTS): string {
  return join(cacheRoot(), `population-seed${seed}-patients${patients}-${generatorVersion()}`);
}


/** Removes what generations killed midway (even by `kill -9`) left in the cache: the temp folders
 *  of processes that no longer run. */
function sweepDeadTemps(root: string): void {
  for (const name of readdirSync(root)) {
    const owner = /^\.?population-seed\d+-patients\d+-[0-9a-f]+\.(\d+)(?:\.(?:tmp|old)-\d+)?$/.exec(name)?.[1];
    if (owner !== undefined && Number(owner) !== process.pid && !processRuns(Number(owner))) rmSync(join(root, name), { recursive: true, force: true });
  }
}

/**
 * The export folder of the synthetic population (seed, size), generated into the cache the first
 * time. Concurrent first runs each write their own temp folder; the first rename wins, the others
 * drop theirs and use it.
 */
export async function cachedPopulation(seed = DEFAULT_SEED, patients = DEFAULT_PATIENTS): Promise<string> {
  const dir = populationDir(seed, patients);
  if (existsSync(dir)) return dir;
  mkdirSync(cacheRoot(), { recursive: true });
  sweepDeadTemps(cacheRoot());
  process.stderr.write(`generating the synthetic population (seed ${seed}, ${patients} patients) into the cache ${dir} (once)\n`);
  const mine = `${dir}.${process.pid}`;
  // A process that exits midway (Ctrl-C) leaves no half-written folder behind.
  const drop = () => rmSync(mine, { recursive: true, force: true });
  process.once("exit", drop);
  try {
    const { generateToDir } = await import("./ehr.ts");
    await generateToDir(mine, { seed, patients });
    renameSync(mine, dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!existsSync(dir) || (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "EPERM")) throw err;
  } finally {
    process.off("exit", drop);
    drop();
  }
  return dir;
}
