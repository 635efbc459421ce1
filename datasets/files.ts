// Output files of a build, written synchronously (an offline job: simple beats overlapped I/O) with
// their sha256, size and row count as the manifest lists them.
import { createHash, type Hash } from "node:crypto";
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { ManifestFile } from "./manifest.ts";

export class HashedFile {
  private readonly fd: number;
  private readonly hash: Hash = createHash("sha256");
  bytes = 0;
  rows = 0;

  constructor(abs: string, readonly path: string) {
    mkdirSync(dirname(abs), { recursive: true });
    this.fd = openSync(abs, "w");
  }

  write(data: string | Uint8Array, rows = 0): void {
    const buf = typeof data === "string" ? Buffer.from(data) : data;
    for (let at = 0; at < buf.length; ) at += writeSync(this.fd, buf, at);
    this.hash.update(buf);
    this.bytes += buf.length;
    this.rows += rows;
  }

  /** `path` is relative to the dataset folder, with forward slashes. */
  close(): ManifestFile {
    closeSync(this.fd);
    return { path: this.path, rows: this.rows, bytes: this.bytes, sha256: this.hash.digest("hex") };
  }
}

/** `data/{split}-0000K-of-0000N` */
export function shardName(split: string, shard: number, shards: number): string {
  return `${split}-${String(shard).padStart(5, "0")}-of-${String(shards).padStart(5, "0")}`;
}
