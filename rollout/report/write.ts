// `ehrgym report` and `eval --html`: build the report into a temporary folder beside --out, then
// swap it in, so that --out is always either the old report or the new one, never half of one.
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { buildReport, type ReportContent, type ReportInput, type ReportRun } from "./build.ts";
import { renderChart } from "./charts.ts";
import { renderPage } from "./html.ts";
import { ReportInputError } from "./load.ts";
import { writeFolderAtomic } from "../../env/util/index.ts";

export interface WriteReportOptions extends ReportInput {
  /** Folder to write index.html, summary.json and one PNG per chart into (replaced whole). */
  out: string;
}

export interface WrittenReport {
  out: string;
  index: string;
  files: string[];
  summary: ReportSummary;
}

/** summary.json: the report's numbers, JSON-plain. */
export interface ReportSummary {
  ehrgym_version: string;
  common_tasks: number;
  notes: string[];
  runs: (Pick<ReportRun, "name" | "path" | "protocol" | "models" | "summary"> & { left_out: ReportRun["leftOut"] })[];
  comparisons: ReportContent["comparisons"];
  reference?: ReportContent["reference"];
  charts: { name: string; title: string; png: string; width: number; height: number }[];
}

/** A folder we may replace: missing, empty, or a report written before (it has summary.json). */
function checkReplaceable(target: string, out: string): void {
  if (!existsSync(target)) return;
  if (!statSync(target).isDirectory()) throw new ReportInputError(`--out: ${out} exists and is not a folder`);
  const entries = readdirSync(target);
  if (entries.length > 0 && !entries.includes("summary.json"))
    throw new ReportInputError(`--out: ${out} is a folder that holds no report (no summary.json); refusing to replace it: choose an empty or new folder`);
}

export async function writeReport(options: WriteReportOptions): Promise<WrittenReport> {
  const target = resolve(options.out);
  checkReplaceable(target, options.out);
  const content = buildReport(options);
  const charts: Awaited<ReturnType<typeof renderChart>>[] = [];
  for (const chart of content.charts) charts.push(await renderChart(chart));
  const summary: ReportSummary = {
    ehrgym_version: content.ehrgym_version,
    common_tasks: content.commonTasks,
    notes: content.notes,
    runs: content.runs.map((r) => ({ name: r.name, path: r.path, protocol: r.protocol, models: r.models, left_out: r.leftOut, summary: r.summary })),
    comparisons: content.comparisons,
    ...(content.reference ? { reference: content.reference } : {}),
    charts: charts.map((c) => ({ name: c.name, title: c.title, png: `${c.name}.png`, width: c.width, height: c.height })),
  };
  mkdirSync(dirname(target), { recursive: true });
  const files = ["index.html", "summary.json", ...charts.map((c) => `${c.name}.png`)];
  await writeFolderAtomic(target, (tmp) => {
    writeFileSync(join(tmp, "index.html"), renderPage(content, charts));
    writeFileSync(join(tmp, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
    for (const c of charts) writeFileSync(join(tmp, `${c.name}.png`), c.png);
  });
  return { out: target, index: join(target, "index.html"), files: files.map((f) => join(target, f)), summary };
}
