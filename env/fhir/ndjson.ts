// NDJSON in and out. Import: one resource per line, or a searchset/collection/transaction Bundle
// per line or per file (entries are added in order). Export: one file per type, byte-stable, each
// with an index sidecar `<Type>.ndjson.idx` (ndjson-index.ts) that later loads use instead of
// parsing the file, once they have checked that it describes exactly this file.
import { createHash } from "node:crypto";
import { closeSync, createReadStream, createWriteStream, existsSync, fstatSync, openSync, readFileSync, read as readFd } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { constants as bufferConstants } from "node:buffer";
import { dirname, extname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { BaseStore, StoreBuilder } from "./store.ts";
import { compactJson } from "./pretty.ts";
import { parseLossless } from "./lossless.ts";
import type { TypeTable } from "./table.ts";
import { INDEX_SUFFIX, IndexError, NdjsonIndexer, checkRowSpans, encodeNdjsonIndex, readNdjsonIndex, tableFromIndex, type NdjsonIndex } from "./ndjson-index.ts";
import type { FhirStoreBuilder } from "./types.ts";

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

// ---- the sha256 of a file, on another thread ----

/** Hashes the file behind an open descriptor to its end (the worker shares the process's descriptors). */
const HASH_WORKER = `
const { parentPort } = require("node:worker_threads");
const { readSync } = require("node:fs");
const { createHash } = require("node:crypto");
const chunk = Buffer.allocUnsafe(1 << 22);
parentPort.on("message", ({ id, fd }) => {
  try {
    const h = createHash("sha256");
    let pos = 0;
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, pos);
      if (n === 0) break;
      h.update(n === chunk.length ? chunk : chunk.subarray(0, n));
      pos += n;
    }
    parentPort.postMessage({ id, sha256: h.digest("hex"), bytes: pos });
  } catch (e) {
    parentPort.postMessage({ id, error: String((e && e.message) || e) });
  }
});
`;

type HashResult = { sha256: string; bytes: number } | { error: string };

class Hasher {
  private readonly worker: Worker;
  private readonly pending = new Map<number, (r: HashResult) => void>();
  private next = 0;
  private failed: string | undefined;

  constructor() {
    // Plain JavaScript on node builtins: runs the same under tsx, vitest and plain node.
    // Not unref'd: a load awaiting a hash must keep the process alive (close() always terminates it).
    this.worker = new Worker(HASH_WORKER, { eval: true, execArgv: [] });
    this.worker.on("message", (m: { id: number } & HashResult) => {
      this.pending.get(m.id)?.(m);
      this.pending.delete(m.id);
    });
    const fail = (why: string) => {
      this.failed ??= why;
      for (const done of this.pending.values()) done({ error: this.failed });
      this.pending.clear();
    };
    this.worker.on("error", (e) => fail(`hash worker failed: ${e.message}`));
    this.worker.on("exit", () => fail("hash worker exited"));
  }

  /** sha256 and byte count of everything behind `fd`. Never rejects. */
  hash(fd: number): Promise<HashResult> {
    if (this.failed) return Promise.resolve({ error: this.failed });
    const id = this.next++;
    return new Promise((done) => {
      this.pending.set(id, done);
      this.worker.postMessage({ id, fd });
    });
  }

  async close(): Promise<void> {
    this.failed ??= "closed";
    await this.worker.terminate();
  }
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
  const stream = createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 22 });
  for await (const chunk of stream as AsyncIterable<string>) {
    bytes += chunk.length;
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

/** Write `bytes` to `path` through a temp file and a rename. */
async function writeAtomic(path: string, bytes: Buffer): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    await writeFile(tmp, bytes);
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

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
    if (indexable) await writeAtomic(path + INDEX_SUFFIX, encodeNdjsonIndex(table, { start, length }, { bytes: pos, sha256: hash.digest("hex") }));
    else await rm(path + INDEX_SUFFIX, { force: true });
    written.push(path);
  }
  return written;
}

/**
 * Build and write the index sidecar of an NDJSON file that holds resources of one type, each with
 * an id, one per line (as `ehrgym ehr generate` writes): parses the whole file, exactly as a load
 * would. Returns the rows indexed, or why the file gets no sidecar (any old one is then removed).
 */
export async function writeNdjsonIndex(path: string): Promise<IndexResult> {
  const indexer = new NdjsonIndexer();
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 22 }) as AsyncIterable<Buffer>) {
    indexer.push(chunk);
    if (indexer.failed) break;
  }
  return saveIndex(path, indexer.finish());
}

export type IndexResult = { rows: number } | { skipped: string };

async function saveIndex(path: string, r: ReturnType<NdjsonIndexer["finish"]>): Promise<IndexResult> {
  if ("skipped" in r) {
    await rm(path + INDEX_SUFFIX, { force: true });
    return r;
  }
  await writeAtomic(path + INDEX_SUFFIX, r.sidecar);
  return { rows: r.rows };
}

/** Start ndjson-index-worker.ts; under tsx (sources run as TypeScript), registering tsx in the worker first. */
function indexWorker(workerData: unknown): Worker {
  const self = fileURLToPath(import.meta.url);
  const url = pathToFileURL(join(dirname(self), `ndjson-index-worker${extname(self)}`)).href;
  if (extname(self) !== ".ts") return new Worker(new URL(url), { workerData });
  // Node 20 does not run `--import tsx` in workers: register it there, then load the worker module.
  const tsx = import.meta.resolve("tsx/esm/api");
  return new Worker(`import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(url)}); });`, { eval: true, workerData });
}

