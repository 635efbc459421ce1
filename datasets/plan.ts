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
 * The splits' rows, and how many were dropped: `duplicates` (another row had the same id: the same
 * episode given twice), `deduped` (--dedupe), `capped` (--max-per-task). `content` reads a row's
 * converted line (only asked for when two rows share an id).
 */
export function makePlan(all: Entry[], o: PlanOptions, content: (e: Entry) => Buffer) {
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

  let deduped = 0;
  if (o.dedupe) {
    const seen = new Set<string>();
    entries = entries.filter((e) => {
      const key = `${e.task}\u0000${e.ahash}`;
      if (seen.has(key)) return (deduped++, false);
      seen.add(key);
      return true;
    });
  }

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

  // Patient-disjoint splits: patients in a seeded pseudo-random order, each given whole to the
  // split furthest below its share. Rows without an MRN are grouped by task instead.
  const groups = [...groupBy(entries, (e) => (e.patient ? `p\u0000${e.patient}` : `t\u0000${e.task}`)).entries()]
    .map(([key, rows]) => ({ order: sha(`${o.seed}\u0000${key}`), rows }))
    .sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
  const total = entries.length;
  const out = o.splits.map((s) => ({ name: s.name, target: s.fraction * total, entries: [] as Entry[] }));
  for (const g of groups) {
    let best = out[0]!;
    for (const s of out) if (s.target - s.entries.length > best.target - best.entries.length) best = s;
    best.entries.push(...g.rows);
  }
  for (const s of out) s.entries.sort(byId);
  return { splits: out.map(({ name, entries }) => ({ name, entries })), duplicates, deduped, capped };
}
