// Arrow IPC stream files, written batch by batch with apache-arrow. Each record batch is serialized
// on its own as a one-batch stream (schema, batch, end marker) and only its batch message kept, so
// batches can be made apart (in worker threads) and a file is: the schema message once, every
// batch message in order, one end marker: a valid multi-batch stream. Batches are cut at
// BATCH_ROWS rows or BATCH_BYTES of input (what a worker holds at once), far below the 2 GiB a
// Utf8 column of one batch can hold, so Utf8 always suffices (no LargeUtf8 needed).
import { makeData, RecordBatch, Struct, Table, tableToIPC, type Schema } from "apache-arrow";
import type { Hasher } from "../env/fhir/index.ts";
import { columnWriter, type ColumnWriter } from "./columns.ts";
import { arrowSchema } from "./features.ts";
import { CountedFile, type FileEntry, type WriteBudget } from "./files.ts";
import type { TrlRowOf } from "./convert.ts";
import type { Text } from "./rowline.ts";

export const BATCH_ROWS = 1000;
export const BATCH_BYTES = 4 << 20;

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

/** The column writers of the last batch finished in this thread: their buffers serve the next one. */
let idleWriters: ColumnWriter[] | undefined;

/**
 * A record batch made a row at a time (a row's strings need not outlive its turn), in column
 * buffers kept from batch to batch: fresh ones each time made V8 collect for their sake alone.
 */
export class ArrowBatchBuilder {
  private readonly schema = streamParts().schema;
  private readonly names = this.schema.fields.map((f) => f.name as keyof TrlRowOf<Text>);
  private readonly writers: ColumnWriter[];
  private rows = 0;

  constructor() {
    this.writers = idleWriters ?? this.schema.fields.map((f) => columnWriter(f.type));
    idleWriters = undefined;
  }

  add(row: TrlRowOf<Text>): void {
    for (let i = 0; i < this.writers.length; i++) this.writers[i]!.add(row[this.names[i]!]);
    this.rows++;
  }

  /** The record batch message (no schema message, no end marker). */
  finish(): Uint8Array {
    const { header, eos } = streamParts();
    const batch = new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: this.rows, nullCount: 0, children: this.writers.map((w) => w.finish()) }));
    // tableToIPC copies the columns into the message it returns: the buffers are free again after it.
    const bytes = tableToIPC(new Table([batch]), "stream");
    for (const w of this.writers) w.reset();
    idleWriters = this.writers;
    return bytes.subarray(header.length, bytes.length - eos.length);
  }
}

export class ArrowStreamFile {
  private readonly file: CountedFile;
  private rows = 0;

  constructor(absPath: string, path: string, hasher: Hasher, budget?: WriteBudget) {
    this.file = new CountedFile(absPath, path, hasher, budget);
    this.file.write(streamParts().header);
  }

  get path(): string {
    return this.file.path;
  }

  get bytes(): number {
    return this.file.bytes;
  }

  addBatch(message: Uint8Array, rows: number, released?: () => void): void {
    if (!rows) return released?.();
    this.file.write(message, 0, released);
    this.rows += rows;
  }

  async close(): Promise<FileEntry> {
    this.file.write(streamParts().eos);
    return { ...(await this.file.close()), rows: this.rows };
  }
}
