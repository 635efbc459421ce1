// Text files read from users (tasks, rows, populations, NDJSON): their bytes must be UTF-8. Node's
// own decoding would turn a corrupted byte into U+FFFD silently (and a corrupted task id would reach a
// dataset); here it is an error naming the file and the line.
import { createReadStream } from "node:fs";
import { UserError } from "./errors.ts";

export const NOT_UTF8 = "not UTF-8 text (an invalid byte sequence: a corrupted or binary line)";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A line's text (a trailing CR dropped), or undefined when its bytes are not UTF-8. */
export function lineText(bytes: Uint8Array): string | undefined {
  const end = bytes.length && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
  try {
    return utf8.decode(bytes.subarray(0, end));
  } catch {
    return undefined;
  }
}

/** 1-based number of the first line of `bytes` that is not UTF-8, or undefined when all are. */
export function firstNonUtf8Line(bytes: Buffer): number | undefined {
  let lineNo = 1;
  for (let start = 0; start <= bytes.length; lineNo++) {
    const nl = bytes.indexOf(10, start);
    const end = nl < 0 ? bytes.length : nl;
    if (lineText(bytes.subarray(start, end)) === undefined) return lineNo;
    if (nl < 0) break;
    start = nl + 1;
  }
  return undefined;
}

type ErrorClass = new (message: string) => Error;

/** A whole file's bytes as text; bytes that are not UTF-8 throw `Err` naming `path` and the line. */
export function utf8Text(bytes: Buffer, path: string, Err: ErrorClass = UserError): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new Err(`${path}:${firstNonUtf8Line(bytes) ?? "?"}: ${NOT_UTF8}`);
  }
}

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

/** The lines' bytes of a (possibly huge) file, streamed: memory holds one chunk and one line. */
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

/** The first line of the file that is not UTF-8 (for a streamed reader whose decoder failed somewhere). */
export async function firstNonUtf8LineOf(path: string): Promise<number | undefined> {
  for await (const line of readLineBytes(path)) if (lineText(line.bytes) === undefined) return line.lineNo;
  return undefined;
}
