// Row hygiene of `ehrgym dataset build` (child processes on real files): a text FINISH with prose
// after its answer is not a clean action, tool-call turns carry content "", exact duplicates are
// dropped and counted, `validate` warns about a --keep correct dataset that trains invalid turns.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TrlRow } from "../../datasets/index.ts";
import type { EpisodeRowInput } from "../../rollout/index.ts";
import { expertRows, toJsonl } from "./fixture.ts";
import { cli, readJsonl } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-dsh-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let rows: EpisodeRowInput[];
const rowsOf = (d: string) =>
  readdirSync(join(d, "data"))
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) => readJsonl(join(d, "data", f))) as TrlRow[];
const lastAssistant = (r: EpisodeRowInput) => r.messages.map((m) => m.role).lastIndexOf("assistant");

beforeAll(async () => {
  rows = await expertRows({ perType: 1, suites: ["mab-v1"] });
});

describe("dataset build: row hygiene", () => {
  it("--keep clean leaves out a correct text row whose FINISH has text after its answer; check names it", () => {
    const text = rows.find((r) => r.protocol === "text" && r.reward === 1 && r.kind === "action")!;
    const prose = structuredClone(text);
    prose.sample = 20;
    const i = lastAssistant(prose);
    prose.messages[i] = { role: "assistant", content: `${prose.messages[i]!.content} since the patient needs it.` };
    const input = join(dir, "prose.jsonl");
    writeFileSync(input, toJsonl([...rows, prose]));
    const out = join(dir, "prose");
    const r = cli(["dataset", "build", "--from", input, "--out", out, "--splits", "train"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("unclean 1");
    expect(rowsOf(out).some((x) => x.sample === 20)).toBe(false);
    const kept = join(dir, "prose-correct");
    expect(cli(["dataset", "build", "--from", input, "--out", kept, "--splits", "train", "--keep", "correct"]).status).toBe(0);
    const line = join(dir, "prose-line.jsonl");
    writeFileSync(line, `${JSON.stringify(rowsOf(kept).find((x) => x.sample === 20))}\n`);
    const c = cli(["dataset", "check", line]);
    expect(c.status).toBe(1);
    expect(c.stderr).toContain("FINISH whose answer is not JSON (text after FINISH([...])?)");
  });

  it("tool-call turns without text carry content \"\" (null in the openai format)", () => {
    const out = join(dir, "content");
    const input = join(dir, "all.jsonl");
    writeFileSync(input, toJsonl(rows));
    expect(cli(["dataset", "build", "--from", input, "--out", out, "--splits", "train"]).status).toBe(0);
    const calls = rowsOf(out).flatMap((r) => r.messages.filter((m) => m.tool_calls));
    expect(calls.length).toBeGreaterThan(5);
    for (const m of calls) expect(typeof m.content).toBe("string");
    expect(calls.some((m) => m.content === "")).toBe(true);
    for (const line of readFileSync(join(out, "openai", "train.jsonl"), "utf8").trim().split("\n"))
      for (const m of (JSON.parse(line) as { messages: { tool_calls?: unknown; content: unknown }[] }).messages) if (m.tool_calls) expect(m.content === null || (typeof m.content === "string" && m.content !== "")).toBe(true);
  });

  it("drops a conversation repeated exactly under another sample, counted in the summary, manifest and card", () => {
    const twice = rows.filter((r) => r.reward === 1).slice(0, 3).map((r) => ({ ...r, sample: 30 }));
    const input = join(dir, "twice.jsonl");
    writeFileSync(input, toJsonl([...rows, ...twice]));
    const out = join(dir, "twice");
    const r = cli(["dataset", "build", "--from", input, "--out", out, "--splits", "train"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("exact duplicates 3");
    expect(JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")).counts.exact_duplicates).toBe(3);
    expect(readFileSync(join(out, "README.md"), "utf8")).toContain("3 exact duplicates of another row's conversation");
    const kept = rowsOf(out);
    expect(new Set(kept.map((x) => JSON.stringify([x.messages, x.tools]))).size).toBe(kept.length);
  });

  it("validate warns (exit 0) when a --keep correct dataset trains an invalid turn", () => {
    const text = rows.find((r) => r.protocol === "text" && r.reward === 1)!;
    const recovered = structuredClone(text);
    recovered.sample = 40;
    const first = recovered.messages.findIndex((m) => m.role === "assistant");
    recovered.messages.splice(first, 0, { role: "assistant", content: "Let me look the patient up." }, { role: "user", content: "Invalid action" });
    const input = join(dir, "recovered.jsonl");
    writeFileSync(input, toJsonl([...rows, recovered]));
    const out = join(dir, "recovered");
    expect(cli(["dataset", "build", "--from", input, "--out", out, "--splits", "train", "--keep", "correct"]).status).toBe(0);
    const v = cli(["dataset", "validate", out]);
    expect(v.status, v.stderr).toBe(0);
    expect(v.stderr).toMatch(/^warning: 1 rows of this --keep correct dataset hold 1 assistant turns that are not valid actions \(first: data\/train-\S+\.jsonl:\d+\)/m);
    const clean = join(dir, "recovered-clean");
    expect(cli(["dataset", "build", "--from", input, "--out", clean, "--splits", "train"]).status).toBe(0);
    expect(cli(["dataset", "validate", clean]).stderr).not.toContain("warning");
  });
});
