// JSONL appends: a torn last line (kill -9 mid-write, a full disk) is cut off before appending, and
// each appended line goes out whole, in call order, or the appends stop at the first failed write.
import { existsSync } from "node:fs";
import { mkdir, open, stat, truncate, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { storageError } from "./errors.ts";

/** Length of the file up to and including its last newline (reads backwards from the end). */
async function completeLength(handle: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024);
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - chunk.length);
    const { bytesRead } = await handle.read(chunk, 0, end - start, start);
    const at = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}

/** Opens the file for appending: creates folders, cuts off a half-written last line. */
export async function prepareAppend(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  if (!existsSync(path)) return;
  const size = (await stat(path)).size;
  const handle = await open(path, "r");
  let keep: number;
  try {
    keep = await completeLength(handle, size);
  } finally {
    await handle.close();
  }
  if (keep < size) await truncate(path, keep);
}

/**
 * Appends rows in call order, each line whole (JSON.stringify). Rows that arrive while a write is in
 * flight go out together in the next one. A write that fails (a full disk: a StorageError naming the
 * file) fails every later append too, so nothing follows the torn line it may leave; prepareAppend
 * cuts that line off before the next run appends.
 */
export class JsonlAppender {
  private written: Promise<void> = Promise.resolve();
  /** Lines waiting for the write in flight to end, and the promise of the write that will take them. */
  private waiting: { lines: string[]; written: Promise<void> } | undefined;
  private handle: Promise<FileHandle> | undefined;
  constructor(private readonly path: string) {}
  /** Resolves once the row's line is in the file (with the other lines of its write). */
  append(row: unknown): Promise<void> {
    this.handle ??= open(this.path, "a");
    if (!this.waiting) {
      const batch = { lines: [] as string[], written: Promise.resolve() };
      const handle = this.handle;
      batch.written = this.written.then(async () => {
        if (this.waiting === batch) this.waiting = undefined;
        try {
          // appendFile, not write: it writes again after a short write (a disk filling up), until all is out or it fails.
          await (await handle).appendFile(batch.lines.join(""));
        } catch (err) {
          throw storageError(this.path, err);
        }
      });
      this.waiting = batch;
      this.written = batch.written;
    }
    this.waiting.lines.push(`${JSON.stringify(row)}\n`);
    return this.waiting.written;
  }
  /** Waits for the writes in flight and closes the file; rejects with the first failed write's error. */
  async close(): Promise<void> {
    try {
      await this.written;
    } finally {
      const handle = this.handle;
      this.handle = undefined;
      if (handle) await (await handle).close();
    }
  }
}
