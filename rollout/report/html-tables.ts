// The report's tables as HTML: one per run (rates, intervals, pass@k, statuses, rounds; for workflows
// rows also each rule's checkpoints), the published reference figures, and a run-vs-run comparison
// (counts, McNemar, task lists).
import { STATUSES, STATUS_LABELS, type EvalSummary, type Rate } from "../metrics.ts";
import type { Comparison, TaskRef } from "./compare.ts";
import { esc } from "./html-escape.ts";
import type { ReferenceFile } from "./reference.ts";
import { passAtKCell, pct, shownK } from "./text.ts";

export const pValue = (p: number) => (p < 0.001 ? "&lt;0.001" : p.toFixed(3));

export function runTable(name: string, s: EvalSummary): string {
  const ks = s.samples > 1 ? shownK(s.overall.passAtK?.length ?? 0) : [];
  const head = ["group", "kind", "success", "n", "rate", "95% CI", ...ks.map((k) => `pass@${k}`), ...STATUSES.map((st) => STATUS_LABELS[st]), "mean rounds"];
  const line = (group: string, kind: string, r: Rate, cls = "") =>
    `<tr${cls ? ` class="${cls}"` : ""}><th scope="row">${esc(group)}</th><td>${esc(kind)}</td><td>${r.success}</td><td>${r.n}</td>` +
    `<td>${r.n ? pct(r.rate) : "-"}</td><td>${r.n ? `${pct(r.ci.low)} – ${pct(r.ci.high)}` : "-"}</td>` +
    ks.map((k) => `<td>${passAtKCell(r, k)}</td>`).join("") +
    STATUSES.map((st) => `<td>${r.status[st]}</td>`).join("") +
    `<td>${r.meanRounds.toFixed(2)}</td></tr>`;
  const rows = [
    ...s.byType.map((t) => line(`${t.suite}/${t.type}`, t.kind, t.rate)),
    ...(s.bySuite.length > 1 ? s.bySuite.map((x) => line(x.suite, "suite", x.rate, "sum")) : []),
    line("query", "", s.byKind.query, "sum"),
    line("action", "", s.byKind.action, "sum"),
    line(s.bySuite.length > 1 ? `overall (${s.bySuite.map((x) => x.suite).join(" + ")})` : "overall", "", s.overall, "sum total"),
  ];
  const extra: string[] = [];
  if (s.usage) {
    const u = s.usage;
    extra.push(
      `tokens: ${u.prompt_tokens.toLocaleString("en-US")} prompt + ${u.completion_tokens.toLocaleString("en-US")} completion = ${u.total_tokens.toLocaleString("en-US")} ` +
        `over ${u.episodes} episodes (${u.perEpisode.prompt_tokens.toLocaleString("en-US")} + ${u.perEpisode.completion_tokens.toLocaleString("en-US")} per episode)`,
    );
  }
  if (s.latency) extra.push(`latency per model call: p50 ${s.latency.p50_ms} ms, p95 ${s.latency.p95_ms} ms over ${s.latency.turns} calls`);
  return (
    `<table class="rates" data-run="${esc(name)}"><caption>${esc(name)}: success rate with Wilson 95% interval${ks.length ? `; pass@k over ${s.samples} samples per task (unbiased estimator)` : ""}; episodes by status</caption>` +
    `<thead><tr>${head.map((h) => `<th scope="col">${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows.join("")}</tbody></table>` +
    (extra.length ? `<p class="usage">${extra.map(esc).join("<br>")}</p>` : "")
  );
}

/** workflows rows: each rule's checkpoint success, and the mean partial credit of the episodes that asked
 *  for it (the terminal's "checkpoints per rule"); empty for a run without checkpoints. */
export function ruleTable(name: string, s: EvalSummary): string {
  const b = s.byRule;
  if (!b) return "";
  const head = ["rule", "source", "passed", "n", "rate", "mean partial credit"];
  return (
    `<table class="rules" data-run="${esc(name)}"><caption>${esc(name)}: checkpoints per rule over ${b.episodes} episodes (mean partial credit ${b.meanPartialCredit.toFixed(3)}); ` +
    `mean partial credit of the episodes that asked for each rule</caption>` +
    `<thead><tr>${head.map((h) => `<th scope="col">${esc(h)}</th>`).join("")}</tr></thead><tbody>` +
    b.rules
      .map((r) => `<tr><th scope="row">${esc(r.rule)}</th><td>${esc(r.source)}</td><td>${r.passed}</td><td>${r.n}</td><td>${pct(r.rate)}</td><td>${r.meanPartialCredit.toFixed(3)}</td></tr>`)
      .join("") +
    `</tbody></table>`
  );
}

export function referenceTable(ref: ReferenceFile): string {
  const types = [...new Set(ref.models.flatMap((m) => Object.keys(m.by_type ?? {})))];
  const cell = (v: number | undefined) => `<td>${v === undefined ? "-" : pct(v)}</td>`;
  return (
    `<table class="reference"><caption>Published figures, not measured here: ${esc(ref.source)}${ref.url ? ` (${esc(ref.url)})` : ""}; suite ${esc(ref.suite)}</caption>` +
    `<thead><tr><th scope="col">model</th><th scope="col">overall</th><th scope="col">query</th><th scope="col">action</th>${types.map((t) => `<th scope="col">${esc(t)}</th>`).join("")}</tr></thead><tbody>` +
    ref.models.map((m) => `<tr><th scope="row">${esc(m.name)}</th>${cell(m.overall)}${cell(m.query)}${cell(m.action)}${types.map((t) => cell(m.by_type?.[t])).join("")}</tr>`).join("") +
    `</tbody></table>`
  );
}

/** A task's id as shown: once, with its suite in front unless the id already starts with it. */
export function shownTaskId(ref: TaskRef): string {
  return ref.task_id.startsWith(`${ref.suite}/`) ? ref.task_id : `${ref.suite}/${ref.task_id}`;
}

/** Task ids; where the runs disagree, each links to the transcripts of both runs. */
function taskLinks(refs: TaskRef[], link: ((ref: TaskRef, run: "base" | "other") => string) | undefined, c: Comparison): string {
  if (refs.length === 0) return `<p class="none">none</p>`;
  return `<ul class="tasks">${refs
    .map(
      (r) =>
        `<li><span class="tid">${esc(shownTaskId(r))}</span>${link ? ` <a href="#${link(r, "base")}">${esc(c.base)}</a> · <a href="#${link(r, "other")}">${esc(c.other)}</a>` : ""}</li>`,
    )
    .join("")}</ul>`;
}

export function comparisonSection(c: Comparison, link: (ref: TaskRef, run: "base" | "other") => string): string {
  const counts =
    `<table class="diff"><caption>${esc(c.other)} against ${esc(c.base)} on ${c.pairs} tasks (first sample of each)</caption>` +
    `<thead><tr><th scope="col">fixed (only ${esc(c.other)} passes)</th><th scope="col">broken (only ${esc(c.base)} passes)</th><th scope="col">both pass</th><th scope="col">neither passes</th></tr></thead>` +
    `<tbody><tr><td>${c.fixed.length}</td><td>${c.broken.length}</td><td>${c.both.length}</td><td>${c.neither.length}</td></tr></tbody></table>`;
  const mcnemar =
    `<table class="mcnemar"><caption>Exact McNemar test (two-sided, binomial on the discordant pairs)</caption>` +
    `<thead><tr><th scope="col">group</th><th scope="col">tasks</th><th scope="col">only ${esc(c.base)}</th><th scope="col">only ${esc(c.other)}</th><th scope="col">p</th></tr></thead><tbody>` +
    c.mcnemar.map((m) => `<tr${m.group === "overall" ? ` class="sum total"` : ""}><th scope="row">${esc(m.group)}</th><td>${m.pairs}</td><td>${m.b}</td><td>${m.c}</td><td>${pValue(m.p)}</td></tr>`).join("") +
    `</tbody></table>`;
  const lists = (
    [
      ["fixed", c.fixed, true],
      ["broken", c.broken, true],
      ["both pass", c.both, false],
      ["neither passes", c.neither, false],
    ] as const
  )
    .map(([label, refs, disagree]) => `<details class="tasklist"${disagree ? " open" : ""}><summary>${esc(label)} (${refs.length})</summary>${taskLinks(refs, disagree ? link : undefined, c)}</details>`)
    .join("");
  return `<section class="comparison"><h2>${esc(c.other)} vs ${esc(c.base)}</h2>${counts}${mcnemar}${lists}</section>`;
}
