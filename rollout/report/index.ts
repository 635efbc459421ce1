// The run report: tables, charts (SVG + PNG), run-vs-run comparison and transcripts.
export { loadReference, ReferenceFile } from "./reference.ts";
export { ReportInputError } from "./load.ts";
export { formatSummary } from "./text.ts";
export { writeReport, type ReportSummary } from "./write.ts";
