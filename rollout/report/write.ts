// `ehrgym report` and `eval --html`: build the report into a temporary folder beside --out, then
// swap it in, so that --out is always either the old report or the new one, never half of one.
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { buildReport, type ReportContent, type ReportInput } from "./build.ts";
import { renderChart, type RenderedChart } from "./charts.ts";
import { renderPage } from "./html.ts";
import { ReportInputError } from "./load.ts";
import { writeFolderAtomic } from "../../env/util/index.ts";

export interface WriteReportOptions extends ReportInput {
  /** Folder to write index.html, summary.json and one PNG per chart into (replaced whole). */
  out: string;
}

/** summary.json: the report's numbers, JSON-plain. */
const summaryOf = (content: ReportContent, charts: RenderedChart[]) => ({
  ehrgym_version: content.ehrgym_version,
  common_tasks: content.commonTasks,
  notes: content.notes,
  runs: content.runs.map((r) => ({ name: r.name, path: r.path, protocol: r.protocol, models: r.models, left_out: r.leftOut, summary: r.summary })),
  comparisons: content.comparisons,
  ...(content.reference ? { reference: content.reference } : {}),
  charts: charts.map((c) => ({ name: c.name, title: c.title, png: `${c.name}.png`, width: c.width, height: c.height })),
});
export type ReportSummary = ReturnType<typeof summaryOf>;

/** A folder we may replace: missing, empty, or a report written before (it has summary.json). */
function checkReplaceable(target: string, out: string): void {
  if (!existsSync(target)) return;
  if (!statSync(target).isDirectory()) throw new ReportInputError(`--out: ${out} exists and is not a folder`);
  const entries = readdirSync(target);
  if (entries.length > 0 && !entries.includes("summary.json"))
    throw new ReportInputError(`--out: ${out} is a folder that holds no report (no summary.json); refusing to replace it: choose an empty or new folder`);
}

/** Writes the report; returns its folder, index.html, every file written and summary.json's content. */
export async function writeReport(options: WriteReportOptions) {
  const target = resolve(options.out);
  checkReplaceable(target, options.out);
  const content = buildReport(options);
  const charts: RenderedChart[] = [];
  for (const chart of content.charts) charts.push(await renderChart(chart));
  const summary = summaryOf(content, charts);
  mkdirSync(dirname(target), { recursive: true });
  const files = ["index.html", "summary.json", ...charts.map((c) => `${c.name}.png`)];
  await writeFolderAtomic(target, (tmp) => {
    writeFileSync(join(tmp, "index.html"), renderPage(content, charts));
    writeFileSync(join(tmp, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
    for (const c of charts) writeFileSync(join(tmp, `${c.name}.png`), c.png);
  });
  return { out: target, index: join(target, "index.html"), files: files.map((f) => join(target, f)), summary };
}
