// The build's preference configs (formats dpo and kto): candidates from the scan, pairs from
// preference.ts, splits that put every patient where the SFT rows put it, files through shards.ts.
import type { z } from "zod";
import type { CardConfig } from "./card.ts";
import { DpoRow, toDpoRow } from "./dpo.ts";
import { KtoRow, toKtoRow } from "./kto.ts";
import type { ManifestFile } from "./manifest.ts";
import { assignSplits, splitGroup, uniqueEntries, type makePlan, type SplitSpec } from "./plan.ts";
import { isModelFailure, planPreferences } from "./preference.ts";
import type { Entry } from "./scan.ts";
import type { TrlRow } from "./schema.ts";
import { writeSplit } from "./shards.ts";

export const PREFERENCE_FORMATS = ["dpo", "kto"] as const;
export type PreferenceFormat = (typeof PREFERENCE_FORMATS)[number];

/** Each preference format's row schema; its files live in the folder of its name. */
export const PREFERENCE_SCHEMAS: Record<PreferenceFormat, z.ZodObject> = { dpo: DpoRow, kto: KtoRow };

interface Options {
  formats: readonly PreferenceFormat[];
  plan: ReturnType<typeof makePlan>;
  /** Failed episodes the keep rule left out of the SFT rows. */
  failed: readonly Entry[];
  content: (e: Entry) => Buffer;
  read: (e: Entry) => TrlRow;
  dedupe: boolean;
  perTask: number;
  splits: readonly SplitSpec[];
  seed: number;
  arrow: boolean;
  shardRows: number;
  each: () => Promise<void>;
  log: (line: string) => void;
}

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Chosen / desirable: the SFT rule's rows (before --max-per-task) with reward 1. Rejected /
 * undesirable: the model's failures of any rows read, after the same duplicate rules.
 */
export async function writePreferenceConfigs(dir: string, o: Options) {
  const failed = uniqueEntries([...o.failed], o.dedupe, o.content);
  const chosen = o.plan.unique.filter((e) => e.reward === 1);
  const rejected = [...o.plan.unique.filter(isModelFailure), ...failed.entries];
  const pp = planPreferences(chosen, rejected, o.perTask);

  const sizes = new Map<string, number>();
  for (const e of [...pp.pairs.map((p) => p.chosen), ...pp.kto.map((k) => k.entry)]) sizes.set(splitGroup(e), (sizes.get(splitGroup(e)) ?? 0) + 1);
  const splitOf = assignSplits(
    sizes,
    o.splits,
    o.seed,
    o.plan.splitOf,
    o.plan.splits.map((sp) => sp.entries.length),
  );
  const splitIndex = (e: Entry) => splitOf.get(splitGroup(e))!;

  const files: ManifestFile[] = [];
  const configs: CardConfig[] = [];
  for (const format of o.formats) {
    const config: CardConfig = { name: format, folder: format, schema: PREFERENCE_SCHEMAS[format], splits: [] };
    for (const [i, sp] of o.splits.entries()) {
      const pairs = format === "dpo" ? pp.pairs.filter((p) => splitIndex(p.chosen) === i).sort(byId) : [];
      const singles = format === "kto" ? pp.kto.filter((k) => splitIndex(k.entry) === i).sort((a, b) => byId(a.entry, b.entry)) : [];
      const written =
        format === "dpo"
          ? await writeSplit(dir, format, sp.name, pairs, {
              schema: DpoRow,
              arrow: o.arrow,
              shardRows: o.shardRows,
              row: (p) => toDpoRow(o.read(p.chosen), o.read(p.rejected)),
              each: o.each,
            })
          : await writeSplit(dir, format, sp.name, singles, {
              schema: KtoRow,
              arrow: o.arrow,
              shardRows: o.shardRows,
              row: (k) => toKtoRow(o.read(k.entry), k.label),
              each: o.each,
            });
      if (!written.split.rows) continue;
      files.push(...written.files);
      // the lengths of the trajectories the rows are cut from (the card's length figures)
      const lengths = format === "dpo" ? pairs.map((p) => Math.max(p.chosen.length, p.rejected.length)) : singles.map((k) => k.entry.length);
      config.splits.push({ ...written.split, lengths });
    }
    if (config.splits.length) configs.push(config);
    else o.log(`format ${format}: no rows (${format === "dpo" ? "no task has both a correct and a failed episode" : "no episode"}): left out of the card's configs`);
  }
  const stats = {
    failed_read: o.failed.length,
    failed_duplicates: failed.duplicates + failed.exact,
    failed_deduped: failed.deduped,
    pref_correct: chosen.length,
    pref_failed: rejected.length,
    ...pp.stats,
    ...(o.formats.includes("dpo") ? { dpo_pairs: pp.pairs.length } : {}),
    ...(o.formats.includes("kto") ? { kto_desirable: pp.kto.filter((k) => k.label).length, kto_undesirable: pp.kto.filter((k) => !k.label).length } : {}),
  };
  const entries = [...pp.pairs.flatMap((p) => [p.chosen, p.rejected]), ...pp.kto.map((k) => k.entry)];
  return { files, configs, stats, entries };
}
