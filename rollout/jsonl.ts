// Episode JSONL files: streamed reads (files of a week-long run exceed what one string holds),
// a torn last line (kill -9 mid-write) skipped; rows dropped by rewriting the file.
import { existsSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { z } from "zod";
import { lineText, NOT_UTF8, prepareAppend, readLineBytes, UserError } from "../env/util/index.ts";

const RowKey = z.object({ task_id: z.string(), suite: z.string() }).loose();

export class RowFileError extends UserError {}

/**
 * Each complete line of the file, parsed, with its text and 1-based line number. A half-written last
 * line (no newline after it: bad JSON or a cut UTF-8 sequence) is skipped; bytes that are not UTF-8
 * elsewhere are an error naming file and line.
 */
export async function* readJsonLines(path: string): AsyncGenerator<{ value: unknown; line: number; text: string }> {
  if (!existsSync(path)) return;
  for await (const { bytes, lineNo, terminated } of readLineBytes(path)) {
    const text = lineText(bytes);
    if (text === undefined) {
      if (terminated) throw new RowFileError(`${path}:${lineNo}: ${NOT_UTF8}`);
      return;
    }
    if (!text.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // The last line: a torn one (no newline after it) from an interrupted run is not an error.
      if (!terminated) return;
      throw new RowFileError(`${path}:${lineNo}: not a JSON line`);
    }
    yield { value, line: lineNo, text };
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
