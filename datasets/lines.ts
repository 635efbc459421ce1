// Lines of a (possibly huge) text file, streamed: memory holds one chunk and one line.
import { createReadStream } from "node:fs";

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

export async function* readLines(path: string, o: ReadLinesOptions = {}): AsyncGenerator<Line> {
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
      const text = carry.length ? Buffer.concat([...carry, piece]).toString("utf8") : piece.toString("utf8");
      carry = [];
      const end = pos + nl;
      start = nl + 1;
      lineNo++;
      yield { text: text.endsWith("\r") ? text.slice(0, -1) : text, lineNo, offset: lineStart, bytes: end - lineStart, terminated: true };
      lineStart = end + 1;
    }
    if (start < chunk.length) carry.push(chunk.subarray(start));
    pos += chunk.length;
  }
  if (carry.length) yield { text: Buffer.concat(carry).toString("utf8"), lineNo: lineNo + 1, offset: lineStart, bytes: pos - lineStart, terminated: false };
}

/** Reads one line back by its offset and length (as readLines gave them), without the newline or a trailing CR. */
export function lineText(buf: Buffer): string {
  const end = buf.length && buf[buf.length - 1] === 13 ? buf.length - 1 : buf.length;
  return buf.toString("utf8", 0, end);
}
