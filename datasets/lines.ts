// Lines of a (possibly huge) text file, streamed: memory holds one chunk and one line.
import { createReadStream } from "node:fs";
import { DatasetError } from "./manifest.ts";

export interface LineBytes {
  /** The line's bytes, without the newline (a view of the read buffer: use it before the next line). */
  bytes: Buffer;
  /** 1-based. */
  lineNo: number;
  /** Byte offset of the line in the file (its length is `bytes.length`). */
  offset: number;
  /** Whether the line ended with a newline (a missing one on the last line may mean a torn write). */
  terminated: boolean;
}

export interface Line {
  text: string;
  /** 1-based. */
  lineNo: number;
}

/** The lines' bytes, not decoded (pass 1 of a build hashes them and keeps their offsets). */
export async function* readLineBytes(path: string): AsyncGenerator<LineBytes> {
  let carry: Buffer[] = [];
  let lineNo = 0;
  let lineStart = 0;
  let pos = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
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

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A line's text (a trailing CR dropped), or undefined when its bytes are not UTF-8. */
export function lineText(bytes: Buffer): string | undefined {
  const end = bytes.length && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
  try {
    return utf8.decode(bytes.subarray(0, end));
  } catch {
    return undefined;
  }
}

/** The lines as text; a line that is not UTF-8 is an error naming file and line. */
export async function* readLines(path: string): AsyncGenerator<Line> {
  for await (const line of readLineBytes(path)) {
    const text = lineText(line.bytes);
    if (text === undefined) throw new DatasetError(`${path}:${line.lineNo}: not UTF-8 text (an invalid byte sequence: a corrupted or binary line)`);
    yield { text, lineNo: line.lineNo };
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
