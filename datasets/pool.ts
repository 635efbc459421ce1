// Where a build's units of work run: worker threads (piscina) for large inputs, this thread for
// small ones (a worker's start-up costs more than it saves there). Same functions either way.
import { availableParallelism } from "node:os";
import { Piscina } from "piscina";
import { recycleBuffer, renderChunk, type ChunkTask, type RenderedChunk } from "./chunk.ts";
import { scanRange, type RangeScan, type RangeTask } from "./scan.ts";

export interface BuildPool {
  readonly threads: number;
  scanRange(t: RangeTask): Promise<RangeScan>;
  renderChunk(t: ChunkTask): Promise<RenderedChunk>;
  /** A rendered chunk's bytes, written: their buffer may serve a later chunk. */
  recycle(bytes: Uint8Array): void;
  close(): Promise<void>;
}

/** Below this much input, a build runs in this thread unless told otherwise. */
const SMALL_INPUT_BYTES = 64 << 20;

/** Threads pay off only where cores are spare: on 2 cores the build runs in this thread. */
export function defaultThreads(inputBytes: number): number {
  const cores = availableParallelism();
  return inputBytes < SMALL_INPUT_BYTES || cores <= 2 ? 0 : Math.min(cores, 8);
}

/** One task at a time in this thread (ranges and chunks are scanned/rendered in turn, memory stays one unit). */
function inThisThread(): BuildPool {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(f: () => T | Promise<T>): Promise<T> => {
    const next = queue.then(f);
    queue = next.catch(() => {});
    return next;
  };
  return {
    threads: 0,
    scanRange: (t) => serial(() => scanRange(t)),
    renderChunk: (t) => serial(() => renderChunk(t)),
    recycle: recycleBuffer,
    close: async () => {},
  };
}

export function createBuildPool(threads: number): BuildPool {
  if (threads <= 0) return inThisThread();
  const pool = new Piscina({ filename: new URL("./worker.mjs", import.meta.url).href, minThreads: threads, maxThreads: threads, idleTimeout: 60_000 });
  return {
    threads,
    scanRange: (t) => pool.run(t, { name: "scanRange" }) as Promise<RangeScan>,
    renderChunk: (t) => pool.run(t, { name: "renderChunk" }) as Promise<RenderedChunk>,
    // Each worker renders into buffers of its own (moved here when done).
    recycle: () => {},
    close: () => pool.destroy(),
  };
}
