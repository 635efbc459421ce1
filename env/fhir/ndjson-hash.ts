// The sha256 of a file on a worker thread, so a load can check a file against its index sidecar
// while it builds the table on the main thread, and a dataset build hashes its inputs and outputs
// on the other core while it renders.
import { Worker } from "node:worker_threads";

/**
 * Hashes the file behind an open descriptor (the worker shares the process's descriptors): whole
 * ({id, fd}), or as it is written ({id, fd, upto}: hash up to that offset; {id, fd, upto, end: true}:
 * up to it, then answer). Messages arrive in order, so a file's bytes are hashed in order.
 */
const HASH_WORKER = `
const { parentPort } = require("node:worker_threads");
const { readSync } = require("node:fs");
const { createHash } = require("node:crypto");
const chunk = Buffer.allocUnsafe(1 << 22);
const following = new Map();
function advance(state, fd, upto) {
  while (upto === undefined || state.pos < upto) {
    const want = upto === undefined ? chunk.length : Math.min(chunk.length, upto - state.pos);
    const n = readSync(fd, chunk, 0, want, state.pos);
    if (n === 0) {
      if (upto !== undefined) throw new Error("the file is shorter than what was written to it");
      break;
    }
    state.h.update(n === chunk.length ? chunk : chunk.subarray(0, n));
    state.pos += n;
  }
}
parentPort.on("message", ({ id, fd, upto, end }) => {
  let state = following.get(id);
  try {
    if (!state) following.set(id, (state = { h: createHash("sha256"), pos: 0 }));
    if (state.failed) throw state.failed;
    advance(state, fd, upto);
    if (upto === undefined || end) {
      following.delete(id);
      parentPort.postMessage({ id, sha256: state.h.digest("hex"), bytes: state.pos });
    }
  } catch (e) {
    if (upto !== undefined && !end) { state.failed = e; return; }
    following.delete(id);
    parentPort.postMessage({ id, error: String((e && e.message) || e) });
  }
});
`;

export type HashResult = { sha256: string; bytes: number } | { error: string };

export interface FollowedHash {
  advance(upto: number): void;
  end(size: number): Promise<HashResult>;
}

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

  /**
   * A file being written behind `fd`: `advance(offset)` after each write lets the worker hash up to
   * there meanwhile; `end(size)` resolves with the hash of the whole. `fd` must stay open until then.
   */
  follow(fd: number): FollowedHash {
    const id = this.next++;
    return {
      advance: (upto) => {
        if (!this.failed) this.worker.postMessage({ id, fd, upto });
      },
      end: (size) => {
        if (this.failed) return Promise.resolve({ error: this.failed });
        return new Promise((done) => {
          this.pending.set(id, done);
          this.worker.postMessage({ id, fd, upto: size, end: true });
        });
      },
    };
  }

  async close(): Promise<void> {
    this.failed ??= "closed";
    await this.worker.terminate();
  }
}
