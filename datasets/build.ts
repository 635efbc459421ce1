// `dataset build`: pass 1 scans the inputs (in byte ranges, on worker threads for large inputs)
// into small entries that say where each row's line is; the plan decides what stays and where;
// pass 2 reads the kept rows back from the inputs by offset, renders them in chunks on the workers
// and writes the chunks in output order. Everything lands in a temp folder renamed at the end.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { z } from "zod";
import { EHRGYM_VERSION } from "../rollout/index.ts";
import { Hasher } from "../env/fhir/index.ts";
import { ArrowStreamFile, BATCH_BYTES, BATCH_ROWS } from "./arrow.ts";
import { renderCard, type CardSplit } from "./card.ts";
import { InputFiles, type Format, type RenderedChunk } from "./chunk.ts";
import { plainRow } from "./convert.ts";
import { HeldOut, readExcludeFile } from "./exclude.ts";
import { CountedFile, shardName, WriteBudget, type FileEntry } from "./files.ts";
import { DatasetError, MANIFEST, type Manifest } from "./manifest.ts";
import { makePlan, type SplitSpec } from "./plan.ts";
import { createBuildPool, defaultThreads } from "./pool.ts";
import { scan, type Entry } from "./scan.ts";

export type { Format };

export interface BuildOptions {
  inputs: string[];
  out: string;
  keep: "correct" | "all";
  minReward?: number;
  maxPerTask?: number;
  dedupe: boolean;
  splits: SplitSpec[];
  seed: number;
  excludeMrnsFrom: string[];
  formats: Format[];
  name: string;
  license: string;
  shardRows: number;
  force: boolean;
  /** The command line as given, for the manifest. */
  command: string;
  /** Worker threads (0: this thread); default: this thread for small inputs, else one per core (at most 8). */
  threads?: number;
  /** Size of the byte ranges pass 1 scans apart (tests make it small). */
  rangeBytes?: number;
  log?: (line: string) => void;
}

export interface BuildResult {
  out: string;
  rows: number;
  splits: { name: string; rows: number }[];
  bad: number;
  badExamples: string[];
  manifest: Manifest;
}

const RolloutMeta = z.looseObject({ seed: z.number().int().nullable().optional() });

/** Generator seeds from `<input>.meta.json` files beside the inputs, when the rollout wrote them. */
function metaSeeds(inputs: string[]): number[] {
  const seeds = new Set<number>();
  for (const path of inputs) {
    const meta = `${path}.meta.json`;
    if (!existsSync(meta)) continue;
    try {
      const parsed = RolloutMeta.safeParse(JSON.parse(readFileSync(meta, "utf8")));
      if (parsed.success && typeof parsed.data.seed === "number") seeds.add(parsed.data.seed);
    } catch {
      // a meta file is a courtesy: an unreadable one leaves the seed "not recorded"
    }
  }
  return [...seeds].sort((a, b) => a - b);
}

