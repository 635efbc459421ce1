// The official MedAgentBench reference files live in ../shared/medagentbench (never copied here).
// Tests that need them use these helpers and skip with a clear message when the folder is absent.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe } from "vitest";

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const SHARED_DIR = process.env.EHRGYM_SHARED_DIR ?? join(PROJECT_ROOT, "..", "shared", "medagentbench");
export const HAS_SHARED = existsSync(join(SHARED_DIR, "test_data_v2.json"));

export function sharedFile(name: string): string {
  return join(SHARED_DIR, name);
}

/** describe() that skips (with the reason in its title) when ../shared/medagentbench is absent. */
export const describeShared: typeof describe = HAS_SHARED
  ? describe
  : (((name: string, ...rest: unknown[]) =>
      (describe.skip as (...a: unknown[]) => void)(`${name} [skipped: ../shared/medagentbench not found]`, ...rest)) as unknown as typeof describe);
