// Run against run on the same tasks: which tasks one run fixed or broke, and whether the
// difference is more than chance (exact McNemar per type and overall). Pairs are tasks, each
// run's first sample, so that every pair is independent of the others.
import type { EpisodeRow } from "../row.ts";
import { compareTypes } from "../metrics.ts";
import { mcnemarExact, type McNemar } from "../stats.ts";

export type TaskRef = Pick<EpisodeRow, "suite" | "task_id" | "type">;

/** b: passed in the base run only (broken); c: in the other run only (fixed); group: "overall", or "suite/type". */
export type McNemarRow = McNemar & { group: string; pairs: number };

export interface Comparison {
  base: string;
  other: string;
  /** Tasks (suite, task_id) both runs have. */
  pairs: number;
  fixed: TaskRef[];
  broken: TaskRef[];
  both: TaskRef[];
  neither: TaskRef[];
  mcnemar: McNemarRow[];
}

export const taskKey = (r: { suite: string; task_id: string }) => `${r.suite}\u0000${r.task_id}`;

/** Each task's first sample. */
export function firstSamples(rows: EpisodeRow[]): Map<string, EpisodeRow> {
  const out = new Map<string, EpisodeRow>();
  for (const row of rows) {
    const key = taskKey(row);
    const had = out.get(key);
    if (!had || row.sample < had.sample) out.set(key, row);
  }
  return out;
}

const compareRefs = (a: TaskRef, b: TaskRef) => compareTypes(a, b) || a.task_id.localeCompare(b.task_id, "en", { numeric: true });

export function compareRuns(base: { name: string; rows: EpisodeRow[] }, other: { name: string; rows: EpisodeRow[] }): Comparison {
  const a = firstSamples(base.rows);
  const b = firstSamples(other.rows);
  const out: Comparison = { base: base.name, other: other.name, pairs: 0, fixed: [], broken: [], both: [], neither: [], mcnemar: [] };
  const perType = new Map<string, { pairs: number; b: number; c: number; ref: TaskRef }>();
  const total = { pairs: 0, b: 0, c: 0 };
  for (const [key, ra] of a) {
    const rb = b.get(key);
    if (!rb) continue;
    const ref: TaskRef = { suite: ra.suite, task_id: ra.task_id, type: ra.type };
    const okA = ra.reward === 1;
    const okB = rb.reward === 1;
    (okA ? (okB ? out.both : out.broken) : okB ? out.fixed : out.neither).push(ref);
    const group = `${ra.suite}/${ra.type}`;
    const t = perType.get(group) ?? { pairs: 0, b: 0, c: 0, ref };
    t.pairs++;
    total.pairs++;
    if (okA && !okB) (t.b++, total.b++);
    if (!okA && okB) (t.c++, total.c++);
    perType.set(group, t);
  }
  out.pairs = total.pairs;
  for (const list of [out.fixed, out.broken, out.both, out.neither]) list.sort(compareRefs);
  const row = (group: string, x: { pairs: number; b: number; c: number }): McNemarRow => ({ group, pairs: x.pairs, b: x.b, c: x.c, p: mcnemarExact(x.b, x.c).p });
  out.mcnemar = [...[...perType.entries()].sort(([, x], [, y]) => compareTypes(x.ref, y.ref)).map(([group, x]) => row(group, x)), row("overall", total)];
  return out;
}