export async function buildDataset(o: BuildOptions): Promise<BuildResult> {
  const log = o.log ?? (() => {});
  const out = resolve(o.out);
  if (existsSync(out) && !o.force) throw new DatasetError(`--out ${o.out} exists; pass --force to replace it`);
  const heldOut = new HeldOut(o.excludeMrnsFrom.map(readExcludeFile));
  const tmp = join(dirname(out), `.${basename(out)}.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    const result = await buildInto(tmp, o, heldOut, log);
    if (existsSync(out)) {
      const old = join(dirname(out), `.${basename(out)}.old-${process.pid}`);
      renameSync(out, old);
      renameSync(tmp, out);
      rmSync(old, { recursive: true, force: true });
    } else renameSync(tmp, out);
    return { ...result, out };
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** Consecutive output rows of one shard, cut where an Arrow batch would be. */
interface Chunk {
  split: number;
  shard: number;
  shards: number;
  rows: Entry[];
}

function chunksOf(splits: { entries: Entry[] }[], shardRows: number): Chunk[] {
  const chunks: Chunk[] = [];
  splits.forEach((sp, split) => {
    const shards = Math.ceil(sp.entries.length / shardRows);
    for (let shard = 0; shard < shards; shard++) {
      let rows: Entry[] = [];
      let bytes = 0;
      for (const e of sp.entries.slice(shard * shardRows, (shard + 1) * shardRows)) {
        rows.push(e);
        bytes += e.len;
        if (rows.length >= BATCH_ROWS || bytes >= BATCH_BYTES) {
          chunks.push({ split, shard, shards, rows });
          rows = [];
          bytes = 0;
        }
      }
      if (rows.length) chunks.push({ split, shard, shards, rows });
    }
  });
  return chunks;
}

/** Renders chunks in the pool, `ahead` at a time, and hands them back in order. */
async function* inOrder(chunks: Chunk[], render: (c: Chunk) => Promise<RenderedChunk>, ahead: number): AsyncGenerator<[Chunk, RenderedChunk]> {
  const pending: Promise<RenderedChunk>[] = [];
  let next = 0;
  const fill = () => {
    while (next < chunks.length && pending.length < ahead) pending.push(render(chunks[next++]!));
  };
  fill();
  for (let i = 0; i < chunks.length; i++) {
    const rendered = await pending.shift()!;
    fill();
    yield [chunks[i]!, rendered];
  }
}

async function buildInto(dir: string, o: BuildOptions, heldOut: HeldOut, log: (line: string) => void): Promise<Omit<BuildResult, "out">> {
  const inputBytes = o.inputs.reduce((n, p) => n + statSync(p).size, 0);
  const pool = createBuildPool(o.threads ?? defaultThreads(inputBytes));
  const inputs = new InputFiles();
  // Inputs and outputs are hashed on a worker thread, on the core the build's one thread leaves.
  const hasher = new Hasher();
  try {
    const filter = { keep: o.keep, ...(o.minReward !== undefined ? { minReward: o.minReward } : {}), dedupe: o.dedupe, heldOut: heldOut.sources };
    const s = await scan(o.inputs, filter, (t) => pool.scanRange(t), hasher, o.rangeBytes);
    for (const line of s.badExamples) log(`skipped ${line}`);
    if (s.bad > s.badExamples.length) log(`skipped ${s.bad - s.badExamples.length} more rows that are not valid episode rows`);
    const converted = (e: Entry) => Buffer.from(`${JSON.stringify(inputs.trlRow(o.inputs[e.file]!, e))}\n`);
    const plan = makePlan(s.entries, { dedupe: o.dedupe, ...(o.maxPerTask !== undefined ? { maxPerTask: o.maxPerTask } : {}), splits: o.splits, seed: o.seed }, converted);
    const kept = plan.splits.reduce((n, sp) => n + sp.entries.length, 0);
    if (kept === 0) {
      const why =
        s.valid === 0
          ? `no valid episode rows in the input (${s.bad} rows failed the schema${s.badExamples[0] ? `, first: ${s.badExamples[0]}` : ""})`
          : s.entries.length === 0
            ? `${s.valid} valid rows, but none passed ${s.filtered ? `--keep ${o.keep}${o.minReward !== undefined ? `/--min-reward ${o.minReward}` : ""} (${s.filtered} filtered)` : ""}${s.excluded ? `${s.filtered ? " and " : ""}--exclude-mrns-from (${s.excluded} rows of held-out patients)` : ""}`
            : "every row was dropped by --dedupe/--max-per-task";
      throw new DatasetError(`no rows kept: ${why}`);
    }
    for (const split of plan.splits) if (!split.entries.length) log(`split ${split.name} is empty (too few patients for its fraction): left out`);
    const firstSplit = plan.splits.find((sp) => sp.entries.length)!;
    const example = plainRow(inputs.trlRow(o.inputs[firstSplit.entries[0]!.file]!, firstSplit.entries[0]!));

    const closing: Promise<FileEntry>[] = [];
    // Awaited together after the last chunk; a build that fails before then must not leave them unhandled.
    const close = (file: { close(): Promise<FileEntry> }) => {
      const done = file.close();
      done.catch(() => {});
      closing.push(done);
    };
    const cardSplits: CardSplit[] = plan.splits.map((sp) => ({
      name: sp.name,
      rows: sp.entries.length,
      jsonl: { files: [], bytes: 0 },
      ...(o.formats.includes("arrow") ? { arrow: { files: [], bytes: 0 } } : {}),
    }));
    // Output is written by libuv's threads while this one renders the next chunk, 64 MB in flight at most.
    const budget = new WriteBudget();
    let shardFiles: { jsonl: CountedFile; arrow?: ArrowStreamFile } | undefined;
    let openai: CountedFile | undefined;
    const closeShard = (cs: CardSplit) => {
      if (!shardFiles) return;
      // Closing ends a file (its size is final now); its hash is awaited after the last chunk.
      const { jsonl, arrow } = shardFiles;
      close(jsonl);
      cs.jsonl.files.push(jsonl.path);
      cs.jsonl.bytes += jsonl.bytes;
      if (arrow && cs.arrow) {
        close(arrow);
        cs.arrow.files.push(arrow.path);
        cs.arrow.bytes += arrow.bytes;
      }
      shardFiles = undefined;
    };
    const closeSplit = (cs: CardSplit) => {
      closeShard(cs);
      if (openai) {
        close(openai);
        cs.openai = openai.path;
        openai = undefined;
      }
    };
    const chunks = chunksOf(plan.splits, o.shardRows);
    let at: { split: number; shard: number } | undefined;
    const render = (c: Chunk) => pool.renderChunk({ paths: o.inputs, rows: c.rows.map(({ file, off, len }) => ({ file, off, len })), formats: o.formats });
    for await (const [c, rendered] of inOrder(chunks, render, pool.threads + 1)) {
      if (at?.split !== c.split || at.shard !== c.shard) {
        if (at && at.split !== c.split) closeSplit(cardSplits[at.split]!);
        else if (at) closeShard(cardSplits[at.split]!);
        const split = plan.splits[c.split]!.name;
        const name = shardName(split, c.shard, c.shards);
        shardFiles = {
          jsonl: new CountedFile(join(dir, "data", `${name}.jsonl`), `data/${name}.jsonl`, hasher, budget),
          ...(o.formats.includes("arrow") ? { arrow: new ArrowStreamFile(join(dir, "data", `${name}.arrow`), `data/${name}.arrow`, hasher, budget) } : {}),
        };
        if (at?.split !== c.split && o.formats.includes("openai")) openai = new CountedFile(join(dir, "openai", `${split}.jsonl`), `openai/${split}.jsonl`, hasher, budget);
        at = c;
      }
      const { jsonl, arrow, openai: openaiBytes } = rendered;
      shardFiles!.jsonl.write(jsonl, c.rows.length, () => pool.recycle(jsonl));
      if (arrow) shardFiles!.arrow?.addBatch(arrow, c.rows.length, () => pool.recycle(arrow));
      if (openaiBytes) openai?.write(openaiBytes, c.rows.length, () => pool.recycle(openaiBytes));
      await budget.room();
    }
    if (at) closeSplit(cardSplits[at.split]!);
    const files = await Promise.all(closing);
    o.inputs.forEach((path, i) => {
      const now = statSync(path);
      if (now.size !== s.stamps[i]!.size || now.mtimeMs !== s.stamps[i]!.mtimeMs) throw new DatasetError(`${path} changed during the build; run it again`);
    });
    const nonEmptySplits = cardSplits.filter((cs) => cs.rows > 0);

    const finalEntries = plan.splits.flatMap((sp) => sp.entries);
    const counts = new Map<string, { suite: string; type: string; branch: string; perSplit: number[] }>();
    plan.splits.forEach((sp, i) => {
      for (const e of sp.entries) {
        const key = `${e.suite}\u0000${e.type}\u0000${e.branch}`;
        const c = counts.get(key) ?? { suite: e.suite, type: e.type, branch: e.branch, perSplit: plan.splits.map(() => 0) };
        c.perSplit[i]!++;
        counts.set(key, c);
      }
    });
    const nonEmpty = plan.splits.map((sp, i) => (sp.entries.length ? i : -1)).filter((i) => i >= 0);
    const usedSources = [...new Set(finalEntries.map((e: Entry) => e.src))].sort((a, b) => a - b).map((i) => s.sources[i]!);
    const excludeInfo = heldOut.sources.map((src) => ({ file: basename(src.path), sha256: createHash("sha256").update(readFileSync(src.path)).digest("hex"), mrns: src.mrns.length }));
    const stats = {
      rows_read: s.valid + s.bad,
      invalid: s.bad,
      valid: s.valid,
      filtered: s.filtered,
      excluded: s.excluded,
      duplicates: plan.duplicates,
      deduped: plan.deduped,
      capped: plan.capped,
      kept: finalEntries.length,
    };
    const card = renderCard({
      name: o.name,
      license: o.license,
      ehrgymVersion: EHRGYM_VERSION,
      splits: nonEmptySplits,
      counts: [...counts.values()]
        .map((c) => ({ ...c, perSplit: nonEmpty.map((i) => c.perSplit[i]!) }))
        .sort((a, b) => (`${a.suite}\u0000${a.type}\u0000${a.branch}` < `${b.suite}\u0000${b.type}\u0000${b.branch}` ? -1 : 1)),
      sources: usedSources,
      passByModel: [...s.passByModel.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      stats,
      options: {
        keep: o.keep,
        ...(o.minReward !== undefined ? { minReward: o.minReward } : {}),
        dedupe: o.dedupe,
        ...(o.maxPerTask !== undefined ? { maxPerTask: o.maxPerTask } : {}),
        seed: o.seed,
        fractions: o.splits.map((x) => x.fraction),
        shardRows: o.shardRows,
      },
      exclude: excludeInfo,
      excluded: { rows: s.excluded, patients: s.excludedPatients.size },
      noPatient: finalEntries.filter((e) => !e.patient).length,
      seeds: metaSeeds(o.inputs),
      example,
    });
    const cardBytes = Buffer.from(card);
    writeFileSync(join(dir, "README.md"), cardBytes);
    files.unshift({ path: "README.md", rows: 0, bytes: cardBytes.length, sha256: createHash("sha256").update(cardBytes).digest("hex") });

    const manifest: Manifest = {
      format: "ehrgym-dataset/1",
      name: o.name,
      license: o.license,
      ehrgym_version: EHRGYM_VERSION,
      build: {
        command: o.command,
        options: {
          keep: o.keep,
          min_reward: o.minReward ?? null,
          dedupe: o.dedupe,
          max_per_task: o.maxPerTask ?? null,
          splits: o.splits,
          seed: o.seed,
          formats: o.formats,
          shard_rows: o.shardRows,
        },
      },
      inputs: s.inputs,
      exclude_mrns_from: heldOut.sources.map((src, i) => ({ path: src.path, sha256: excludeInfo[i]!.sha256, mrns: src.mrns.length })),
      splits: plan.splits.filter((sp) => sp.entries.length).map((sp) => ({ name: sp.name, rows: sp.entries.length })),
      counts: stats,
      files,
    };
    writeFileSync(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    return { rows: finalEntries.length, splits: manifest.splits, bad: s.bad, badExamples: s.badExamples, manifest };
  } finally {
    inputs.close();
    await Promise.all([pool.close(), hasher.close()]);
  }
}
