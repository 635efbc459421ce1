// The report of two realistic runs (the scripted expert's rows, and a seeded perturbation of them
// as a model run): its numbers against an independent count of the raw rows, its PNGs decoded,
// and its page opened in Debian's headless chromium with every request but the file refused.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { crc32, inflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeReport, type ReportSummary } from "../../rollout/index.ts";
import { expertRows, perturbed, workflowRows, writeRun } from "./report-fixture.ts";

const CHROMIUM = "/usr/bin/chromium";
const dir = mkdtempSync(join(tmpdir(), "ehrgym-report-html-"));
const KEEP = process.env.EHRGYM_KEEP_REPORT_TEST === "1"; // keep the folder (screenshots) for a look
const out = join(dir, "report");
afterAll(() => (KEEP ? console.log(`report test files kept in ${dir}`) : rmSync(dir, { recursive: true, force: true })));

type Raw = { suite: string; task_id: string; type: string; sample: number; reward: number };
const rawRows = (path: string): Raw[] =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Raw);

let summary: ReportSummary;
let html: string;
let basePath: string;
let sftPath: string;
/** A report whose runs hold workflows reviews too: the expert's, and a real stand-in eval's. */
const outWf = join(dir, "report-workflows");
let htmlWf: string;
let standInPath: string;

beforeAll(async () => {
  const rows = await expertRows();
  basePath = writeRun(join(dir, "base.jsonl"), perturbed(rows, 1, 0.35, "base-model"));
  sftPath = writeRun(join(dir, "sft.jsonl"), perturbed(rows, 2, 0.12));
  const reference = join(dir, "reference.json");
  writeFileSync(reference, JSON.stringify({ source: "figures made up for this test", models: [{ name: "model X", overall: 0.7, query: 0.8, action: 0.6, by_type: { task1: 0.9, task5: 0.5 } }] }));
  const written = await writeReport({ runs: [{ name: "base", path: basePath }, { name: "sft", path: sftPath }], out, reference });
  summary = written.summary;
  html = readFileSync(join(out, "index.html"), "utf8");
  expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8"))).toEqual(summary);
  const wf = await workflowRows();
  const expertPath = writeRun(join(dir, "wf-expert.jsonl"), [...rows, ...wf.expert]);
  standInPath = writeRun(join(dir, "wf-stand-in.jsonl"), [...perturbed(rows, 3, 0.2, "ehrgym-stand-in"), ...wf.standIn]);
  await writeReport({ runs: [{ name: "expert", path: expertPath }, { name: "stand-in", path: standInPath }], out: outWf, reference: "medagentbench-v1" });
  htmlWf = readFileSync(join(outWf, "index.html"), "utf8");
});

/** 2 * sum_{i <= min(b, c)} C(b+c, i) / 2^(b+c), in exact integers. */
function mcnemarByHand(b: number, c: number): number {
  const n = BigInt(b + c);
  let sum = 0n;
  let binom = 1n;
  for (let i = 0n; i <= BigInt(Math.min(b, c)); i++) {
    sum += binom;
    binom = (binom * (n - i)) / (i + 1n);
  }
  return Math.min(1, (2 * Number(sum)) / 2 ** (b + c));
}

