// One Arrow IPC stream file, fed row by row, written in record batches serialized by apache-arrow.
// Each batch is serialized on its own as a one-batch stream (schema, batch, end marker); the file
// gets the schema message once, every batch message, and one end marker: a valid multi-batch
// stream, written synchronously so memory holds one batch. Batches are cut at BATCH_ROWS rows or
// BATCH_BYTES of text, far below the 2 GiB a Utf8 column of one batch can hold, so Utf8 always
// suffices (no LargeUtf8 needed).
import { RecordBatch, Struct, Table, tableToIPC, vectorFromArray, type Schema } from "apache-arrow";
import { arrowSchema, arrowValue } from "./features.ts";
import { CountedFile, type FileEntry } from "./files.ts";
import { rowColumns, type TrlRow } from "./schema.ts";

const BATCH_ROWS = 1000;
const BATCH_BYTES = 16 << 20;

let shared: { schema: Schema; header: Uint8Array; eos: Uint8Array } | undefined;
/** The schema, its stream header (the schema message) and the end-of-stream marker. */
function streamParts() {
  if (!shared) {
    const schema = arrowSchema();
    const empty = tableToIPC(new Table(schema), "stream");
    shared = { schema, header: empty.subarray(0, empty.length - 8), eos: empty.subarray(empty.length - 8) };
  }
  return shared;
}

export class ArrowStreamFile {
  private readonly file: CountedFile;
  private readonly parts = streamParts();
  private readonly columns = rowColumns();
  private batch: Record<string, unknown>[] = [];
  private batchBytes = 0;
  private rows = 0;

  constructor(absPath: string, path: string) {
    this.file = new CountedFile(absPath, path);
    this.file.write(Buffer.from(this.parts.header));
  }

  /** `textBytes`: about how much string data the row holds (its JSON line length will do). */
  add(row: TrlRow, textBytes: number): void {
    this.batch.push(Object.fromEntries(this.columns.map(([name, c]) => [name, arrowValue(c, row[name as keyof TrlRow])])));
    this.batchBytes += textBytes;
    this.rows++;
    if (this.batch.length >= BATCH_ROWS || this.batchBytes >= BATCH_BYTES) this.flush();
  }

  private flush(): void {
    if (!this.batch.length) return;
    const { schema, header, eos } = this.parts;
    const batch = new RecordBatch(schema, vectorFromArray(this.batch, new Struct(schema.fields)).data[0]);
    this.batch = [];
    this.batchBytes = 0;
    const bytes = tableToIPC(new Table([batch]), "stream");
    this.file.write(Buffer.from(bytes.buffer, bytes.byteOffset + header.length, bytes.length - header.length - eos.length));
  }

  close(): FileEntry {
    this.flush();
    this.file.write(Buffer.from(this.parts.eos));
    return { ...this.file.close(), rows: this.rows };
  }
}
