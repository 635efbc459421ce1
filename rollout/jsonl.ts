// Episode JSONL files: streamed reads (files of a week-long run exceed what one string holds),
// a torn last line (kill -9 mid-write) cut off before appending, one write per appended line.
import { existsSync } from "node:fs";
import { mkdir, open, rename, stat, truncate, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { EpisodeRow } from "./row.ts";
import { lineText, NOT_UTF8, readLineBytes, UserError } from "../env/util/index.ts";

const RowKey = z.object({ task_id: z.string(), suite: z.string() }).loose();

export class RowFileError extends UserError {}

/**
 * Each complete line of the file, parsed, with its text and 1-based line number. A half-written last
 * line (no newline after it: bad JSON or a cut UTF-8 sequence) is skipped; bytes that are not UTF-8
 * elsewhere are an error naming file and line.
 */
export async function* readJsonLines(path: string): AsyncGenerator<{ value: unknown; line: number; text: string }> {
  if (!existsSync(path)) return;
  let pending: { text: string; line: number } | undefined;
  for await (const { bytes, lineNo, terminated } of readLineBytes(path)) {
    const text = lineText(bytes);
    if (text === undefined) {
      if (terminated) throw new RowFileError(`${path}:${lineNo}: ${NOT_UTF8}`);
      if (pending) yield parseLine(path, pending.text, pending.line);
      return;
    }
    if (pending) {
      yield parseLine(path, pending.text, pending.line);
      pending = undefined;
    }
    if (text.trim()) pending = { text, line: lineNo };
  }
  if (!pending) return;
  // The last line: a torn one (no newline after it) from an interrupted run is not an error.
  let value: unknown;
  try {
    value = JSON.parse(pending.text);
  } catch {
    return;
  }
  yield { value, line: pending.line, text: pending.text };
}

function parseLine(path: string, text: string, line: number): { value: unknown; line: number; text: string } {
  try {
    return { value: JSON.parse(text), line, text };
  } catch {
    throw new RowFileError(`${path}:${line}: not a JSON line`);
  }
}

/** Each complete row of the file, checked to be an episode row (task_id, suite); errors name file:line. */
async function* checkedRows(path: string): AsyncGenerator<Record<string, unknown>> {
  for await (const { value, line } of readJsonLines(path)) {
    const checked = RowKey.safeParse(value);
    if (!checked.success) throw new RowFileError(`${path}:${line}: not an episode row (${checked.error.issues[0]?.message})`);
    yield checked.data;
  }
}

/** Every complete row of the file, checked to be an episode row (task_id, suite). */
export async function readRows(path: string): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for await (const row of checkedRows(path)) rows.push(row);
  return rows;
}

/** A row without its transcript and tool list: the small fields summaries, resume and the meta file read. */
export type RowHead = Record<string, unknown>;

export function rowHead(row: unknown): RowHead {
  const { messages: _m, tools: _t, ...head } = row as Record<string, unknown>;
  return head;
}

/**
 * The head (rowHead) of every complete row of the file, in file order, read in one pass (a week-long
 * run's file is gigabytes: it is read once per command, not once per use). A half-written last line
 * is cut off first, as appending would. Lines that are not JSON or not episode rows throw RowFileError.
 */
export async function readRowHeads(path: string): Promise<RowHead[]> {
  await prepareAppend(path);
  const heads: RowHead[] = [];
  for await (const row of checkedRows(path)) heads.push(rowHead(row));
  return heads;
}

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

/** Rewrites the file without the rows `drop` selects (temp file, then rename), the others byte for byte. Returns how many went. */
export async function removeRows(path: string, drop: (row: Record<string, unknown>) => boolean): Promise<number> {
  if (!existsSync(path)) return 0;
  const tmp = `${path}.tmp-${process.pid}`;
  const out = await open(tmp, "w");
  let dropped = 0;
  try {
    for await (const { value, text } of readJsonLines(path)) {
      if (drop(value as Record<string, unknown>)) dropped++;
      else await out.write(`${text}\n`);
    }
  } finally {
    await out.close();
  }
  await rename(tmp, path);
  return dropped;
}

/**
 * Appends rows in call order, each line whole (JSON.stringify). Rows that arrive while a write is in
 * flight go out together in the next one.
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
        await (await handle).write(batch.lines.join(""));
      });
      this.waiting = batch;
      this.written = batch.written;
    }
    this.waiting.lines.push(`${JSON.stringify(row)}\n`);
    return this.waiting.written;
  }
  async close(): Promise<void> {
    await this.written;
    if (this.handle) await (await this.handle).close();
    this.handle = undefined;
  }
}