describe("report numbers", () => {
  it("equal a count of the raw rows, per run and per type", () => {
    for (const [i, path] of [basePath, sftPath].entries()) {
      const raw = rawRows(path);
      const s = summary.runs[i]!.summary;
      expect(s.overall.n).toBe(raw.length);
      expect(s.overall.success).toBe(raw.filter((r) => r.reward === 1).length);
      for (const t of s.byType) {
        const mine = raw.filter((r) => r.suite === t.suite && r.type === t.type);
        expect([t.rate.n, t.rate.success]).toEqual([mine.length, mine.filter((r) => r.reward === 1).length]);
      }
    }
  });

  it("the diff and the McNemar p-value equal a hand computation on the raw rows", () => {
    const base = new Map(rawRows(basePath).map((r) => [`${r.suite}/${r.task_id}`, r.reward === 1]));
    const sft = new Map(rawRows(sftPath).map((r) => [`${r.suite}/${r.task_id}`, r.reward === 1]));
    let fixed = 0;
    let broken = 0;
    for (const [key, ok] of base) {
      if (!ok && sft.get(key)) fixed++;
      if (ok && !sft.get(key)) broken++;
    }
    const c = summary.comparisons[0]!;
    expect([c.fixed.length, c.broken.length]).toEqual([fixed, broken]);
    expect(fixed + broken).toBeGreaterThan(3); // the fixture really differs
    const overall = c.mcnemar.find((m) => m.group === "overall")!;
    expect(overall.p).toBeCloseTo(mcnemarByHand(broken, fixed), 9);
  });

  it("the per-rule table of a workflows run equals a count of the run's raw rows (a real stand-in eval)", () => {
    type WfRow = { suite: string; reward: number; partial_credit?: number; checkpoints?: { rule: string; source: string; ok: boolean }[] };
    const raw = (readFileSync(standInPath, "utf8").trim().split("\n").map((l) => JSON.parse(l)) as WfRow[]).filter((r) => r.suite === "workflows");
    expect(raw.length).toBe(12);
    // By hand: per rule, in the order first asked, its checkpoints passed / asked and the partial credit of those episodes.
    const byHand = new Map<string, { source: string; n: number; passed: number; credit: number }>();
    for (const r of raw) {
      const cps = r.checkpoints!;
      expect(r.partial_credit, "partial credit is the passed fraction").toBeCloseTo(cps.filter((c) => c.ok).length / cps.length, 12);
      for (const c of cps) {
        const e = byHand.get(c.rule) ?? { source: c.source, n: 0, passed: 0, credit: 0 };
        e.n++;
        e.passed += c.ok ? 1 : 0;
        e.credit += r.partial_credit!;
        byHand.set(c.rule, e);
      }
    }
    const expected = [...byHand].map(([rule, e]) => [rule, e.source, String(e.passed), String(e.n), `${((100 * e.passed) / e.n).toFixed(1)}%`, (e.credit / e.n).toFixed(3)]);
    const table = /<table class="rules" data-run="stand-in">(.*?)<\/table>/.exec(htmlWf)?.[1];
    expect(table, "the stand-in run's per-rule table").toBeDefined();
    const cells = [...table!.split("<tbody>")[1]!.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((c) => c[1]!));
    expect(cells).toEqual(expected);
    const mean = raw.reduce((s, r) => s + r.partial_credit!, 0) / raw.length;
    expect(table).toContain(`over ${raw.length} episodes (mean partial credit ${mean.toFixed(3)}`);
    // The run is not trivial: some checkpoints fail, some episodes earn partial credit without the reward.
    expect(expected.some((r) => r[2] !== r[3])).toBe(true);
    expect(raw.some((r) => r.reward === 0 && r.partial_credit! > 0 && r.partial_credit! < 1)).toBe(true);
    // The expert's table: every rule at 100%; the runs without workflows rows have none.
    expect(/<table class="rules" data-run="expert">.*?<\/table>/.exec(htmlWf)![0].match(/<td>100\.0%<\/td>/g)).toHaveLength(expected.length);
    expect(html).not.toContain(`class="rules"`);
  });

  it("tokens and latency of the model run are reported, not for the expert-less fields", () => {
    expect(summary.runs[1]!.summary.usage!.episodes).toBe(summary.runs[1]!.summary.overall.n);
    expect(summary.runs[1]!.summary.latency!.p95_ms).toBeGreaterThanOrEqual(summary.runs[1]!.summary.latency!.p50_ms);
  });
});

/** Walks the PNG chunks (checking each CRC), inflates the image data and checks its size. */
function decodePng(bytes: Buffer): { width: number; height: number } {
  expect(bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  for (;;) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.subarray(offset + 4, offset + 8).toString("latin1");
    const data = bytes.subarray(offset + 8, offset + 8 + length);
    expect(bytes.readUInt32BE(offset + 8 + length)).toBe(crc32(bytes.subarray(offset + 4, offset + 8 + length)));
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      expect(data[8]).toBe(8); // bit depth
      channels = ({ 2: 3, 6: 4 } as Record<number, number>)[data[9]!]!;
    }
    if (type === "IDAT") idat.push(Buffer.from(data));
    offset += 12 + length;
    if (type === "IEND") break;
  }
  expect(inflateSync(Buffer.concat(idat)).length).toBe(height * (1 + width * channels));
  return { width, height };
}

