// `dataset build`: pass 1 streams the inputs into small entries and a spill file of converted
// rows; the plan decides what stays and where; pass 2 reads the kept rows back by offset in
// output order and writes every format. Everything lands in a temp folder renamed at the end.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { z } from "zod";
import { EHRGYM_VERSION } from "../rollout/index.ts";
import { ArrowStreamFile } from "./arrow.ts";
import { renderCard, type CardSplit } from "./card.ts";
import { toOpenAiLine } from "./convert.ts";
import { HeldOut, readExcludeFile } from "./exclude.ts";
import { CountedFile, shardName, type FileEntry } from "./files.ts";
import { DatasetError, MANIFEST, type Manifest } from "./manifest.ts";
import { makePlan, type SplitSpec } from "./plan.ts";
import { scan, type Entry } from "./scan.ts";
import type { TrlRow } from "./schema.ts";
import { Spill } from "./spill.ts";

export type Format = "trl" | "openai" | "arrow";

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

async function buildInto(dir: string, o: BuildOptions, heldOut: HeldOut, log: (line: string) => void): Promise<Omit<BuildResult, "out">> {
  const spill = new Spill(join(dir, ".spill"));
  try {
    const s = await scan(o.inputs, { keep: o.keep, ...(o.minReward !== undefined ? { minReward: o.minReward } : {}), dedupe: o.dedupe, heldOut, spill });
    for (const line of s.badExamples) log(`skipped ${line}`);
    if (s.bad > s.badExamples.length) log(`skipped ${s.bad - s.badExamples.length} more rows that are not valid episode rows`);
    const plan = makePlan(s.entries, { dedupe: o.dedupe, ...(o.maxPerTask !== undefined ? { maxPerTask: o.maxPerTask } : {}), splits: o.splits, seed: o.seed }, (e) => spill.read(e.off, e.len));
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

    const files: FileEntry[] = [];
    const cardSplits: CardSplit[] = [];
    let example: TrlRow | undefined;
    for (const split of plan.splits) {
      if (!split.entries.length) {
        log(`split ${split.name} is empty (too few patients for its fraction): left out`);
        continue;
      }
      const n = Math.ceil(split.entries.length / o.shardRows);
      const cs: CardSplit = { name: split.name, rows: split.entries.length, jsonl: { files: [], bytes: 0 } };
      if (o.formats.includes("arrow")) cs.arrow = { files: [], bytes: 0 };
      const openai = o.formats.includes("openai") ? new CountedFile(join(dir, "openai", `${split.name}.jsonl`), `openai/${split.name}.jsonl`) : undefined;
      for (let k = 0; k < n; k++) {
        const name = shardName(split.name, k, n);
        const jsonl = new CountedFile(join(dir, "data", `${name}.jsonl`), `data/${name}.jsonl`);
        const arrow = cs.arrow ? new ArrowStreamFile(join(dir, "data", `${name}.arrow`), `data/${name}.arrow`) : undefined;
        for (const e of split.entries.slice(k * o.shardRows, (k + 1) * o.shardRows)) {
          const line = spill.read(e.off, e.len);
          jsonl.write(line, 1);
          if (!arrow && !openai && example) continue;
          const row = JSON.parse(line.toString("utf8")) as TrlRow;
          example ??= row;
          arrow?.add(row, line.length);
          openai?.write(`${toOpenAiLine(row)}\n`, 1);
        }
        const j = jsonl.close();
        files.push(j);
        cs.jsonl.files.push(j.path);
        cs.jsonl.bytes += j.bytes;
        if (arrow && cs.arrow) {
          const a = arrow.close();
          files.push(a);
          cs.arrow.files.push(a.path);
          cs.arrow.bytes += a.bytes;
        }
      }
      if (openai) {
        const f = openai.close();
        files.push(f);
        cs.openai = f.path;
      }
      cardSplits.push(cs);
    }

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
      splits: cardSplits,
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
      ...(example ? { example } : {}),
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
    spill.close();
    rmSync(join(dir, ".spill"), { force: true });
  }
}
