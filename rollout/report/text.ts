// The eval table as text: success rate with its Wilson 95% interval per suite/type, query vs
// action and overall, pass@k when tasks have several samples, the status breakdown, rounds,
// tokens and latency when known, then the failed checks of each failure.
import { STATUSES, STATUS_LABELS, type EvalSummary, type Rate } from "../metrics.ts";

export const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const rateCell = (r: Rate) => (r.n === 0 ? "-" : pct(r.success / r.n));
const ciCell = (r: Rate) => (r.n === 0 ? "-" : `${pct(r.ci.low)}-${pct(r.ci.high)}`);

/** pass@k of a group, or "-" when its tasks have fewer than k samples. */
export function passAtKCell(r: Rate, k: number): string {
  const v = r.passAtK?.find((p) => p.k === k)?.value;
  return v === undefined ? "-" : pct(v);
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ")).join("\n");
}

/** The k shown as columns: 1, a few round numbers, and the largest (the JSON has every k). */
export function shownK(samples: number): number[] {
  return [...new Set([1, ...[2, 5, 10, 20, 50, 100].filter((k) => k < samples), samples])].filter((k) => k >= 1 && k <= samples);
}

export function formatSummary(summary: EvalSummary, options: { maxFailures?: number } = {}): string {
  const ks = summary.samples > 1 ? shownK(summary.overall.passAtK?.length ?? 0) : [];
  const head = ["group", "kind", "success", "n", "rate", "95% CI", ...ks.map((k) => `pass@${k}`)];
  const line = (name: string, kind: string, r: Rate) => [
    name,
    kind,
    String(r.success),
    String(r.n),
    rateCell(r),
    ciCell(r),
    ...ks.map((k) => passAtKCell(r, k)),
  ];
  const rows: string[][] = [head];
  for (const t of summary.byType) rows.push(line(`${t.suite}/${t.type}`, t.kind, t.rate));
  if (summary.bySuite.length > 1) for (const s of summary.bySuite) rows.push(line(s.suite, "", s.rate));
  rows.push(line("query", "", summary.byKind.query));
  rows.push(line("action", "", summary.byKind.action));
  rows.push(line("overall", "", summary.overall));
  const lines = [table(rows), ""];
  const o = summary.overall;
  lines.push(`status: ${STATUSES.map((s) => `${STATUS_LABELS[s]} ${o.status[s]}`).join(", ")}`);
  lines.push(`rounds: ${o.meanRounds.toFixed(2)} per episode` + (summary.samples > 1 ? `; ${o.tasks} tasks, up to ${summary.samples} samples each` : ""));
  if (summary.medianToolCalls !== undefined) lines.push(`tool calls: median ${summary.medianToolCalls} per episode`);
  if (summary.byRule) {
    const b = summary.byRule;
    lines.push("", `checkpoints per rule (${b.episodes} episodes, mean partial credit ${b.meanPartialCredit.toFixed(3)}):`);
    const head = ["rule", "source", "passed", "n", "rate", "mean partial credit"];
    lines.push(table([head, ...b.rules.map((r) => [r.rule, r.source, String(r.passed), String(r.n), pct(r.rate), r.meanPartialCredit.toFixed(3)])]), "");
  }
  const protocols = Object.entries(summary.protocols);
  if (protocols.length > 1) lines.push(`warning: rows of several protocols are counted together (${protocols.map(([p, n]) => `${p} ${n}`).join(", ")})`);
  if (summary.usage) {
    const u = summary.usage;
    lines.push(
      `tokens: ${u.prompt_tokens.toLocaleString("en-US")} prompt + ${u.completion_tokens.toLocaleString("en-US")} completion` +
        ` = ${u.total_tokens.toLocaleString("en-US")} over ${u.episodes} episodes (${u.perEpisode.total_tokens.toLocaleString("en-US")} per episode)`,
    );
  }
  if (summary.latency) lines.push(`latency per model call: p50 ${summary.latency.p50_ms} ms, p95 ${summary.latency.p95_ms} ms (${summary.latency.turns} calls)`);
  const max = options.maxFailures ?? 50;
  if (summary.failures.length > 0) {
    lines.push("", `failures (${summary.failures.length}${summary.failures.length > max ? `, first ${max}` : ""}):`);
    for (const f of summary.failures.slice(0, max)) {
      lines.push(`  ${f.suite} ${f.task_id}${f.sample ? ` #${f.sample}` : ""} [${f.status}]${f.error ? ` error: ${f.error}` : ""}`);
      for (const c of f.failed) lines.push(`    x ${c.name}: ${c.detail}`);
    }
  }
  return lines.join("\n");
}