/**
 * Index sidecars for NDJSON files while they are written: `write` gets every piece of text
 * appended to a file, in order; `close` writes each file's `<file>.idx`. The indexing runs on a
 * worker thread (both cores: a generator writes, the worker parses), which needs a runtime that
 * loads this module's TypeScript in workers (tsx); elsewhere, or if the worker fails, `close`
 * indexes the finished files instead.
 */
export class NdjsonIndexStream {
  /** [0]: characters posted and not yet indexed; [1]: worker state (0 starting, 1 ready, -1 failed). */
  private readonly shared = new Int32Array(new SharedArrayBuffer(8));
  private readonly files = new Set<string>();
  private worker: Worker | undefined;
  private failed = false;

  private constructor(private readonly maxPending: number) {}

  /** A stream whose worker is ready (or that will index after the fact: always with `worker: false`). */
  static async start(options: { worker?: boolean; maxPendingChars?: number } = {}): Promise<NdjsonIndexStream> {
    const s = new NdjsonIndexStream(options.maxPendingChars ?? 64 << 20);
    try {
      if (options.worker === false) throw new Error("no worker");
      const worker = indexWorker({ shared: s.shared });
      s.worker = worker;
      await new Promise<void>((ready, fail) => {
        const timer = setTimeout(() => fail(new Error("the index worker did not start")), 30_000);
        worker.once("message", () => (clearTimeout(timer), ready()));
        worker.once("error", (e) => (clearTimeout(timer), fail(e)));
        worker.once("exit", () => (clearTimeout(timer), fail(new Error("the index worker exited"))));
      });
    } catch {
      await s.stopWorker();
    }
    return s;
  }

  /** Is a worker indexing as text is written? */
  get threaded(): boolean {
    return !this.failed && this.worker !== undefined;
  }

  private async stopWorker(): Promise<void> {
    this.failed = true;
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }

  /** `text` was just appended to `file` (as utf8). Blocks while the worker is far behind. */
  write(file: string, text: string): void {
    this.files.add(file);
    if (this.failed || !this.worker) return;
    const shared = this.shared;
    let waited = 0;
    for (;;) {
      if (Atomics.load(shared, 1) === -1) {
        this.failed = true;
        return;
      }
      const pending = Atomics.load(shared, 0);
      if (pending <= this.maxPending) break;
      // The generator runs synchronously: waiting here is the back-pressure.
      if (Atomics.wait(shared, 0, pending, 100) === "timed-out" && (waited += 100) > 60_000) {
        this.failed = true; // no progress for a minute: index after the fact
        return;
      }
    }
    Atomics.add(shared, 0, text.length);
    this.worker.postMessage({ file, text });
  }

  /** Stop without writing sidecars (the files are being thrown away). */
  async abort(): Promise<void> {
    await this.stopWorker();
    this.files.clear();
  }

  /** Write every file's sidecar; per file, the rows indexed or why it got none. */
  async close(): Promise<Map<string, IndexResult>> {
    let results: Map<string, IndexResult> | undefined;
    if (!this.failed && this.worker) {
      const worker = this.worker;
      try {
        results = await new Promise<Map<string, IndexResult>>((done, fail) => {
          worker.once("message", (m: [string, IndexResult][] | { error: string }) => (Array.isArray(m) ? done(new Map(m)) : fail(new Error(m.error))));
          worker.once("error", fail);
          worker.once("exit", () => fail(new Error("the index worker exited")));
          worker.postMessage({ finish: true });
        });
      } catch {
        results = undefined;
      }
    }
    await this.stopWorker();
    if (!results || [...this.files].some((f) => !results!.has(f))) {
      results = new Map();
      for (const f of this.files) results.set(f, await writeNdjsonIndex(f));
    }
    return results;
  }
}

/** The worker's side of NdjsonIndexStream (see ndjson-index-worker.ts). */
export function indexWorkerMain(port: import("node:worker_threads").MessagePort, shared: Int32Array): void {
  const indexers = new Map<string, NdjsonIndexer>();
  let broken: string | undefined;
  port.on("message", (m: { file: string; text: string } | { finish: true }) => {
    if ("finish" in m) {
      if (broken !== undefined) return port.postMessage({ error: broken });
      void (async () => {
        const out: [string, IndexResult][] = [];
        for (const [file, ix] of indexers) out.push([file, await saveIndex(file, ix.finish())]);
        port.postMessage(out);
      })().catch((e: unknown) => port.postMessage({ error: message(e) }));
      return;
    }
    try {
      if (broken === undefined) {
        let ix = indexers.get(m.file);
        if (!ix) indexers.set(m.file, (ix = new NdjsonIndexer()));
        ix.push(Buffer.from(m.text, "utf8"));
      }
    } catch (e) {
      broken = message(e);
      Atomics.store(shared, 1, -1);
    }
    Atomics.sub(shared, 0, m.text.length);
    Atomics.notify(shared, 0);
  });
  Atomics.store(shared, 1, 1);
  port.postMessage("ready");
}
