// From run files to the report's content: load and check each run, keep the tasks every run
// has, summarize, compare each run with the first, build the charts.
import { summarize, type EvalSummary } from "../metrics.ts";
import type { EpisodeRow } from "../row.ts";
import { EHRGYM_VERSION } from "../version.ts";
import { successByTypeCharts, successOverallChart, statusChart } from "./charts.ts";
import { compareRuns, taskKey } from "./compare.ts";
import { loadRun, ReportInputError, type LoadedRun } from "./load.ts";
import { loadReference, ReferenceFile } from "./reference.ts";

export type RunInput = Pick<LoadedRun, "name" | "path">;

export interface ReportInput {
  runs: RunInput[];
  /** A reference file's path, or its content. */
  reference?: string | ReferenceFile;
  /** Keep only rows of this protocol (needed for a run file that mixes protocols). */
  protocol?: "text" | "tools";
}

export interface ReportRun extends LoadedRun {
  protocol: string;
  models: string[];
  /** Rows kept: those of the tasks every run has. */
  rows: EpisodeRow[];
  leftOut: { rows: number; tasks: number };
  summary: EvalSummary;
}

export function checkRunNames(runs: RunInput[]): void {
  if (runs.length === 0) throw new ReportInputError("no run files given");
  const seen = new Set<string>();
  for (const run of runs) {
    if (!run.name.trim()) throw new ReportInputError(`run ${run.path}: empty name`);
    if (seen.has(run.name)) throw new ReportInputError(`two runs are named ${JSON.stringify(run.name)}: give distinct names (--names a,b)`);
    seen.add(run.name);
  }
}

/** The runs (rows of the tasks every run has, `commonTasks` of them), their comparisons with the first, the charts and notes. */
export function buildReport(input: ReportInput) {
  checkRunNames(input.runs);
  const reference =
    input.reference === undefined ? undefined : typeof input.reference === "string" ? loadReference(input.reference) : ReferenceFile.parse(input.reference);
  const loaded = input.runs.map((r) => loadRun(r.path, r.name, input.protocol ? { protocol: input.protocol } : {}));
  const taskSets = loaded.map((run) => new Set(run.rows.map(taskKey)));
  const common = new Set([...taskSets[0]!].filter((key) => taskSets.every((set) => set.has(key))));
  if (common.size === 0) throw new ReportInputError(`the runs have no task in common (${loaded.map((r, i) => `${r.name}: ${taskSets[i]!.size} tasks`).join(", ")})`);
  const notes: string[] = [];
  const runs: ReportRun[] = loaded.map((run, i) => {
    const rows = run.rows.filter((r) => common.has(taskKey(r)));
    const leftOut = { rows: run.rows.length - rows.length, tasks: taskSets[i]!.size - common.size };
    if (leftOut.tasks > 0) notes.push(`${run.name}: ${leftOut.tasks} of its ${taskSets[i]!.size} tasks (${leftOut.rows} episodes) are not in every run and were left out; all figures are on the ${common.size} common tasks.`);
    if (run.tornLastLine) notes.push(`${run.name}: the last line of ${run.path} was half-written (an interrupted run) and was skipped.`);
    if (run.otherProtocolRows > 0) notes.push(`${run.name}: ${run.otherProtocolRows} rows of another protocol than ${input.protocol} were left out.`);
    const summary = summarize(rows);
    const models = Object.keys(summary.models);
    if (models.length > 1) notes.push(`${run.name}: rows of several models are counted together (${Object.entries(summary.models).map(([m, n]) => `${m} ${n}`).join(", ")}).`);
    return { name: run.name, path: run.path, protocol: rows[0]!.protocol, models, rows, leftOut, tornLastLine: run.tornLastLine, otherProtocolRows: run.otherProtocolRows, summary };
  });
  const suites = [...new Set(runs.flatMap((r) => r.summary.bySuite.map((s) => s.suite)))];
  if (suites.length > 1) notes.push(`The runs hold tasks of ${suites.length} suites (${suites.join(", ")}): each suite has its own rows; "overall" counts them together.`);
  const protocols = [...new Set(runs.map((r) => r.protocol))];
  if (protocols.length > 1) notes.push(`The runs use different protocols (${runs.map((r) => `${r.name}: ${r.protocol}`).join(", ")}).`);
  const comparisons = runs.slice(1).map((run) => compareRuns(runs[0]!, run));
  const charts = [...successByTypeCharts(runs, reference), successOverallChart(runs, reference), statusChart(runs)];
  return { ehrgym_version: EHRGYM_VERSION, runs, commonTasks: common.size, comparisons, ...(reference ? { reference } : {}), charts, notes };
}
export type ReportContent = ReturnType<typeof buildReport>;
