// Output files written through reused buffers, with their sha256 (hashed on a worker thread as the
// file grows), size and row count. Strings are encoded straight into a buffer: on rows of ~100 KB
// that is ~15x faster than Buffer.from, which allocates (and the kernel maps and zeroes) a fresh
// buffer per row. Given a WriteBudget, writes are positional and asynchronous (libuv's threads copy
// the bytes into the page cache on the core the build's thread leaves), at most its bytes in flight.
import { closeSync, mkdirSync, openSync, write, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { FollowedHash, Hasher } from "../env/fhir/index.ts";

export interface FileEntry {
  /** Relative to the dataset folder, with forward slashes. */
  path: string;
  rows: number;
  bytes: number;
  sha256: string;
}

const CHUNK = 4 << 20;

/** Bytes of asynchronous writes in flight across files; `room()` waits until they are under the limit. */
export class WriteBudget {
  inFlight = 0;
  private waiters: (() => void)[] = [];
  /** Free CHUNK-sized buffers (a flushed buffer is in flight until its write ends). */
  readonly spare: Buffer[] = [];

  constructor(readonly limit = 64 << 20) {}

  room(): Promise<void> | undefined {
    if (this.inFlight <= this.limit) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(bytes: number): void {
    this.inFlight -= bytes;
    if (this.inFlight > this.limit) return;
    const ready = this.waiters;
    this.waiters = [];
    for (const w of ready) w();
  }
}

/** Appends to an open file at its end (`size` so far), buffered; `onWritten` hears how far the file is written (every byte before it) as writes end. */
export class Appender {
  private buf: Buffer;
  private used = 0;
  /** Bytes appended so far (flushed or not), and where the next write goes. */
  size = 0;
  private issued = 0;
  /** Writes in flight, in file order, and the contiguous length written. */
  private readonly pending: { end: number; done: boolean }[] = [];
  private written = 0;
  private error: Error | undefined;
  private idle: (() => void) | undefined;

  constructor(
    readonly fd: number,
    private readonly onWritten?: (written: number) => void,
    private readonly budget?: WriteBudget,
  ) {
    this.buf = budget?.spare.pop() ?? Buffer.allocUnsafeSlow(CHUNK);
  }

  /** `released`: told when `data`'s bytes are no longer needed (copied, or written from where they are). */
  append(data: string | Uint8Array, released?: () => void): void {
    if (this.error) throw this.error;
    if (typeof data !== "string") return this.appendBytes(data, released);
    // A UTF-16 unit is at most 3 UTF-8 bytes; only a string that may not fit needs its exact length.
    if (data.length * 3 > CHUNK - this.used) {
      const need = Buffer.byteLength(data);
      if (need > CHUNK - this.used) this.flush();
      if (need > CHUNK) return this.appendBytes(Buffer.from(data));
    }
    const n = this.buf.write(data, this.used);
    this.used += n;
    this.size += n;
  }

  private appendBytes(bytes: Uint8Array, released?: () => void): void {
    if (bytes.length > CHUNK - this.used) this.flush();
    if (bytes.length > CHUNK) {
      // Written as it is: the caller hands over bytes it does not change until they are released.
      this.writeOut(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), false, released);
      this.size += bytes.length;
      return;
    }
    this.buf.set(bytes, this.used);
    this.used += bytes.length;
    this.size += bytes.length;
    released?.();
  }

  flush(): void {
    if (!this.used) return;
    const full = this.buf.subarray(0, this.used);
    if (this.budget) this.buf = this.budget.spare.pop() ?? Buffer.allocUnsafeSlow(CHUNK);
    this.writeOut(full, true);
    this.used = 0;
  }

  /** Flushes and waits until every byte is in the file. */
  async end(): Promise<void> {
    this.flush();
    if (this.pending.length) await new Promise<void>((resolve) => (this.idle = resolve));
    if (this.error) throw this.error;
  }

  private writeOut(bytes: Buffer, ownBuffer: boolean, released?: () => void): void {
    const at = this.issued;
    this.issued += bytes.length;
    if (!this.budget) {
      for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done, at + done);
      this.written = this.issued;
      this.onWritten?.(this.written);
      released?.();
      return;
    }
    const budget = this.budget;
    const entry = { end: this.issued, done: false };
    this.pending.push(entry);
    budget.inFlight += bytes.length;
    const finish = (err: Error | null) => {
      if (err) this.error ??= err;
      entry.done = true;
      released?.();
      if (ownBuffer && bytes.buffer.byteLength === CHUNK && budget.spare.length < 8) budget.spare.push(Buffer.from(bytes.buffer, 0, CHUNK));
      let advanced = false;
      while (this.pending.length && this.pending[0]!.done) {
        this.written = this.pending.shift()!.end;
        advanced = true;
      }
      if (advanced && !this.error) this.onWritten?.(this.written);
      budget.release(bytes.length);
      if (!this.pending.length && this.idle) {
        const idle = this.idle;
        this.idle = undefined;
        idle();
      }
    };
    const from = (done: number) =>
      write(this.fd, bytes, done, bytes.length - done, at + done, (err, n) => {
        if (err) return finish(err);
        if (done + n < bytes.length) return from(done + n);
        finish(null);
      });
    from(0);
  }
}

export class CountedFile {
  private readonly fd: number;
  private readonly hash: FollowedHash;
  private readonly out: Appender;
  rows = 0;

  constructor(
    absPath: string,
    readonly path: string,
    hasher: Hasher,
    budget?: WriteBudget,
  ) {
    mkdirSync(dirname(absPath), { recursive: true });
    this.fd = openSync(absPath, "w+"); // the hash worker reads it back
    this.hash = hasher.follow(this.fd);
    this.out = new Appender(this.fd, (written) => this.hash.advance(written), budget);
  }

  get bytes(): number {
    return this.out.size;
  }

  /** `released`: as for Appender.append. */
  write(data: string | Uint8Array, rows = 0, released?: () => void): void {
    this.out.append(data, released);
    this.rows += rows;
  }

  /** Flushes, waits for the worker's hash of the whole file and closes it. */
  async close(): Promise<FileEntry> {
    try {
      await this.out.end();
      const h = await this.hash.end(this.out.size);
      if ("error" in h) throw new Error(`cannot hash ${this.path}: ${h.error}`);
      return { path: this.path, rows: this.rows, bytes: this.out.size, sha256: h.sha256 };
    } finally {
      closeSync(this.fd);
    }
  }
}

/** `name-0000K-of-0000N` (the Hub's shard naming). */
export const shardName = (split: string, k: number, n: number) => `${split}-${String(k).padStart(5, "0")}-of-${String(n).padStart(5, "0")}`;
