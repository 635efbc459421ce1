// One Arrow IPC stream file, fed row by row, written in record batches through apache-arrow's
// stream writer. Batches are cut at BATCH_ROWS rows or BATCH_BYTES of text, far below the 2 GiB a
// Utf8 column of one batch can hold, so Utf8 always suffices (no LargeUtf8 needed).
import { once } from "node:events";
import { finished } from "node:stream/promises";
import { RecordBatch, RecordBatchStreamWriter, Struct, vectorFromArray, type Schema } from "apache-arrow";
import { arrowSchema, arrowValue } from "./features.ts";
import { CountedFile, type FileEntry } from "./files.ts";
import { rowColumns, type TrlRow } from "./schema.ts";

const BATCH_ROWS = 1000;
const BATCH_BYTES = 64 << 20;

export class ArrowStreamFile {
  private static schema?: Schema;
  private readonly file: CountedFile;
  private readonly schema: Schema;
  private readonly columns = rowColumns();
  private readonly writer = RecordBatchStreamWriter.throughNode({ autoDestroy: true });
  private batch: Record<string, unknown>[] = [];
  private batchBytes = 0;
  private rows = 0;

  constructor(absPath: string, path: string) {
    this.file = new CountedFile(absPath, path);
    this.schema = ArrowStreamFile.schema ??= arrowSchema();
    this.writer.on("data", (chunk: Uint8Array) => this.file.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
  }

  /** `textBytes`: about how much string data the row holds (its JSON line length will do). */
  async add(row: TrlRow, textBytes: number): Promise<void> {
    this.batch.push(Object.fromEntries(this.columns.map(([name, c]) => [name, arrowValue(c, row[name as keyof TrlRow])])));
    this.batchBytes += textBytes;
    this.rows++;
    if (this.batch.length >= BATCH_ROWS || this.batchBytes >= BATCH_BYTES) await this.flush();
  }

  private async flush(): Promise<void> {
    if (!this.batch.length) return;
    const vector = vectorFromArray(this.batch, new Struct(this.schema.fields));
    this.batch = [];
    this.batchBytes = 0;
    if (!this.writer.write(new RecordBatch(this.schema, vector.data[0]))) await once(this.writer, "drain");
  }

  async close(): Promise<FileEntry> {
    await this.flush();
    this.writer.end();
    await finished(this.writer);
    const entry = this.file.close();
    return { ...entry, rows: this.rows };
  }
}
