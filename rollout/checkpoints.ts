// Per-rule figures of workflows rows (success of each rule's checkpoint, mean partial credit of the
// episodes that asked for it) and the tool calls an episode made.
import type { Message } from "../env/core/index.ts";

export interface CheckpointRowLike {
  protocol?: string;
  rounds?: number;
  partial_credit?: number;
  checkpoints?: { rule: string; source: string; ok: boolean }[];
  messages?: Message[];
}

const round = (x: number) => Number(x.toFixed(6));

/** Tool calls of an episode: a text turn is one call; a tool-protocol turn counts its calls. */
export function toolCalls(row: CheckpointRowLike): number {
  if (row.protocol === "tools" && row.messages) return row.messages.reduce((n, m) => n + (m.role === "assistant" ? (m.tool_calls?.length ?? 0) : 0), 0);
  return row.rounds ?? 0;
}

export function medianToolCalls(rows: readonly CheckpointRowLike[]): number | undefined {
  if (rows.length === 0) return undefined;
  const xs = rows.map(toolCalls).sort((a, b) => a - b);
  const mid = xs.length >> 1;
  return xs.length % 2 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
}

/** One line per rule asked in any row (first-seen order); undefined when no row carries checkpoints. */
export function byRule(rows: readonly CheckpointRowLike[]) {
  const withCp = rows.filter((r) => r.checkpoints?.length);
  if (withCp.length === 0) return undefined;
  const rules = new Map<string, { rule: string; source: string; n: number; passed: number; credit: number }>();
  for (const r of withCp)
    for (const c of r.checkpoints!) {
      const e = rules.get(c.rule) ?? { rule: c.rule, source: c.source, n: 0, passed: 0, credit: 0 };
      e.n++;
      if (c.ok) e.passed++;
      e.credit += r.partial_credit ?? 0;
      rules.set(c.rule, e);
    }
  return {
    episodes: withCp.length,
    meanPartialCredit: round(withCp.reduce((s, r) => s + (r.partial_credit ?? 0), 0) / withCp.length),
    rules: [...rules.values()].map((e) => ({ rule: e.rule, source: e.source, n: e.n, passed: e.passed, rate: round(e.passed / e.n), meanPartialCredit: round(e.credit / e.n) })),
  };
}
