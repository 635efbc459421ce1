// Output files written synchronously through a buffer, with their sha256, size and row count.
import { createHash, type Hash } from "node:crypto";
import { closeSync, mkdirSync, openSync, writevSync } from "node:fs";
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
    writeAllv(this.fd, this.pending);
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

/** Writes every buffer, in order, without concatenating them first (writev, IOV_MAX at a time). */
export function writeAllv(fd: number, buffers: Buffer[], position?: number): number {
  let total = 0;
  let queue = buffers.filter((b) => b.length);
  while (queue.length) {
    const slice = queue.slice(0, 1024);
    let n = position === undefined ? writevSync(fd, slice) : writevSync(fd, slice, position + total);
    total += n;
    // a short write: drop what went out and continue from the rest
    let i = 0;
    while (i < slice.length && n >= slice[i]!.length) n -= slice[i++]!.length;
    queue = [...(i < slice.length && n > 0 ? [slice[i]!.subarray(n)] : i < slice.length ? [slice[i]!] : []), ...slice.slice(i + 1), ...queue.slice(1024)];
  }
  return total;
}
