// Lines of a (possibly huge) text file, streamed: memory holds one chunk and one line.
import { createReadStream } from "node:fs";

export interface Line {
  text: string;
  /** 1-based. */
  lineNo: number;
  /** Whether the line ended with a newline (a missing one on the last line may mean a torn write). */
  terminated: boolean;
}

/** `onChunk` sees every byte of the file (e.g. to hash it while reading). */
export async function* readLines(path: string, onChunk?: (chunk: Buffer) => void): AsyncGenerator<Line> {
  let carry: Buffer[] = [];
  let lineNo = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    onChunk?.(chunk);
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, nl);
      const text = carry.length ? Buffer.concat([...carry, piece]).toString("utf8") : piece.toString("utf8");
      carry = [];
      start = nl + 1;
      lineNo++;
      yield { text: text.endsWith("\r") ? text.slice(0, -1) : text, lineNo, terminated: true };
    }
    if (start < chunk.length) carry.push(chunk.subarray(start));
  }
  if (carry.length) yield { text: Buffer.concat(carry).toString("utf8"), lineNo: lineNo + 1, terminated: false };
}
