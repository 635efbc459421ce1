// The report page: one self-contained HTML file (inline CSS and SVG, no script, nothing fetched).
import type { RenderedChart } from "./charts.ts";
import type { ReportContent, ReportRun } from "./build.ts";
import { firstSamples, taskKey, type TaskRef } from "./compare.ts";
import { anchorId, esc } from "./html-escape.ts";
import { comparisonSection, referenceTable, ruleTable, runTable, shownTaskId } from "./html-tables.ts";
import type { EpisodeRow } from "../row.ts";
import { renderTranscript } from "./transcript.ts";

/** Failed tasks listed (and transcribed) per run at most: the page stays a few MB. */
export const MAX_FAILURES_LISTED = 60;

const CSS = `
body{font-family:"DejaVu Sans",system-ui,sans-serif;margin:0 auto;max-width:1280px;padding:1rem 1.5rem;color:#1d1d1f;background:#fff;line-height:1.4}
h1{margin:.2rem 0}h2{margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-size:.85rem}
caption{text-align:left;font-weight:bold;padding:.3rem 0}
th,td{border:1px solid #d0d0d0;padding:.2rem .45rem;text-align:right;white-space:nowrap}
th[scope=row],thead th{text-align:left;background:#f4f4f6}
tr.sum th,tr.sum td{background:#fafafa}tr.total th,tr.total td{font-weight:bold}
.notes li{color:#7a4b00}.meta,.usage{color:#444;font-size:.9rem}
figure{margin:1rem 0}figure svg{display:block;max-width:100%;height:auto}figcaption{font-size:.85rem;color:#555}
.scroll{overflow-x:auto;max-width:100%}.scroll table{margin:.2rem 0}
thead th{white-space:normal;vertical-align:bottom;min-width:3.5em}
th[scope=row]{position:sticky;left:0}
ul.failures{font-size:.85rem;padding-left:1.2rem}ul.failures li{margin:.15rem 0}
.check{font-family:"DejaVu Sans Mono",monospace;color:#c62828}.detail{color:#444;word-break:break-word}
.tid{font-family:"DejaVu Sans Mono",monospace}
ul.tasks{columns:3;font-size:.85rem}
.transcript{border:1px solid #ddd;border-radius:6px;padding:.4rem .8rem;margin:.5rem 0}
.transcript>summary{cursor:pointer}
.transcript h3{margin:.2rem 0}.ok{color:#2e7d32;font-weight:bold}.bad{color:#c62828;font-weight:bold}
.chat{display:flex;flex-direction:column;gap:.4rem}
.msg{border-radius:8px;padding:.3rem .6rem;max-width:85%}
.msg .role{font-size:.75rem;font-weight:bold;text-transform:uppercase;color:#555}
.msg.system,.msg.user{background:#eef3fb;align-self:flex-start}
.msg.assistant{background:#e8f5e9;align-self:flex-end}
.msg.tool{background:#f6f1e7;align-self:flex-start}
pre{white-space:pre-wrap;word-break:break-word;margin:.2rem 0;font-size:.8rem}
.cut{font-size:.75rem;color:#777;margin:0}.none{color:#777}
.refnote{color:#555;font-style:italic}
`;

const transcriptId = (runIndex: number, ref: { suite: string; task_id: string }) => anchorId("t", String(runIndex), ref.suite, ref.task_id);

/** Tables fit the column (headers wrap); one that still cannot scrolls inside its own box, never
 *  the page, its row headers staying in view. */
const boxed = (html: string) => html.replace(/<table\b/g, `<div class="scroll"><table`).replace(/<\/table>/g, "</table></div>");

function figure(chart: RenderedChart): string {
  return `<figure id="chart-${esc(chart.name)}">${chart.svg}<figcaption>${esc(chart.title)} · <a href="${esc(chart.name)}.png">${esc(chart.name)}.png</a></figcaption></figure>`;
}

