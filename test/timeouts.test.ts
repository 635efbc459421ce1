// The tests pass on a loaded machine: none sets its own timeout (vitest.config.ts sets none), no
// child process they run is killed after a fixed time, and no wait ends at a deadline: the vitest
// suites and the Python ones (scripts/python/tests, run by `npm test`) alike.
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

const PY_DIR = join(PROJECT_ROOT, "scripts", "python", "tests");
const pyFiles = readdirSync(PY_DIR)
  .filter((f) => f.endsWith(".py"))
  .map((f) => join(PY_DIR, f));

/** The Python lines that end a wait by the clock: a deadline, or a subprocess or future given a timeout. */
function pyDeadlines(text: string): string[] {
  return text.split("\n").filter((line) => /\btime\.monotonic\(|\btext=True, timeout=|\.(?:exception|result)\(timeout=/.test(line));
}

describe("no test depends on wall time", () => {
  it.each(pyFiles.map((f) => relative(PROJECT_ROOT, f)))("%s has no deadline", (file) => {
    expect(pyDeadlines(readFileSync(join(PROJECT_ROOT, file), "utf8"))).toEqual([]);
  });

  it.each(files.map((f) => relative(PROJECT_ROOT, f)))("%s sets no timeout", (file) => {
    expect(deadlines(readFileSync(join(PROJECT_ROOT, file), "utf8"))).toEqual([]);
  });
});
