// One shard of a config's split: its JSONL file and, when Arrow is built, the same rows as an Arrow
// stream. Closed shards are renamed to carry a hash of their content: `datasets` keys its cache of a
// local folder on the files' names and sizes, so a rebuild whose rows differ only in same-length
// values (random Bundle ids) would otherwise load the previous build's rows from the cache.
import { createHash } from "node:crypto";
import { renameSync } from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import { ArrowStreamFile } from "./arrow.ts";
import { HashedFile, shardName } from "./files.ts";
import type { ManifestFile } from "./manifest.ts";

/** `{split}-0000K-of-0000N-{hash}`: the hash is 16 hex digits of the shard's content. */
export const SHARD_FILE = /^(.+)-\d{5}-of-\d{5}(?:-[0-9a-f]{16})?\.(jsonl|arrow)$/;

export class Shard {
  private readonly jsonl: HashedFile;
  private readonly arrow: ArrowStreamFile | undefined;
  private readonly base: string;

  /** `folder`: the config's folder in the dataset (data, dpo, kto); `schema`: its row schema. */
  constructor(
    private readonly dir: string,
    private readonly folder: string,
    split: string,
    shard: number,
    shards: number,
    schema: z.ZodObject,
    arrow: boolean,
  ) {
    this.base = shardName(split, shard, shards);
    this.jsonl = new HashedFile(join(dir, folder, `${this.base}.jsonl`), `${folder}/${this.base}.jsonl`);
    this.arrow = arrow ? new ArrowStreamFile(join(dir, folder, `${this.base}.arrow`), `${folder}/${this.base}.arrow`, schema) : undefined;
  }

  add(row: object): void {
    const line = `${JSON.stringify(row)}\n`;
    this.jsonl.write(line, 1);
    this.arrow?.add(row, line.length);
  }

  /** The shard's files (JSONL first), renamed to their content-hashed names. */
  close(): ManifestFile[] {
    const files = [this.jsonl.close(), ...(this.arrow ? [this.arrow.close()] : [])];
    const hash = createHash("sha256")
      .update(files.map((f) => f.sha256).join(""))
      .digest("hex")
      .slice(0, 16);
    return files.map((f) => {
      const path = f.path.replace(/(\.[a-z]+)$/, `-${hash}$1`);
      renameSync(join(this.dir, f.path), join(this.dir, path));
      return { ...f, path };
    });
  }
}

/** What the card lists of one split of a config: its rows and files (JSONL, and Arrow when built). */
export interface SplitFiles {
  name: string;
  rows: number;
  jsonl: { files: string[]; bytes: number };
  arrow?: { files: string[]; bytes: number };
  openai?: string;
}

/**
 * Writes one split of a config in shards of at most `shardRows` rows, each item made into its row
 * only when written (memory holds one row and one Arrow batch). `each` sees every row before it is
 * written (progress, stopping, other formats). Returns the manifest entries and the card's split.
 */
export async function writeSplit<E, T extends object>(
  dir: string,
  folder: string,
  split: string,
  items: readonly E[],
  o: { schema: z.ZodObject; arrow: boolean; shardRows: number; row: (item: E) => T; each?: (row: T) => Promise<void> | void },
): Promise<{ files: ManifestFile[]; split: SplitFiles }> {
  const rows = items;
  const files: ManifestFile[] = [];
  const out: SplitFiles = { name: split, rows: rows.length, jsonl: { files: [], bytes: 0 }, ...(o.arrow ? { arrow: { files: [], bytes: 0 } } : {}) };
  const shards = Math.ceil(rows.length / o.shardRows);
  for (let k = 0; k < shards; k++) {
    const shard = new Shard(dir, folder, split, k, shards, o.schema, o.arrow);
    for (const item of rows.slice(k * o.shardRows, (k + 1) * o.shardRows)) {
      const row = o.row(item);
      await o.each?.(row);
      shard.add(row);
    }
    for (const f of shard.close()) {
      files.push(f);
      const list = f.path.endsWith(".arrow") ? out.arrow! : out.jsonl;
      list.files.push(f.path);
      list.bytes += f.bytes;
    }
  }
  return { files, split: out };
}