describe("report files", () => {
  it("one PNG per chart, decoding to twice the size of its SVG", () => {
    expect(summary.charts.map((c) => c.name)).toEqual(["success-by-type-mab-v1", "success-by-type-mab-v2", "success-overall", "status"]);
    for (const chart of summary.charts) {
      const svg = new RegExp(`<figure id="chart-${chart.name}"><svg[^>]* width="(\\d+)" height="(\\d+)"`).exec(html);
      expect(svg, chart.name).not.toBeNull();
      const size = decodePng(readFileSync(join(out, chart.png)));
      expect(size).toEqual({ width: 2 * Number(svg![1]), height: 2 * Number(svg![2]) });
      expect([chart.width, chart.height]).toEqual([size.width, size.height]);
    }
  });

  it("the page is self-contained: no external reference", () => {
    expect(html).not.toMatch(/<script|<link|<img|@import|url\((?!#)/i);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });
});

// Skipped only outside CI: `.ci/run` installs chromium, and there a missing browser fails the test.
describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)("the page in headless chromium", () => {
  if (!existsSync(CHROMIUM)) console.warn(`skipped: no ${CHROMIUM} (apt-get install -y chromium)`);

  it("renders every chart and table, links task ids to their transcripts, with no console error and no request", async () => {
    const { default: puppeteer } = await import("puppeteer-core");
    const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
    try {
      const page = await browser.newPage();
      const url = pathToFileURL(join(out, "index.html")).href;
      const requests: string[] = [];
      const errors: string[] = [];
      await page.setRequestInterception(true);
      page.on("request", (req) => {
        if (req.url() === url) return void req.continue();
        requests.push(req.url());
        void req.abort();
      });
      page.on("console", (m) => {
        if (m.type() === "error" || m.type() === "warn") errors.push(m.text());
      });
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.setViewport({ width: 1300, height: 1000 });
      await page.goto(url, { waitUntil: "load" });
      const dom = await page.evaluate(() => ({
        charts: [...document.querySelectorAll("figure[id^=chart-] > svg")].map((svg) => ({
          id: svg.parentElement!.id,
          width: svg.getBoundingClientRect().width,
          marks: svg.querySelectorAll("path, rect, line").length,
          text: svg.textContent ?? "",
        })),
        rateTables: [...document.querySelectorAll("table.rates")].map((t) => t.getAttribute("data-run")),
        rateRows: document.querySelectorAll("table.rates tbody tr").length,
        runs: document.querySelectorAll("table.runs tbody tr").length,
        reference: document.querySelector("table.reference")?.textContent ?? "",
        diff: document.querySelector("table.diff tbody")?.textContent ?? "",
        mcnemar: document.querySelectorAll("table.mcnemar tbody tr").length,
        links: [...document.querySelectorAll(".comparison ul.tasks a")].map((a) => a.getAttribute("href")!),
      }));
      expect(dom.charts.map((c) => c.id)).toEqual(["chart-success-by-type-mab-v1", "chart-success-by-type-mab-v2", "chart-success-overall", "chart-status"]);
      for (const c of dom.charts) {
        expect(c.width, c.id).toBeGreaterThan(200);
        expect(c.marks, c.id).toBeGreaterThan(10);
      }
      expect(dom.charts[0]!.text).toContain("task1");
      // Published v1 figures beside v1 bars only, named in the legend.
      expect(dom.charts[0]!.text).toContain("not measured here");
      expect(dom.charts[0]!.text).toContain("model X");
      expect(dom.charts[1]!.text).not.toContain("not measured here");
      expect(dom.rateTables).toEqual(["base", "sft"]);
      expect(dom.rateRows).toBeGreaterThan(2 * 20);
      expect(dom.runs).toBe(2);
      expect(dom.reference).toContain("model X");
      const c = summary.comparisons[0]!;
      expect(dom.diff.replace(/\s+/g, " ").trim()).toBe(`${c.fixed.length}${c.broken.length}${c.both.length}${c.neither.length}`);
      expect(dom.mcnemar).toBe(c.mcnemar.length);
      expect(dom.links.length).toBe(2 * (c.fixed.length + c.broken.length)); // only tasks the runs disagree on
      // Every task link lands on a transcript rendered as a chat.
      const targets = await page.evaluate(
        (hrefs) => hrefs.map((h) => document.getElementById(decodeURIComponent(h.slice(1)))?.querySelectorAll(".chat .msg").length ?? 0),
        dom.links,
      );
      expect(targets.every((n) => n >= 2)).toBe(true);
      await page.screenshot({ path: join(dir, "report-top.png") });
      const charts = await page.$("#charts");
      await charts!.screenshot({ path: join(dir, "report-charts.png") });
      await page.goto(`${url}${dom.links[0]}`, { waitUntil: "load" });
      await page.screenshot({ path: join(dir, "report-transcript.png") });
      expect(decodePng(readFileSync(join(dir, "report-charts.png"))).width).toBeGreaterThan(500);
      expect(requests).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it("fits 1280 and 1920 px windows: no table wider than the viewport or its box (the per-rule tables of workflows runs too), failed checks shown, published marks apart, transcripts collapsed, bounded height", async () => {
    expect(html.length).toBeLessThan(3 * 1024 * 1024);
    // The shipped leaderboard: seven models with close figures on the same three bars.
    const out7 = join(dir, "report-seven");
    await writeReport({ runs: [{ name: "base", path: basePath }, { name: "sft", path: sftPath }], out: out7, reference: "medagentbench-v1" });
    const { default: puppeteer } = await import("puppeteer-core");
    const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
    try {
      const page = await browser.newPage();
      for (const [name, folder] of [["custom reference", out], ["medagentbench-v1", out7], ["workflows", outWf]] as const) {
        for (const width of [1280, 1920]) {
          const at = `${name}, at ${width} px`;
          await page.setViewport({ width, height: 900 });
          await page.goto(pathToFileURL(join(folder, "index.html")).href, { waitUntil: "load" });
          const layout = await page.evaluate(() => {
            const column = document.body.getBoundingClientRect();
            const right = column.right - parseFloat(getComputedStyle(document.body).paddingRight);
            const boxes = [...document.querySelectorAll("figure > svg, div.scroll")].map((e) => ({ what: e.tagName + "." + (e.parentElement?.id || e.className), right: e.getBoundingClientRect().right }));
            const tables = [...document.querySelectorAll("table")].map((t) => ({ what: t.className, width: t.getBoundingClientRect().width, box: t.parentElement!.clientWidth }));
            // Published marks (not the legend's): [chart, x] of each, x rounded to a pixel.
            const marks = [...document.querySelectorAll("figure[id^=chart-]")].flatMap((f) =>
              [...f.querySelectorAll("g.mark-symbol path")].filter((p) => !p.closest(".role-legend")).map((p) => `${f.id} ${Math.round(Number(/translate\(([-\d.]+)/.exec(p.getAttribute("transform") ?? "")?.[1]))}`),
            );
            return {
              right,
              viewport: window.innerWidth,
              overflowing: boxes.filter((b) => b.right > right + 1),
              tooLarge: tables.filter((t) => t.width > t.box + 1 || t.width > window.innerWidth),
              scrolling: [...document.querySelectorAll("div.scroll")].filter((d) => d.scrollWidth > d.clientWidth + 1).length,
              tables: tables.length,
              rules: tables.filter((t) => t.what === "rules").length,
              boxes: boxes.length,
              pageWidth: document.documentElement.scrollWidth,
              height: document.documentElement.scrollHeight,
              transcripts: document.querySelectorAll("details.transcript").length,
              open: document.querySelectorAll("details.transcript[open]").length,
              doubled: [...document.querySelectorAll(".tid")].filter((e) => /^(mab-v[12])\/\1\//.test(e.textContent ?? "")).length,
              failures: [...document.querySelectorAll("section.run ul.failures li")].map((li) => ({ text: li.textContent ?? "", check: li.querySelector(".check, .detail") !== null })),
              marks,
              parentheses: [...document.querySelectorAll("caption, summary, figcaption, p")].map((e) => e.textContent ?? "").filter((t) => /\)\)|\(\(/.test(t)),
            };
          });
          expect(layout.boxes).toBeGreaterThan(8);
          expect(layout.tables).toBeGreaterThan(5);
          expect(layout.rules, `per-rule tables (${at})`).toBe(folder === outWf ? 2 : 0);
          expect(layout.overflowing, at).toEqual([]);
          expect(layout.tooLarge, at).toEqual([]);
          expect(layout.scrolling, at).toBe(0);
          expect(layout.pageWidth, at).toBeLessThanOrEqual(width);
          expect(layout.transcripts).toBeGreaterThan(0);
          expect(layout.open).toBe(0);
          expect(layout.doubled).toBe(0);
          expect(layout.failures.length, at).toBeGreaterThan(0);
          for (const f of layout.failures) expect(f.check, `a failed task without its failed check: ${f.text}`).toBe(true);
          expect(layout.marks.length, at).toBeGreaterThan(0);
          expect(new Set(layout.marks).size, `published marks on one x position (${at})`).toBe(layout.marks.length);
          expect(layout.parentheses, at).toEqual([]);
          expect(layout.height, at).toBeLessThan(12_000);
          const shot = join(dir, `report-${folder === out ? "custom" : folder === out7 ? "seven" : "workflows"}-${width}.png`);
          await page.screenshot({ path: shot, fullPage: true });
          expect(decodePng(readFileSync(shot)).width).toBe(width);
        }
      }
    } finally {
      await browser.close();
    }
  });
});
