// Lines of a (possibly huge) text file, streamed: memory holds one chunk and one line.
import { createReadStream } from "node:fs";

export interface LineBytes {
  /** The line's bytes, without the newline (a view of the read buffer: use it before the next line). */
  bytes: Buffer;
  /** 1-based, counted from `start`. */
  lineNo: number;
  /** Byte offset of the line in the file (its length is `bytes.length`). */
  offset: number;
  /** Whether the line ended with a newline (a missing one on the last line may mean a torn write). */
  terminated: boolean;
}

export interface Line {
  text: string;
  /** 1-based, counted from `start`. */
  lineNo: number;
  /** Byte offset of the line in the file, and its length in bytes (without the newline). */
  offset: number;
  bytes: number;
  /** Whether the line ended with a newline (a missing one on the last line may mean a torn write). */
  terminated: boolean;
}

export interface ReadLinesOptions {
  /** Byte range [start, end) to read; `start` must be a line start. */
  start?: number;
  end?: number;
}

/** The lines' bytes, not decoded: a line's text is left to the caller (a long one is costly to make, see rowline.ts). */
export async function* readLineBytes(path: string, o: ReadLinesOptions = {}): AsyncGenerator<LineBytes> {
  let carry: Buffer[] = [];
  let lineNo = 0;
  let lineStart = o.start ?? 0;
  let pos = lineStart;
  const range = { start: lineStart, ...(o.end !== undefined ? { end: o.end - 1 } : {}) };
  if (o.end !== undefined && o.end <= lineStart) return;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20, ...range }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      const bytes = carry.length ? Buffer.concat([...carry, piece]) : piece;
      carry = [];
      start = nl + 1;
      lineNo++;
      yield { bytes, lineNo, offset: lineStart, terminated: true };
      lineStart = pos + nl + 1;
    }
    if (start < chunk.length) carry.push(chunk.subarray(start));
    pos += chunk.length;
  }
  if (carry.length) yield { bytes: Buffer.concat(carry), lineNo: lineNo + 1, offset: lineStart, terminated: false };
}

export async function* readLines(path: string, o: ReadLinesOptions = {}): AsyncGenerator<Line> {
  for await (const line of readLineBytes(path, o)) {
    yield { text: line.terminated ? lineText(line.bytes) : line.bytes.toString("utf8"), lineNo: line.lineNo, offset: line.offset, bytes: line.bytes.length, terminated: line.terminated };
  }
}

/** Whether a line holds only whitespace (as String.prototype.trim sees it). */
export function isBlank(bytes: Buffer): boolean {
  for (const c of bytes) {
    if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) continue;
    return c >= 0x80 && bytes.toString("utf8").trim() === "";
  }
  return true;
}

/** Reads one line back by its offset and length (as readLines gave them), without the newline or a trailing CR. */
export function lineText(buf: Buffer): string {
  const end = buf.length && buf[buf.length - 1] === 13 ? buf.length - 1 : buf.length;
  return buf.toString("utf8", 0, end);
}
