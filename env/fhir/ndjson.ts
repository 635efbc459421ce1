// NDJSON in and out. Import: one resource per line, or a searchset/collection/transaction Bundle
// per line or per file (entries are added in order). Export: one file per type, byte-stable.
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { once } from "node:events";
import { BaseStore } from "./store.ts";
import { compactJson } from "./pretty.ts";
import { parseLossless } from "./lossless.ts";
import type { FhirStoreBuilder } from "./types.ts";

export interface LoadProgress {
  file: string;
  resources: number;
  bytes: number;
}

export interface LoadOptions {
  onProgress?: (p: LoadProgress) => void;
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

/** Stream NDJSON files (or single-document JSON Bundles) into the builder; returns resources added. */
export async function loadNdjson(paths: string | string[], builder: FhirStoreBuilder, options: LoadOptions = {}): Promise<number> {
  let total = 0;
  for (const file of Array.isArray(paths) ? paths : [paths]) {
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
  }
  return total;
}

/** Write one `<Type>.ndjson` per resource type into `dir` (temp file, then rename). Returns file paths. */
export async function exportNdjson(store: import("./types.ts").FhirStore, dir: string): Promise<string[]> {
  if (!(store instanceof BaseStore)) throw new Error("exportNdjson needs a store from createStoreBuilder().build()");
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const type of store.types().sort()) {
    const table = store.table(type)!;
    const path = join(dir, `${type}.ndjson`);
    const tmp = `${path}.tmp-${process.pid}`;
    const out = createWriteStream(tmp, { encoding: "utf8" });
    try {
      let buf: string[] = [];
      let size = 0;
      for (let row = 0; row < table.size; row++) {
        const line = compactJson(table.text(row)) + "\n";
        buf.push(line);
        size += line.length;
        if (size > 1 << 20) {
          if (!out.write(buf.join(""))) await once(out, "drain");
          buf = [];
          size = 0;
        }
      }
      if (buf.length) out.write(buf.join(""));
      out.end();
      await once(out, "finish");
      await rename(tmp, path);
    } catch (e) {
      out.destroy();
      await rm(tmp, { force: true });
      throw e;
    }
    written.push(path);
  }
  return written;
}
