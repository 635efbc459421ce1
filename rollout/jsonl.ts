// The eval JSONL: append one line per finished episode; on resume, read what is done.
import { existsSync } from "node:fs";
import { appendFile, mkdir, readFile, truncate } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";

const RowKey = z.object({ task_id: z.string(), suite: z.string() }).loose();

/** Every complete row of the file (a half-written last line from an interrupted run is dropped). */
export async function readRows(path: string): Promise<Record<string, unknown>[]> {
  if (!existsSync(path)) return [];
  const text = await readFile(path, "utf8");
  const rows: Record<string, unknown>[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      if (i === lines.length - 1) return; // interrupted mid-write
      throw new Error(`${path}:${i + 1}: not a JSON line`);
    }
    const checked = RowKey.safeParse(parsed);
    if (!checked.success) throw new Error(`${path}:${i + 1}: not an eval row (${checked.error.issues[0]?.message})`);
    rows.push(checked.data);
  });
  return rows;
}

/** Opens the file for appending: creates folders, cuts off a half-written last line. */
export async function prepareAppend(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  if (!existsSync(path)) return;
  const text = await readFile(path, "utf8");
  const end = text.lastIndexOf("\n") + 1;
  if (end < Buffer.byteLength(text)) await truncate(path, Buffer.byteLength(text.slice(0, end)));
}

/** Appends rows one at a time in call order. */
export class JsonlAppender {
  private chain: Promise<void> = Promise.resolve();
  constructor(private readonly path: string) {}
  append(row: unknown): Promise<void> {
    const line = `${JSON.stringify(row)}\n`;
    this.chain = this.chain.then(() => appendFile(this.path, line));
    return this.chain;
  }
}
