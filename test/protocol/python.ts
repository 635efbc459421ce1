// Runs a python3 snippet with JSON on stdin and returns its JSON stdout (the reference implementation).
import { execFileSync } from "node:child_process";

export function python<T>(code: string, input: unknown): T {
  const out = execFileSync("python3", ["-c", code], { input: JSON.stringify(input), maxBuffer: 256 * 1024 * 1024 });
  return JSON.parse(out.toString("utf8")) as T;
}
