// The run report: tables, charts (SVG + PNG), run-vs-run comparison and transcripts.
export { buildReport, type ReportContent, type ReportInput, type ReportRun, type RunInput } from "./build.ts";
export { renderChart, type Chart, type RenderedChart } from "./charts.ts";
export { compareRuns, type Comparison, type McNemarRow, type TaskRef } from "./compare.ts";
export { loadRun, ReportInputError, type LoadedRun } from "./load.ts";
export { loadReference, ReferenceFile, ReferenceModel } from "./reference.ts";
export { formatSummary } from "./text.ts";
export { writeReport, type ReportSummary, type WriteReportOptions, type WrittenReport } from "./write.ts";
