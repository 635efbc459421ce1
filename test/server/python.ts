// Runs scripts/python/ehrgym_client.py as a child process (async: the server under test runs in this process).
import { execFile, spawnSync } from "node:child_process";
import { join } from "node:path";
import { PROJECT_ROOT } from "../helpers/shared.ts";

export const CLIENT = join(PROJECT_ROOT, "scripts", "python", "ehrgym_client.py");

function works(python: string, code: string): boolean {
  const r = spawnSync(python, ["-c", code], { encoding: "utf8" });
  return r.status === 0;
}

const CANDIDATES = ["python3", "/usr/bin/python3"];
/** The first python3 on this machine. */
export const PYTHON = CANDIDATES.find((p) => works(p, "import sys; assert sys.version_info >= (3, 8)"));
/** A python3 that has msgpack (`python3` first; Debian's python3-msgpack installs for /usr/bin/python3). */
export const PYTHON_MSGPACK = CANDIDATES.find((p) => works(p, "import msgpack"));

export const EXAMPLES = join(PROJECT_ROOT, "scripts", "python", "examples");

export function runClient(python: string, args: string[], script = CLIENT, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(python, [script, ...args], { encoding: "utf8", timeout: 60_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", ...env } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

export function jsonLines(stdout: string): any[] {
  return stdout
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}
