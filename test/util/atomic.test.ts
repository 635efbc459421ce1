// Whole-or-nothing writes: what a killed writer left beside its target goes with the next write.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StorageError, writeFileAtomic, writeFolderAtomic } from "../../env/util/index.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-atomic-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("writeFileAtomic", () => {
  it("removes the temp file a killed writer of the same file left, and keeps a running writer's", () => {
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid!; // a process that has exited
    const target = join(dir, "state.json");
    writeFileSync(`${target}.tmp-${gone}`, '{"half": ');
    writeFileSync(`${target}.tmp-${process.ppid}`, "another writer, still running");
    writeFileSync(join(dir, `other.json.tmp-${gone}`), "not this file's");
    writeFileAtomic(target, '{"whole": true}\n');
    expect(readFileSync(target, "utf8")).toBe('{"whole": true}\n');
    expect(readdirSync(dir).sort()).toEqual([`other.json.tmp-${gone}`, "state.json", `state.json.tmp-${process.ppid}`].sort());
  });
});

describe("writeFolderAtomic", () => {
  it("a full disk while filling: a StorageError naming the file it failed on, the target as it was, no temp folder left", async () => {
    const target = join(dir, "dataset");
    await writeFolderAtomic(target, (tmp) => writeFileSync(join(tmp, "old.jsonl"), "{}\n"));
    const failed = writeFolderAtomic(target, (tmp) => {
      const file = join(tmp, "train.jsonl");
      writeFileSync(file, "{");
      // What fs reports when the disk fills mid-write (an injected error: a full disk cannot be made here portably).
      throw Object.assign(new Error(`ENOSPC: no space left on device, write '${file}'`), { code: "ENOSPC", path: file, syscall: "write" });
    });
    await expect(failed).rejects.toBeInstanceOf(StorageError);
    await expect(failed).rejects.toThrow(/train\.jsonl.*no space left on device/);
    expect(readdirSync(target)).toEqual(["old.jsonl"]);
    expect(readdirSync(dir).filter((n) => n.startsWith(".dataset."))).toEqual([]);
  });
});
