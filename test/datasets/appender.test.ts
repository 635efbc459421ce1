// The build's output appender: with a WriteBudget its writes are positional and asynchronous, may
// end in any order, and must still leave exactly the appended bytes, report only contiguous
// progress (the hash worker reads up to it), and surface a failed write.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Appender, WriteBudget } from "../../datasets/files.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-appender-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Deterministic pieces: short and long strings (multi-byte too), small and large byte arrays. */
function pieces(seed: number): (string | Uint8Array)[] {
  let x = seed;
  const rand = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const out: (string | Uint8Array)[] = [];
  for (let i = 0; i < 120; i++) {
    const kind = Math.floor(rand() * 4);
    const n = Math.floor(rand() * (kind === 3 ? 9 << 20 : 300_000));
    if (kind === 0) out.push(`é${i}`.repeat(Math.max(1, n >> 3)));
    else if (kind === 1) out.push("ascii line\n".repeat(Math.max(1, n >> 4)));
    else out.push(Buffer.alloc(n, i));
  }
  return out;
}

describe("Appender", () => {
  it.each([undefined, 1 << 20])("writes exactly the appended bytes, reporting contiguous progress (budget limit %s)", async (limit) => {
    const path = join(dir, `out-${limit ?? "sync"}.bin`);
    const fd = openSync(path, "w+");
    const budget = limit === undefined ? undefined : new WriteBudget(limit);
    const progress: number[] = [];
    const out = new Appender(fd, (written) => progress.push(written), budget);
    const all = pieces(7);
    for (const p of all) {
      out.append(p);
      await budget?.room();
      // Whatever was reported written is in the file already.
      if (progress.length) expect(readFileSync(path).length).toBeGreaterThanOrEqual(progress.at(-1)!);
    }
    await out.end();
    closeSync(fd);
    const expected = Buffer.concat(all.map((p) => (typeof p === "string" ? Buffer.from(p) : p)));
    expect(out.size).toBe(expected.length);
    expect(readFileSync(path).equals(expected)).toBe(true);
    expect(progress.at(-1)).toBe(expected.length);
    expect(progress.every((n, i) => i === 0 || n > progress[i - 1]!)).toBe(true);
    if (budget) expect(budget.inFlight).toBe(0);
  });

  it("a failed asynchronous write fails the file's end", async () => {
    const path = join(dir, "read-only.bin");
    writeFileSync(path, "");
    const fd = openSync(path, "r");
    const out = new Appender(fd, undefined, new WriteBudget());
    out.append(Buffer.alloc(5 << 20, 1));
    await expect(out.end()).rejects.toThrow(/EBADF/);
    closeSync(fd);
  });
});
