// Shared by the rollout tests: a small synthetic EHR and its generated tasks (the same ones the CLI
// makes from the same flags), written as a task file for the stand-in teacher and the CLI.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateStore } from "../../env/ehr/index.ts";
import { generateTasks, type Task } from "../../env/tasks/index.ts";
import { PROJECT_ROOT } from "../helpers/shared.ts";

export const EHR_FLAGS = ["--patients", "8", "--seed", "3"];

export function smallWorld(perType = 2) {
  const { store } = generateStore({ patients: 8, seed: 3 });
  const tasks: Task[] = (["mab-v1", "mab-v2"] as const).flatMap((suite) => generateTasks(store, { suite, perType, seed: 3 }));
  const dir = mkdtempSync(join(tmpdir(), "ehrgym-rollout-"));
  const tasksFile = join(dir, "tasks.jsonl");
  writeFileSync(tasksFile, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");
  return { store, tasks, dir, tasksFile };
}

const CLI = ["--import", "tsx", "scripts/cli.ts"];

/** Runs the CLI to completion without blocking this process (its servers must keep answering). */
export async function cli(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const r = await finished(cliAsync(args, env));
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

export function cliAsync(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [...CLI, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
}

/** Resolves with the exit code (or the signal) and what the child printed. */
export function finished(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => (stdout += String(d)));
  child.stderr?.on("data", (d) => (stderr += String(d)));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}
