// The tests pass on a loaded machine: none sets its own timeout (vitest.config.ts sets none), and
// no child process they run is killed after a fixed time.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "./helpers/shared.ts";

const TEST_DIR = join(PROJECT_ROOT, "test");
const files = readdirSync(TEST_DIR, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .map((f) => join(TEST_DIR, f));

/** The lines of `text` that give a test or hook a timeout, or a child process or poll a deadline. */
function deadlines(text: string): string[] {
  return text.split("\n").filter(
    (line) =>
      /^\s*\}, [0-9_]+\);$/.test(line) || // it("...", fn, 120_000) / beforeAll(fn, 300_000)
      /\bspawnSync\(.*\btimeout: /.test(line) ||
      /\bexpect\.poll\(.*\btimeout: /.test(line) ||
      /\{ timeout: [0-9_]+ \}, (?:async )?\(/.test(line), // it("...", { timeout }, fn)
  );
}

describe("no test depends on wall time", () => {
  it.each(files.map((f) => relative(PROJECT_ROOT, f)))("%s sets no timeout", (file) => {
    expect(deadlines(readFileSync(join(PROJECT_ROOT, file), "utf8"))).toEqual([]);
  });
});
