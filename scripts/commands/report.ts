// `ehrgym report`: run files -> report/index.html (self-contained), summary.json, a PNG per chart.
import { basename, relative } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { writeReport } from "../../rollout/index.ts";
import { parseOptions } from "./common.ts";
import { UserError } from "../../env/util/index.ts";

export const ReportOptions = z
  .object({
    runs: z.array(z.string().min(1)).min(1, "give at least one run file"),
    out: z.string().min(1).default("report"),
    names: z
      .string()
      .transform((s) => s.split(",").map((x) => x.trim()))
      .optional(),
    reference: z.string().min(1).optional(),
    protocol: z.enum(["text", "tools"]).optional(),
  })
  .strict();

export async function runReport(raw: unknown): Promise<void> {
  const o = parseOptions(ReportOptions, raw);
  if (o.names && o.names.length !== o.runs.length) throw new UserError(`--names: ${o.names.length} names for ${o.runs.length} run files (got ${JSON.stringify(o.names.join(","))})`);
  const runs = o.runs.map((path, i) => ({ path, name: o.names?.[i] ?? basename(path).replace(/\.jsonl$/, "") }));
  const written = await writeReport({ runs, out: o.out, ...(o.reference ? { reference: o.reference } : {}), ...(o.protocol ? { protocol: o.protocol } : {}) });
  const rel = (p: string) => {
    const r = relative(process.cwd(), p);
    return r.startsWith("..") ? p : r;
  };
  for (const note of written.summary.notes) process.stderr.write(`note: ${note}\n`);
  for (const run of written.summary.runs) {
    const s = run.summary.overall;
    process.stdout.write(`${run.name}: ${s.success}/${s.n} = ${(100 * s.rate).toFixed(1)}% (95% CI ${(100 * s.ci.low).toFixed(1)}-${(100 * s.ci.high).toFixed(1)}%)\n`);
  }
  for (const c of written.summary.comparisons) {
    const overall = c.mcnemar.find((m) => m.group === "overall")!;
    process.stdout.write(`${c.other} vs ${c.base}: fixed ${c.fixed.length}, broken ${c.broken.length}, both ${c.both.length}, neither ${c.neither.length}; exact McNemar p = ${overall.p.toFixed(4)}\n`);
  }
  process.stdout.write(`report: ${rel(written.index)} (+ summary.json, ${written.summary.charts.length} PNG charts)\n`);
}

export function registerReport(program: Command): void {
  program
    .command("report")
    .description("Report on one or more eval/rollout runs: tables with Wilson intervals, charts (SVG + PNG), run-vs-run diff with exact McNemar tests, transcripts")
    .argument("<runs...>", "run files (JSONL rows of ehrgym eval or rollout); the first is the baseline of comparisons")
    .option("--out <dir>", "output folder (replaced whole)", "report")
    .option("--names <list>", "display names of the runs, comma-separated, in order (default: file names)")
    .option("--reference <file|name>", "published figures to draw as reference lines: a shipped set by name (medagentbench-v1: the paper's leaderboard) or a JSON file {source, suite?, models: [{name, overall?, query?, action?, by_type?}]}")
    .option("--protocol <p>", "keep only rows of this protocol (text | tools), for run files that mix them")
    .action(async (runs: string[], opts: Record<string, unknown>) => {
      await runReport({ ...opts, runs });
    });
}
