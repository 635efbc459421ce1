// NDJSON in and out. Import: one resource per line, or a searchset/collection/transaction Bundle
// per line or per file (entries are added in order). Export: one file per type, byte-stable, each
// with an index sidecar `<Type>.ndjson.idx` (ndjson-index.ts) that later loads use instead of
// parsing the file, once they have checked that it describes exactly this file.
import { createHash } from "node:crypto";
import { closeSync, createReadStream, createWriteStream, existsSync, fstatSync, openSync, readFileSync, read as readFd } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { constants as bufferConstants } from "node:buffer";
import { join } from "node:path";
import { once } from "node:events";
import { BaseStore, StoreBuilder } from "./store.ts";
import { compactJson } from "./pretty.ts";
import { parseLossless } from "./lossless.ts";
import type { TypeTable } from "./table.ts";
import { Hasher, type HashResult } from "./ndjson-hash.ts";
import { INDEX_SUFFIX, IndexError, checkRowSpans, encodeNdjsonIndex, readNdjsonIndex, tableFromIndex, type NdjsonIndex } from "./ndjson-index.ts";
import { saveIndex } from "./ndjson-index-stream.ts";
import type { FhirStoreBuilder } from "./types.ts";
import { firstNonUtf8LineOf, NOT_UTF8, UserError } from "../util/index.ts";

export interface LoadProgress {
  file: string;
  resources: number;
  bytes: number;
}

export interface LoadOptions {
  onProgress?: (p: LoadProgress) => void;
  /** Why an index sidecar was not used (stale, damaged, another version...): the file was parsed instead. */
  onWarning?: (message: string) => void;
  /** Use `<file>.idx` index sidecars where present and valid (default true; false always parses). */
  useIndex?: boolean;
}

