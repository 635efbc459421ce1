// The sha256 of a file on a worker thread, so a load can check a file against its index sidecar
// while it builds the table on the main thread.
import { Worker } from "node:worker_threads";

/** Hashes the file behind an open descriptor to its end (the worker shares the process's descriptors). */
const HASH_WORKER = `
const { parentPort } = require("node:worker_threads");
const { readSync } = require("node:fs");
const { createHash } = require("node:crypto");
const chunk = Buffer.allocUnsafe(1 << 22);
parentPort.on("message", ({ id, fd }) => {
  try {
    const h = createHash("sha256");
    let pos = 0;
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, pos);
      if (n === 0) break;
      h.update(n === chunk.length ? chunk : chunk.subarray(0, n));
      pos += n;
    }
    parentPort.postMessage({ id, sha256: h.digest("hex"), bytes: pos });
  } catch (e) {
    parentPort.postMessage({ id, error: String((e && e.message) || e) });
  }
});
`;

export type HashResult = { sha256: string; bytes: number } | { error: string };

export class Hasher {
  private readonly worker: Worker;
  private readonly pending = new Map<number, (r: HashResult) => void>();
  private next = 0;
  private failed: string | undefined;

  constructor() {
    // Plain JavaScript on node builtins: runs the same under tsx, vitest and plain node.
    // Not unref'd: a load awaiting a hash must keep the process alive (close() always terminates it).
    this.worker = new Worker(HASH_WORKER, { eval: true, execArgv: [] });
    this.worker.on("message", (m: { id: number } & HashResult) => {
      this.pending.get(m.id)?.(m);
      this.pending.delete(m.id);
    });
    const fail = (why: string) => {
      this.failed ??= why;
      for (const done of this.pending.values()) done({ error: this.failed });
      this.pending.clear();
    };
    this.worker.on("error", (e) => fail(`hash worker failed: ${e.message}`));
    this.worker.on("exit", () => fail("hash worker exited"));
  }

  /** sha256 and byte count of everything behind `fd`. Never rejects. */
  hash(fd: number): Promise<HashResult> {
    if (this.failed) return Promise.resolve({ error: this.failed });
    const id = this.next++;
    return new Promise((done) => {
      this.pending.set(id, done);
      this.worker.postMessage({ id, fd });
    });
  }

  async close(): Promise<void> {
    this.failed ??= "closed";
    await this.worker.terminate();
  }
}
