// Lines of a (possibly huge) text file as text, streamed: memory holds one chunk and one line.
import { DatasetError } from "./manifest.ts";
import { lineText, NOT_UTF8, readLineBytes } from "../env/util/index.ts";

/** The lines as text (`lineNo` 1-based); a line that is not UTF-8 is an error naming file and line. */
export async function* readLines(path: string): AsyncGenerator<{ text: string; lineNo: number }> {
  for await (const line of readLineBytes(path)) {
    const text = lineText(line.bytes);
    if (text === undefined) throw new DatasetError(`${path}:${line.lineNo}: ${NOT_UTF8}`);
    yield { text, lineNo: line.lineNo };
  }
}
