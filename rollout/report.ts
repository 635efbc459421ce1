// The eval report: an aligned table of success rates, then the failed checks of each failure.
import type { EvalSummary, Rate } from "./metrics.ts";

const pct = (r: Rate) => (r.n === 0 ? "-" : `${((100 * r.success) / r.n).toFixed(1)}%`);

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ")).join("\n");
}

export function formatSummary(summary: EvalSummary, options: { maxFailures?: number } = {}): string {
  const rows: string[][] = [["group", "kind", "success", "n", "rate"]];
  for (const t of summary.byType) rows.push([`${t.suite}/${t.type}`, t.kind, String(t.rate.success), String(t.rate.n), pct(t.rate)]);
  rows.push(["query", "", String(summary.byKind.query.success), String(summary.byKind.query.n), pct(summary.byKind.query)]);
  rows.push(["action", "", String(summary.byKind.action.success), String(summary.byKind.action.n), pct(summary.byKind.action)]);
  rows.push(["overall", "", String(summary.overall.success), String(summary.overall.n), pct(summary.overall)]);
  const lines = [table(rows)];
  const max = options.maxFailures ?? 50;
  if (summary.failures.length > 0) {
    lines.push("", `failures (${summary.failures.length}${summary.failures.length > max ? `, first ${max}` : ""}):`);
    for (const f of summary.failures.slice(0, max)) {
      lines.push(`  ${f.suite} ${f.task_id} [${f.status}]${f.error ? ` error: ${f.error}` : ""}`);
      for (const c of f.failed) lines.push(`    x ${c.name}: ${c.detail}`);
    }
  }
  return lines.join("\n");
}
