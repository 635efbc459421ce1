// Writing index sidecars for NDJSON files: from a finished file (writeNdjsonIndex), or on a worker
// thread while a generator writes the files (NdjsonIndexStream).
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, extname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { writeFileAtomic } from "../util/index.ts";
import { INDEX_SUFFIX, NdjsonIndexer } from "./ndjson-index.ts";

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
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

/** Write the sidecar of the NDJSON file at `path`, or remove an old one when there is none. */
export async function saveIndex(path: string, r: ReturnType<NdjsonIndexer["finish"]>): Promise<IndexResult> {
  if ("skipped" in r) {
    await rm(path + INDEX_SUFFIX, { force: true });
    return r;
  }
  writeFileAtomic(path + INDEX_SUFFIX, r.sidecar);
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
