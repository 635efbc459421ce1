// Output files written synchronously through a buffer, with their sha256, size and row count.
import { createHash, type Hash } from "node:crypto";
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";

export interface FileEntry {
  /** Relative to the dataset folder, with forward slashes. */
  path: string;
  rows: number;
  bytes: number;
  sha256: string;
}

const FLUSH_AT = 4 << 20;

export class CountedFile {
  private readonly fd: number;
  private readonly hash: Hash = createHash("sha256");
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  bytes = 0;
  rows = 0;

  constructor(
    private readonly absPath: string,
    readonly path: string,
  ) {
    mkdirSync(dirname(absPath), { recursive: true });
    this.fd = openSync(absPath, "w");
  }

  write(data: string | Buffer, rows = 0): void {
    const buf = typeof data === "string" ? Buffer.from(data) : data;
    this.hash.update(buf);
    this.bytes += buf.length;
    this.rows += rows;
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    if (this.pendingBytes >= FLUSH_AT) this.flush();
  }

  private flush(): void {
    if (!this.pendingBytes) return;
    const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    for (let off = 0; off < all.length; ) off += writeSync(this.fd, all, off);
    this.pending = [];
    this.pendingBytes = 0;
  }

  close(): FileEntry {
    this.flush();
    closeSync(this.fd);
    return { path: this.path, rows: this.rows, bytes: this.bytes, sha256: this.hash.digest("hex") };
  }
}

/** `name-0000K-of-0000N` (the Hub's shard naming). */
export const shardName = (split: string, k: number, n: number) => `${split}-${String(k).padStart(5, "0")}-of-${String(n).padStart(5, "0")}`;
