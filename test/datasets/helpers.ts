// Running the real CLI and reading its outputs back, for the dataset tests.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams, type SpawnSyncReturns } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { tableFromIPC as flechetteFromIPC } from "@uwdata/flechette";
import { PROJECT_ROOT } from "../helpers/shared.ts";

export const cli = (args: string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> =>
  spawnSync(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], { cwd: PROJECT_ROOT, encoding: "utf8", env: { ...process.env, ...env } });

/** The CLI as a running child (to signal it). */
export const cliChild = (args: string[], env: NodeJS.ProcessEnv = {}): ChildProcessWithoutNullStreams =>
  spawn(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env } });

/** The CLI as a child that does not block this process (needed when this process also serves HTTP). */
export function cliAsync(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = cliChild(args, env);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

export const readJsonl = (path: string): Record<string, unknown>[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? Number(x) : x)));

export function arrowRowsApache(path: string): { rows: unknown[]; metadata: Map<string, string> } {
  const table = tableFromIPC(readFileSync(path));
  return { rows: table.toArray().map((r) => plain(r.toJSON())), metadata: table.schema.metadata };
}

export function arrowRowsFlechette(path: string): { rows: unknown[]; metadata: Map<string, string> | null } {
  const table = flechetteFromIPC(readFileSync(path), { useBigInt: false });
  return { rows: plain(table.toArray()) as unknown[], metadata: (table.schema.metadata as Map<string, string> | null) ?? null };
}

/** Every file under dir (relative, forward slashes) with its bytes. */
export function tree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p).split(sep).join("/"), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

/** Nearest rank: the smallest value with at least p% of the values at or below it. */
export const nearestRank = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.ceil((p / 100) * values.length) - 1]!;

/** The card's length table: config/split -> [rows, measured, p50, p90, p99, max]. */
export function lengthTable(ds: string): Map<string, { rows: number; measured: string; p: number[] }> {
  const card = readFileSync(join(ds, "README.md"), "utf8");
  // the heading, a paragraph, the table (its head and rule lines first)
  const section = card.slice(card.indexOf("### Length"));
  const out = new Map<string, { rows: number; measured: string; p: number[] }>();
  for (const line of section.split("\n").slice(6)) {
    if (!line.startsWith("| ")) break;
    const [config, split, rows, measured, ...p] = line.slice(2, -2).split(" | ");
    out.set(`${config}/${split}`, { rows: Number(rows!.replace(/,/g, "")), measured: measured!, p: p.map((x) => Number(x.replace(/,/g, ""))) });
  }
  return out;
}