function addLine(line: string, builder: FhirStoreBuilder, where: string): number {
  if (line.startsWith('{"resourceType":"Bundle"') || /^\s*\{\s*"resourceType"\s*:\s*"Bundle"/.test(line)) {
    let bundle: { entry?: { resource?: unknown }[] };
    try {
      bundle = parseLossless(line) as typeof bundle;
    } catch (e) {
      throw new Error(`${where}: invalid JSON: ${(e as Error).message}`);
    }
    let n = 0;
    for (const e of bundle.entry ?? []) {
      if (e.resource === undefined) continue;
      // parseLossless kept number lexemes as Decimal; addResource writes them back as given.
      builder.addResource(e.resource as never);
      n++;
    }
    return n;
  }
  try {
    builder.addText(line);
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`);
  }
  return 1;
}

// ---- load ----

/** A file whose sidecar passed the checks that need no reading of the file itself. */
interface Indexed {
  file: string;
  fd: number;
  size: number;
  index: NdjsonIndex;
  hash?: Promise<HashResult>;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Open `file` and check its sidecar, if it has one; undefined (after a warning if there was a sidecar) means parse. */
function openIndexed(file: string, warn: (m: string) => void): Indexed | undefined {
  const sidecar = file + INDEX_SUFFIX;
  if (!existsSync(sidecar)) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const size = fstatSync(fd).size;
    const index = readNdjsonIndex(readFileSync(sidecar));
    if (index.header.source.bytes !== size) throw new IndexError(`stale (made for a file of ${index.header.source.bytes} bytes, this one has ${size})`);
    if (size > bufferConstants.MAX_LENGTH) throw new IndexError("the file is too large to hold in one buffer");
    return { file, fd, size, index };
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    warn(`${sidecar}: index not used (${message(e)}); parsing ${file}`);
    return undefined;
  }
}

/** Fill `buf` with the first `buf.length` bytes of `fd`, checking that the file has no more. */
async function readWhole(fd: number, buf: Buffer): Promise<void> {
  const readAt = (target: Buffer, offset: number, length: number, position: number) =>
    new Promise<number>((done, fail) => readFd(fd, target, offset, length, position, (err, n) => (err ? fail(err) : done(n))));
  const size = buf.length;
  let at = 0;
  while (at < size) {
    const n = await readAt(buf, at, Math.min(size - at, 1 << 30), at);
    if (n === 0) throw new IndexError("the file got shorter while being read");
    at += n;
  }
  if ((await readAt(Buffer.alloc(1), 0, 1, size)) !== 0) throw new IndexError("the file got longer while being read");
}

/** Load one file through its sidecar into `builder`; the rows added, or undefined (after a warning) to parse it instead. */
async function loadIndexed(x: Indexed, builder: StoreBuilder, warn: (m: string) => void): Promise<number | undefined> {
  const h = x.index.header;
  const refuse = (why: string) => {
    warn(`${x.file}${INDEX_SUFFIX}: index not used (${why}); parsing ${x.file}`);
    return undefined;
  };
  if (builder.hasType(h.type)) return refuse(`the load already holds ${h.type} resources`);
  // The file is read on the thread pool and hashed on the worker while the table is built here.
  const buf = Buffer.allocUnsafe(x.size);
  const filled = readWhole(x.fd, buf);
  filled.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
  let table: TypeTable;
  try {
    table = tableFromIndex(x.index, buf);
    await filled;
  } catch (e) {
    await filled.catch(() => undefined);
    return refuse(message(e));
  }
  const hash = await x.hash!;
  if ("error" in hash) return refuse(hash.error);
  if (hash.bytes !== x.size || hash.sha256 !== h.source.sha256) return refuse("stale: the file's sha256 differs from the one indexed");
  try {
    checkRowSpans(table, buf);
  } catch (e) {
    return refuse(message(e));
  }
  builder.adoptTable(table, h.maxNumericId);
  return table.size;
}

/** Parse one file into the builder; returns resources added. */
async function parseFile(file: string, builder: FhirStoreBuilder, total: number, options: LoadOptions): Promise<number> {
  let lineNo = 0;
  let bytes = 0;
  let carry = "";
  let whole: string[] | undefined; // a pretty-printed (multi-line) JSON document
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const decode = async (raw?: Buffer) => {
    try {
      return decoder.decode(raw, { stream: raw !== undefined });
    } catch {
      throw new UserError(`${file}:${(await firstNonUtf8LineOf(file)) ?? "?"}: ${NOT_UTF8}`);
    }
  };
  for await (const raw of createReadStream(file, { highWaterMark: 1 << 22 }) as AsyncIterable<Buffer>) {
    bytes += raw.length;
    const chunk = await decode(raw);
    if (whole) {
      whole.push(chunk);
      continue;
    }
    const text = carry + chunk;
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl < 0) break;
      const line = text.slice(start, nl).trim();
      start = nl + 1;
      lineNo++;
      if (line === "") continue;
      if (lineNo === 1 && line === "{") {
        whole = [text.slice(0)];
        start = text.length;
        break;
      }
      total += addLine(line, builder, `${file}:${lineNo}`);
    }
    carry = whole ? "" : text.slice(start);
    options.onProgress?.({ file, resources: total, bytes });
  }
  await decode(); // the end: a sequence cut short there is not UTF-8 either
  if (whole) total += addLine(compactJson(whole.join("")), builder, file);
  else if (carry.trim() !== "") total += addLine(carry.trim(), builder, `${file}:${lineNo + 1}`);
  options.onProgress?.({ file, resources: total, bytes });
  return total;
}

/**
 * Stream NDJSON files (or single-document JSON Bundles) into the builder; returns resources added.
 * A file with a valid index sidecar (`<file>.idx`, written by exportNdjson) is not parsed: its
 * table is read from the sidecar and its rows' texts from the file's bytes on first use, once the
 * file's size and sha256 (computed on a worker thread meanwhile) match the ones the sidecar was
 * made for. Anything else parses the file, with a warning through `onWarning` when a sidecar was
 * there but not used.
 */
export async function loadNdjson(paths: string | string[], builder: FhirStoreBuilder, options: LoadOptions = {}): Promise<number> {
  const files = Array.isArray(paths) ? paths : [paths];
  const warn = (m: string) => options.onWarning?.(m);
  const indexed = options.useIndex !== false && builder instanceof StoreBuilder ? files.map((f) => openIndexed(f, warn)) : [];
  let hasher: Hasher | undefined;
  let total = 0;
  try {
    for (const x of indexed) {
      if (!x) continue;
      try {
        hasher ??= new Hasher();
        x.hash = hasher.hash(x.fd); // queued now: the worker hashes ahead of the loop below
      } catch (e) {
        x.hash = Promise.resolve({ error: `cannot start the hash worker: ${message(e)}` });
      }
    }
    for (const [i, file] of files.entries()) {
      const x = indexed[i];
      if (x) {
        const n = await loadIndexed(x, builder as StoreBuilder, warn);
        await x.hash; // the worker is done with the descriptor
        closeSync(x.fd);
        x.fd = -1;
        if (n !== undefined) {
          total += n;
          options.onProgress?.({ file, resources: total, bytes: x.size });
          continue;
        }
      }
      total = await parseFile(file, builder, total, options);
    }
  } finally {
    await hasher?.close(); // before closing descriptors it may still be reading
    for (const x of indexed) if (x && x.fd >= 0) closeSync(x.fd);
  }
  return total;
}

export interface ExportOptions {
  /** Write the index sidecar `<Type>.ndjson.idx` beside each file (default true). */
  index?: boolean;
}

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Write one `<Type>.ndjson` per resource type into `dir` (temp file, then rename), each with its
 * index sidecar `<Type>.ndjson.idx` unless `options.index` is false. Returns the NDJSON paths.
 */
export async function exportNdjson(store: import("./types.ts").FhirStore, dir: string, options: ExportOptions = {}): Promise<string[]> {
  if (!(store instanceof BaseStore)) throw new Error("exportNdjson needs a store from createStoreBuilder().build()");
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const type of store.types().sort()) {
    const table = store.table(type)!;
    const path = join(dir, `${type}.ndjson`);
    const tmp = `${path}.tmp-${process.pid}`;
    const out = createWriteStream(tmp);
    const n = table.size;
    const start = new Float64Array(n);
    const length = new Int32Array(n);
    const hash = createHash("sha256");
    // A raw lone surrogate is written as U+FFFD: the file would then not say what the index does.
    let indexable = options.index !== false;
    let pos = 0;
    try {
      let buf: string[] = [];
      let size = 0;
      const flush = async () => {
        const chunk = Buffer.from(buf.join(""), "utf8");
        hash.update(chunk);
        buf = [];
        size = 0;
        if (!out.write(chunk)) await once(out, "drain");
      };
      for (let row = 0; row < n; row++) {
        const line = compactJson(table.peekText(row));
        const bytes = Buffer.byteLength(line, "utf8");
        start[row] = pos;
        length[row] = bytes;
        pos += bytes + 1;
        if (indexable && !isWellFormed(line)) indexable = false;
        buf.push(line, "\n");
        size += line.length;
        if (size > 1 << 20) await flush();
      }
      if (buf.length) await flush();
      out.end();
      await once(out, "finish");
      await rename(tmp, path);
    } catch (e) {
      out.destroy();
      await rm(tmp, { force: true });
      throw e;
    }
    await saveIndex(path, indexable ? { rows: n, sidecar: encodeNdjsonIndex(table, { start, length }, { bytes: pos, sha256: hash.digest("hex") }) } : { skipped: "not indexable" });
    written.push(path);
  }
  return written;
}
