// The report's charts: Vega-Lite specs built from the run summaries, compiled with vega-lite,
// rendered to SVG by vega (headless) and to PNG by resvg.
import type { TopLevelSpec } from "vega-lite";
import { STATUSES, STATUS_LABELS, type EvalSummary, type Rate } from "../metrics.ts";
import type { ReferenceFile } from "./reference.ts";

export const CHART_FONT = "DejaVu Sans";
/** PNG pixels per SVG unit. */
export const PNG_SCALE = 2;

export interface ChartRun {
  name: string;
  summary: EvalSummary;
}

export interface Chart {
  /** File stem of the PNG and anchor id of the SVG. */
  name: string;
  title: string;
  spec: TopLevelSpec;
}

const NOT_MEASURED = "published, not measured here";
const config = { font: CHART_FONT, legend: { labelLimit: 320, titleLimit: 320 }, axis: { labelFontSize: 11, titleFontSize: 12 } };

const datum = (run: string, group: string, r: Rate) => ({ run, group, rate: r.rate, low: r.ci.low, high: r.ci.high, n: r.n, success: r.success });
type BarDatum = ReturnType<typeof datum>;

/** Bars of success rate per group, one per run, with Wilson intervals and reference ticks. */
function groupedBars(title: string, groups: string[], runs: string[], bars: BarDatum[], refs: { group: string; model: string; value: number }[]): TopLevelSpec {
  const x = { field: "group", type: "nominal" as const, sort: groups, title: null, axis: { labelAngle: groups.length > 6 ? -40 : 0 } };
  const xOffset = { field: "run", type: "nominal" as const, sort: runs };
  const y = { field: "rate", type: "quantitative" as const, scale: { domain: [0, 1] }, axis: { format: ".0%" }, title: "success rate" };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: title, subtitle: "bars: success rate; lines: Wilson 95% interval" + (refs.length ? `; marks: ${NOT_MEASURED}` : "") },
    width: Math.max(320, groups.length * (runs.length * 20 + 18)),
    height: 260,
    config,
    layer: [
      {
        data: { values: bars },
        mark: "bar",
        encoding: {
          x,
          xOffset,
          y,
          color: { field: "run", type: "nominal", sort: runs, title: "run" },
          tooltip: [{ field: "run" }, { field: "group" }, { field: "rate", format: ".1%" }, { field: "success" }, { field: "n" }],
        },
      },
      {
        data: { values: bars },
        mark: { type: "rule", strokeWidth: 1.5 },
        encoding: { x, xOffset, y: { field: "low", type: "quantitative" }, y2: { field: "high" }, color: { value: "#222" } },
      },
      ...(refs.length
        ? [
            {
              data: { values: refs },
              // One shape and colour per published model, named in the legend, each at its own offset
              // within the group so that models with close figures do not hide one another.
              mark: { type: "point" as const, filled: true, size: 70, strokeWidth: 1, stroke: "#fff" },
              encoding: {
                x,
                xOffset: { field: "model", type: "nominal" as const, sort: [...new Set(refs.map((r) => r.model))] },
                y: { field: "value", type: "quantitative" as const },
                shape: { field: "model", type: "nominal" as const, title: NOT_MEASURED },
                fill: { field: "model", type: "nominal" as const, title: NOT_MEASURED, scale: { scheme: "dark2" } },
                tooltip: [{ field: "model" }, { field: "group" }, { field: "value", format: ".1%" }],
              },
            },
          ]
        : []),
    ],
    resolve: { scale: { color: "independent", fill: "independent", shape: "independent", xOffset: "independent" } },
  } as TopLevelSpec;
}

/** One chart per suite (a column holds ten task types); published figures only on their own suite's. */
export function successByTypeCharts(runs: ChartRun[], reference?: ReferenceFile): Chart[] {
  const suites = [...new Set(runs.flatMap((r) => r.summary.byType.map((t) => t.suite)))];
  return suites.map((suite) => {
    const groups: string[] = [];
    for (const run of runs) for (const t of run.summary.byType) if (t.suite === suite && !groups.includes(t.type)) groups.push(t.type);
    const bars = runs.flatMap((run) => run.summary.byType.filter((t) => t.suite === suite).map((t) => datum(run.name, t.type, t.rate)));
    const refs =
      reference?.suite === suite
        ? reference.models.flatMap((m) =>
            Object.entries(m.by_type ?? {})
              .map(([type, value]) => ({ group: type, model: m.name, value }))
              .filter((r) => groups.includes(r.group)),
          )
        : [];
    const title = `Success rate per task type, ${suite}`;
    return { name: `success-by-type-${suite}`, title, spec: groupedBars(title, groups, runs.map((r) => r.name), bars, refs) };
  });
}