function runsTable(runs: ReportRun[]): string {
  return (
    `<table class="runs"><caption>Runs</caption><thead><tr><th scope="col">run</th><th scope="col">file</th><th scope="col">model</th><th scope="col">protocol</th><th scope="col">episodes</th><th scope="col">tasks</th><th scope="col">samples per task</th><th scope="col">left out</th></tr></thead><tbody>` +
    runs
      .map(
        (r) =>
          `<tr><th scope="row">${esc(r.name)}</th><td>${esc(r.path)}</td><td>${esc(r.models.join(", "))}</td><td>${esc(r.protocol)}</td><td>${r.summary.overall.n}</td>` +
          `<td>${r.summary.overall.tasks}</td><td>${r.summary.samples}</td><td>${r.leftOut.tasks ? `${r.leftOut.tasks} tasks` : "-"}</td></tr>`,
      )
      .join("") +
    `</tbody></table>`
  );
}

/** What the terminal prints under a failure: its failed checks (the first, and how many more), or its error. */
function failedCheck(row: EpisodeRow): string {
  const failed = row.checks.filter((c) => !c.ok);
  const first = failed[0];
  if (first) return `: <span class="check">${esc(first.name)}</span> <span class="detail">${esc(first.detail)}</span>${failed.length > 1 ? ` (+${failed.length - 1} more)` : ""}`;
  return row.error ? `: <span class="detail">${esc(row.error)}</span>` : "";
}

export function renderPage(content: ReportContent, charts: RenderedChart[]): string {
  const { runs } = content;
  const firsts = runs.map((r) => firstSamples(r.rows));
  const wanted = runs.map(() => new Set<string>());
  const link = (runIndex: number, ref: TaskRef) => {
    wanted[runIndex]!.add(taskKey(ref));
    return transcriptId(runIndex, ref);
  };
  const comparisons = content.comparisons.map((c, i) => comparisonSection(c, (ref, side) => link(side === "base" ? 0 : i + 1, ref)));
  const perRun = runs.map((run, i) => {
    const failed = [...firsts[i]!.values()].filter((r) => r.reward !== 1);
    const listed = failed.slice(0, MAX_FAILURES_LISTED);
    const list = listed.length
      ? `<details class="tasklist"><summary>failed tasks (${failed.length}${failed.length > listed.length ? `, first ${listed.length}` : ""}; first sample of each) with the check that failed</summary><ul class="failures">${listed
          .map((r) => `<li><a class="tid" href="#${link(i, r)}">${esc(shownTaskId(r))}</a> ${esc(r.status)}${failedCheck(r)}</li>`)
          .join("")}</ul></details>`
      : "";
    return `<section class="run" id="${anchorId("run", String(i))}"><h2>${esc(run.name)}</h2>${runTable(run.name, run.summary)}${ruleTable(run.name, run.summary)}${list}</section>`;
  });
  const transcripts = runs.flatMap((run, i) =>
    [...wanted[i]!].flatMap((key) => {
      const row = firsts[i]!.get(key);
      return row ? [renderTranscript(row, transcriptId(i, row), run.name)] : [];
    }),
  );
  const title = `ehrgym report: ${runs.map((r) => r.name).join(" vs ")}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>${CSS}</style></head>
<body>
<header><h1>${esc(title)}</h1><p class="meta">ehrgym ${esc(content.ehrgym_version)} · ${content.commonTasks} tasks${runs.length > 1 ? " in every run" : ""} · success = reward 1 · intervals are Wilson 95%</p></header>
${boxed(runsTable(runs))}
${content.notes.length ? `<ul class="notes">${content.notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul>` : ""}
<section id="charts"><h2>Success rates</h2>${content.reference ? `<p class="refnote">Marks named in each chart's legend are published figures, not measured here, drawn only beside results on their own task set, ${esc(content.reference.suite)}. Source: ${esc(content.reference.source)}.</p>` : ""}${charts.map(figure).join("\n")}</section>
${content.reference ? `<section id="reference"><h2>Published figures (not measured here)</h2>${boxed(referenceTable(content.reference))}</section>` : ""}
${boxed(perRun.join("\n"))}
${boxed(comparisons.join("\n"))}
${transcripts.length ? `<section id="transcripts"><h2>Transcripts</h2><p class="meta">Failures and tasks the runs disagree on; click one to open it.</p>${transcripts.join("\n")}</section>` : ""}
</body></html>
`;
}
