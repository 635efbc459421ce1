// The official MedAgentBench reference files live in ../shared/medagentbench (never copied here).
// Tests that need them use these helpers and skip with a clear message when the folder is absent.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "vitest";

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const SHARED_DIR = process.env.EHRGYM_SHARED_DIR ?? join(PROJECT_ROOT, "..", "shared", "medagentbench");
export const HAS_SHARED = existsSync(join(SHARED_DIR, "test_data_v2.json"));

export function sharedFile(name: string): string {
  return join(SHARED_DIR, name);
}

/**
 * describe() that skips (with the reason in its title) when ../shared/medagentbench is absent.
 * The suite's body is not run then: vitest runs the bodies of skipped suites to collect their
 * tests, and bodies that read the shared files at collection time would fail instead of skip.
 */
export const describeShared: typeof describe = HAS_SHARED
  ? describe
  : (((name: string) =>
      describe.skip(`${name} [skipped: ../shared/medagentbench not found]`, () => {
        it.skip("needs ../shared/medagentbench", () => {});
      })) as unknown as typeof describe);
