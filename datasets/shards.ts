// The one way a config's split is written: shards of at most --shard-rows rows, each a JSONL file and,
// when Arrow is built, the same rows as an Arrow stream. Shard files carry a hash of their content in
// their final names: `datasets` keys its cache of a local folder on the files' names and sizes, so a
// rebuild whose rows differ only in same-length values (random Bundle ids) would otherwise load the
// previous build's rows from the cache. A split may be written before its row count is known (the
// tokens config keeps only the rows with a token sequence): shards are written under provisional
// names and renamed to `-0000K-of-0000N-{hash}` when the split closes.
import { createHash } from "node:crypto";
import { renameSync } from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import { ArrowStreamFile } from "./arrow.ts";
import { HashedFile, shardName } from "./files.ts";
import type { ManifestFile } from "./manifest.ts";

/** `{split}-0000K-of-0000N-{hash}`: the hash is 16 hex digits of the shard's content. */
export const SHARD_FILE = /^(.+)-\d{5}-of-\d{5}(?:-[0-9a-f]{16})?\.(jsonl|arrow)$/;

class Shard {
  private readonly jsonl: HashedFile;
  private readonly arrow: ArrowStreamFile | undefined;

  /** `base`: the shard's provisional path in the dataset, without extension. */
  constructor(dir: string, base: string, schema: z.ZodObject, arrow: boolean) {
    this.jsonl = new HashedFile(join(dir, `${base}.jsonl`), `${base}.jsonl`);
    this.arrow = arrow ? new ArrowStreamFile(join(dir, `${base}.arrow`), `${base}.arrow`, schema) : undefined;
  }

  add(row: object): void {
    const line = `${JSON.stringify(row)}\n`;
    this.jsonl.write(line, 1);
    this.arrow?.add(row, line.length);
  }

  /** The shard's files (JSONL first) under their provisional paths, and the hash of their content. */
  close(): { files: ManifestFile[]; hash: string } {
    const files = [this.jsonl.close(), ...(this.arrow ? [this.arrow.close()] : [])];
    const hash = createHash("sha256")
      .update(files.map((f) => f.sha256).join(""))
      .digest("hex")
      .slice(0, 16);
    return { files, hash };
  }
}

/** What the card lists of one split of a config: its rows and files (JSONL, and Arrow when built). */
export interface SplitFiles {
  name: string;
  rows: number;
  jsonl: { files: string[]; bytes: number };
  arrow?: { files: string[]; bytes: number };
  openai?: string;
  /** Each row's length, in row order, where the build measured it (the card's length percentiles). */
  lengths?: number[];
}

export interface SplitOptions {
  /** The config's row schema (the Arrow schema and features are made from it). */
  schema: z.ZodObject;
  arrow: boolean;
  shardRows: number;
}

/** Writes one split of a config (`folder`: data, dpo, kto, tokens) row by row; memory holds one Arrow batch. */
export class SplitWriter {
  private shard: Shard | undefined;
  private inShard = 0;
  private readonly closed: { files: ManifestFile[]; hash: string }[] = [];
  rows = 0;

  constructor(
    private readonly dir: string,
    private readonly folder: string,
    readonly split: string,
    private readonly o: SplitOptions,
  ) {}

  add(row: object): void {
    // Split names are letters, digits and _: `{split}-{k}.part` is no other split's file.
    this.shard ??= new Shard(this.dir, `${this.folder}/${this.split}-${this.closed.length}.part`, this.o.schema, this.o.arrow);
    this.shard.add(row);
    this.rows++;
    if (++this.inShard === this.o.shardRows) this.closeShard();
  }

  private closeShard(): void {
    if (!this.shard) return;
    this.closed.push(this.shard.close());
    this.shard = undefined;
    this.inShard = 0;
  }

  /** Renames the shards to their final names; returns the manifest entries and the card's split (no files for no rows). */
  close(): { files: ManifestFile[]; split: SplitFiles } {
    this.closeShard();
    const files: ManifestFile[] = [];
    const out: SplitFiles = { name: this.split, rows: this.rows, jsonl: { files: [], bytes: 0 }, ...(this.o.arrow ? { arrow: { files: [], bytes: 0 } } : {}) };
    this.closed.forEach((shard, k) => {
      for (const f of shard.files) {
        const ext = f.path.slice(f.path.lastIndexOf("."));
        const path = `${this.folder}/${shardName(this.split, k, this.closed.length)}-${shard.hash}${ext}`;
        renameSync(join(this.dir, f.path), join(this.dir, path));
        files.push({ ...f, path });
        const list = ext === ".arrow" ? out.arrow! : out.jsonl;
        list.files.push(path);
        list.bytes += f.bytes;
      }
    });
    return { files, split: out };
  }
}

/**
 * Writes one split of a config from a list of items, each made into its row only when written. `each`
 * sees every row before it is written (progress, stopping, other formats).
 */
export async function writeSplit<E, T extends object>(
  dir: string,
  folder: string,
  split: string,
  items: readonly E[],
  o: SplitOptions & { row: (item: E) => T; each?: (row: T) => Promise<void> | void },
): Promise<{ files: ManifestFile[]; split: SplitFiles }> {
  const w = new SplitWriter(dir, folder, split, o);
  for (const item of items) {
    const row = o.row(item);
    await o.each?.(row);
    w.add(row);
  }
  return w.close();
}