export function successOverallChart(runs: ChartRun[], reference?: ReferenceFile): Chart {
  const suites = [...new Set(runs.flatMap((r) => r.summary.bySuite.map((s) => s.suite)))];
  const groups = ["overall", ...(suites.length > 1 ? suites : []), "query", "action"];
  const bars = runs.flatMap((run) => [
    datum(run.name, "overall", run.summary.overall),
    ...(suites.length > 1 ? run.summary.bySuite.map((s) => datum(run.name, s.suite, s.rate)) : []),
    datum(run.name, "query", run.summary.byKind.query),
    datum(run.name, "action", run.summary.byKind.action),
  ]);
  // Published figures are on one suite's tasks: beside the overall/query/action bars only when the
  // runs hold that suite alone, else (overall only) beside that suite's bar.
  const own = reference !== undefined && suites.length === 1 && suites[0] === reference.suite;
  const refs = (reference?.models ?? []).flatMap((m) =>
    own
      ? (["overall", "query", "action"] as const).flatMap((g) => (m[g] === undefined ? [] : [{ group: g, model: m.name, value: m[g] }]))
      : m.overall !== undefined && suites.length > 1 && suites.includes(reference!.suite)
        ? [{ group: reference!.suite, model: m.name, value: m.overall }]
        : [],
  );
  const title = "Success rate overall and by kind";
  return { name: "success-overall", title, spec: groupedBars(title, groups, runs.map((r) => r.name), bars.filter((b) => b.n > 0), refs) };
}

export function statusChart(runs: ChartRun[]): Chart {
  const labels = STATUSES.map((s) => STATUS_LABELS[s]);
  const values = runs.flatMap((run) =>
    STATUSES.map((s, order) => ({ run: run.name, status: STATUS_LABELS[s], order, episodes: run.summary.overall.status[s], share: run.summary.overall.n ? run.summary.overall.status[s] / run.summary.overall.n : 0 })),
  );
  const title = "How episodes ended";
  return {
    name: "status",
    title,
    spec: {
      $schema: "https://vega.github.io/schema/vega-lite/v6.json",
      title,
      width: 560,
      height: Math.max(60, runs.length * 34),
      config,
      data: { values },
      mark: "bar",
      encoding: {
        y: { field: "run", type: "nominal", sort: runs.map((r) => r.name), title: null },
        x: { field: "share", type: "quantitative", stack: "zero", axis: { format: ".0%" }, title: "share of episodes", scale: { domain: [0, 1] } },
        color: {
          field: "status",
          type: "nominal",
          sort: labels,
          scale: { domain: labels, range: ["#4c9a2a", "#e8a33d", "#d1603d", "#8e5ea2", "#c0392b", "#555555"] },
          title: "status",
        },
        order: { field: "order" },
        tooltip: [{ field: "run" }, { field: "status" }, { field: "episodes" }, { field: "share", format: ".1%" }],
      },
    } as TopLevelSpec,
  };
}

// Loaded on first use: every `ehrgym` command imports rollout, few draw charts.
let renderers: Promise<[typeof import("vega"), typeof import("vega-lite"), typeof import("@resvg/resvg-js")]> | undefined;
const loadRenderers = () => (renderers ??= Promise.all([import("vega"), import("vega-lite"), import("@resvg/resvg-js")]));

export async function renderChart(chart: Chart) {
  const [vega, { compile }, { Resvg }] = await loadRenderers();
  // vega-lite and vega report harmless layout notes through their loggers; keep stdout clean.
  const compiled = compile(chart.spec, { logger: vega.logger(vega.None) }).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none", logLevel: vega.None });
  let svg: string;
  try {
    svg = await view.toSVG();
  } finally {
    view.finalize();
  }
  const png = new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: CHART_FONT }, fitTo: { mode: "zoom", value: PNG_SCALE } }).render();
  return { name: chart.name, title: chart.title, svg, png: png.asPng(), width: png.width, height: png.height };
}
export type RenderedChart = Awaited<ReturnType<typeof renderChart>>;
