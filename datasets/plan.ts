// Between the passes: which rows stay and where they go, from the small entries alone. Every
// decision depends on the set of rows only (never on input order), so output is deterministic.
import { createHash } from "node:crypto";
import { groupBy } from "../env/util/index.ts";
import type { BuildOptions } from "./build.ts";
import type { Entry } from "./scan.ts";

export interface SplitSpec {
  name: string;
  fraction: number;
}

type PlanOptions = Pick<BuildOptions, "dedupe" | "maxPerTask" | "splits" | "seed">;

const byId = (a: Entry, b: Entry) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/**
 * The rows left once an episode given twice counts once (`duplicates`: another row had the same id),
 * a conversation repeated exactly under another id once (`exact`), and, with --dedupe, once per
 * task and assistant turns (`deduped`). `content` reads a row's
 * converted line (only asked for when two rows share an id).
 */
export function uniqueEntries(all: Entry[], dedupe: boolean, content: (e: Entry) => Buffer) {
  const sorted = [...all].sort(byId);
  let entries: Entry[] = [];
  let duplicates = 0;
  for (let i = 0; i < sorted.length; ) {
    let j = i + 1;
    while (j < sorted.length && sorted[j]!.id === sorted[i]!.id) j++;
    if (j - i === 1) entries.push(sorted[i]!);
    else {
      // the same id twice: keep the row whose bytes hash lowest (the same choice in any input order)
      const ranked = sorted.slice(i, j).map((e) => ({ e, h: sha(content(e)) }));
      ranked.sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0));
      entries.push(ranked[0]!.e);
      duplicates += j - i - 1;
    }
    i = j;
  }

  // the same conversation under another id (another sample that played out identically): kept once
  let exact = 0;
  const seenContent = new Set<string>();
  entries = entries.filter((e) => {
    if (seenContent.has(e.chash)) return (exact++, false);
    seenContent.add(e.chash);
    return true;
  });

  let deduped = 0;
  if (dedupe) {
    const seen = new Set<string>();
    entries = entries.filter((e) => {
      const key = `${e.task}\u0000${e.ahash}`;
      if (seen.has(key)) return (deduped++, false);
      seen.add(key);
      return true;
    });
  }
  return { entries, duplicates, exact, deduped };
}

/** Rows of one patient go to one split; rows without an MRN are grouped by task. */
export const splitGroup = (e: Pick<Entry, "patient" | "task">) => (e.patient ? `p\u0000${e.patient}` : `t\u0000${e.task}`);

/**
 * Patient-disjoint splits: groups in a seeded pseudo-random order, each given whole to the split
 * furthest below its share. `fixed` holds groups already placed (their rows count toward the
 * shares, from `counts`): a preference config puts a patient where the SFT rows put it.
 */
export function assignSplits(
  groups: Map<string, number>,
  splits: readonly SplitSpec[],
  seed: number,
  fixed: ReadonlyMap<string, number> = new Map(),
  counts: readonly number[] = splits.map(() => 0),
): Map<string, number> {
  const out = new Map(fixed);
  const fresh = [...groups.entries()]
    .filter(([key]) => !fixed.has(key))
    .map(([key, rows]) => ({ key, rows, order: sha(`${seed}\u0000${key}`) }))
    .sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
  const n = [...counts];
  const total = n.reduce((a, b) => a + b, 0) + fresh.reduce((a, g) => a + g.rows, 0);
  const target = splits.map((s) => s.fraction * total);
  for (const g of fresh) {
    let best = 0;
    for (let i = 1; i < splits.length; i++) if (target[i]! - n[i]! > target[best]! - n[best]!) best = i;
    n[best]! += g.rows;
    out.set(g.key, best);
  }
  return out;
}

/**
 * The splits' rows, and how many were dropped: `duplicates` and `deduped` (uniqueEntries),
 * `capped` (--max-per-task). `splitOf` maps each group (splitGroup) to its split's index.
 */
export function makePlan(all: Entry[], o: PlanOptions, content: (e: Entry) => Buffer) {
  const unique = uniqueEntries(all, o.dedupe, content);
  let entries = unique.entries;

  let capped = 0;
  if (o.maxPerTask !== undefined) {
    const kept: Entry[] = [];
    for (const group of groupBy(entries, (e) => e.task).values()) {
      group.sort((a, b) => a.sample - b.sample || byId(a, b));
      kept.push(...group.slice(0, o.maxPerTask));
      capped += Math.max(0, group.length - o.maxPerTask);
    }
    entries = kept;
  }

  const sizes = new Map<string, number>();
  for (const e of entries) sizes.set(splitGroup(e), (sizes.get(splitGroup(e)) ?? 0) + 1);
  const splitOf = assignSplits(sizes, o.splits, o.seed);
  const out = o.splits.map((s) => ({ name: s.name, entries: [] as Entry[] }));
  for (const e of entries) out[splitOf.get(splitGroup(e))!]!.entries.push(e);
  for (const s of out) s.entries.sort(byId);
  return { splits: out, duplicates: unique.duplicates, exactDuplicates: unique.exact, deduped: unique.deduped, capped, splitOf, unique: unique.entries };
}
