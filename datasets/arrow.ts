// Arrow IPC stream files, a record batch at a time, made with apache-arrow's own builders
// (vectorFromArray per column). A file is the schema message once, every batch message in order,
// one end marker. Batches are cut at BATCH_ROWS rows or BATCH_BYTES of row text, far below the
// 2 GiB one Utf8 column of a batch can hold.
import { makeData, RecordBatch, Struct, Table, tableToIPC, vectorFromArray, type Schema } from "apache-arrow";
import { arrowSchema } from "./features.ts";
import { HashedFile } from "./files.ts";
import type { ManifestFile } from "./manifest.ts";
import type { z } from "zod";
import { rowColumns, TrlRow, type Column } from "./schema.ts";

export const BATCH_ROWS = 1000;
export const BATCH_BYTES = 4 << 20;

/** A row's value as its Arrow column holds it: JSON values as their text, integers as bigint. */
function cell(c: Column, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (c.kind) {
    case "json":
      return JSON.stringify(v);
    case "int64":
      return BigInt(v as number);
    case "list":
      return (v as unknown[]).map((x) => cell(c.item, x));
    default:
      return v;
  }
}

type Row = Record<string, unknown>;

/** One Arrow file of rows of `rowSchema` (the SFT row unless another config's). */
export class ArrowStreamFile {
  private readonly file: HashedFile;
  private readonly schema: Schema;
  private readonly columns: [string, Column][];
  private readonly eos: Uint8Array;
  private readonly headerBytes: number;
  private rows: Row[] = [];
  private pending = 0;

  constructor(abs: string, rel: string, rowSchema: z.ZodObject = TrlRow) {
    this.schema = arrowSchema(rowSchema);
    this.columns = rowColumns(rowSchema);
    this.file = new HashedFile(abs, rel);
    const empty = tableToIPC(new Table(this.schema), "stream");
    this.eos = empty.subarray(empty.length - 8);
    this.headerBytes = empty.length - 8;
    this.file.write(empty.subarray(0, this.headerBytes));
  }

  /** `bytes`: the row's size as text (what a batch is cut by). */
  add(row: object, bytes: number): void {
    this.rows.push(row as Row);
    this.pending += bytes;
    if (this.rows.length >= BATCH_ROWS || this.pending >= BATCH_BYTES) this.flush();
  }

  private flush(): void {
    if (!this.rows.length) return;
    const children = this.columns.map(([name, c], i) => vectorFromArray(this.rows.map((r) => cell(c, r[name])) as never[], this.schema.fields[i]!.type).data[0]!);
    const batch = new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: this.rows.length, nullCount: 0, children }));
    const bytes = tableToIPC(new Table([batch]), "stream");
    this.file.write(bytes.subarray(this.headerBytes, bytes.length - 8), this.rows.length);
    this.rows = [];
    this.pending = 0;
  }

  close(): ManifestFile {
    this.flush();
    this.file.write(this.eos);
    return this.file.close();
  }
}
