// `dataset build --tokenizer FILE --max-tokens N` (child processes on real files): rows whose
// conversation, rendered as ChatML, is longer than N tokens are dropped from every config and counted;
// the card gives nearest-rank length percentiles per config and split, in tokens with a tokenizer and in
// characters without one. The tokenizer here is built in the test: one id per byte plus the two ChatML
// markers, so a text's token count is known without any tokenizer code.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toTrlRow } from "../../datasets/convert.ts";
import type { TrlRow } from "../../datasets/index.ts";
import { EpisodeRow, IM_END, IM_START, renderChatML, type EpisodeRowInput } from "../../rollout/index.ts";
import { expertRows, toJsonl } from "./fixture.ts";
import { cli, lengthTable, nearestRank, readJsonl } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-dsl-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A byte-level BPE tokenizer.json without merges: every byte its own id, the ChatML markers one id each. */
function bytesTokenizer(path: string): void {
  const vocab: Record<string, number> = {};
  let shift = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    vocab[String.fromCodePoint(printable ? b : 256 + shift++)] = b;
  }
  const added = [IM_START, IM_END].map((content, i) => ({ id: 256 + i, content, special: true }));
  writeFileSync(path, JSON.stringify({ version: "1.0", added_tokens: added, normalizer: null, pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, use_regex: false }, model: { type: "BPE", vocab, merges: [] } }));
}

/** What the rendered conversation of a row is: ChatML with the tool list, no generation prompt. */
const rendered = (r: TrlRow) => renderChatML(r.messages as Parameters<typeof renderChatML>[0], r.tools ?? undefined, false);
/** Its length in the bytes tokenizer's ids: a marker is one id, everything else one id a UTF-8 byte. */
const byteTokens = (text: string) => text.split(/(<\|im_start\|>|<\|im_end\|>)/).reduce((n, part) => n + (part === IM_START || part === IM_END ? 1 : Buffer.byteLength(part)), 0);
const lengthOf = (row: EpisodeRowInput) => byteTokens(rendered(toTrlRow(EpisodeRow.parse(row))));

const files = (ds: string, folder: string) =>
  readdirSync(join(ds, folder))
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .map((f) => join(ds, folder, f));
const splitOf = (path: string) => /([a-z]+)-\d{5}-of-/.exec(path)![1]!;

let rows: EpisodeRowInput[];
let tokenizer: string;

beforeAll(async () => {
  rows = await expertRows({ perType: 1 });
  tokenizer = join(dir, "bytes-tokenizer.json");
  bytesTokenizer(tokenizer);
});

describe("dataset build --tokenizer --max-tokens", () => {
  it("drops exactly the rows longer than N tokens from every config, counts them, and the card's percentiles are the kept rows'", () => {
    // A failed episode of a short correct text task: once short (a dpo pair's rejected side), once over the limit.
    const lengths = rows.map(lengthOf).sort((a, b) => a - b);
    const limit = lengths[Math.floor(lengths.length / 2)]!;
    const chosen = rows.filter((r) => r.protocol === "text" && lengthOf(r) < limit - 200).sort((a, b) => lengthOf(a) - lengthOf(b))[0]!;
    const failed = (sample: number, answer: string) => {
      const r = structuredClone(chosen);
      r.sample = sample;
      r.reward = 0;
      const last = r.messages.map((m) => m.role).lastIndexOf("assistant");
      r.messages[last] = { role: "assistant", content: `FINISH([${JSON.stringify(answer)}])` };
      return r;
    };
    const shortFail = failed(7, "wrong");
    const longFail = failed(8, "x".repeat(limit));
    expect(lengthOf(shortFail)).toBeLessThanOrEqual(limit);
    expect(lengthOf(longFail)).toBeGreaterThan(limit);
    const input = join(dir, "rows.jsonl");
    writeFileSync(input, toJsonl([...rows, shortFail, longFail]));

    const ds = join(dir, "limited");
    const r = cli(["dataset", "build", "--from", input, "--out", ds, "--format", "trl,dpo,kto", "--splits", "train,test", "--split-fractions", "0.5,0.5", "--tokenizer", tokenizer, "--max-tokens", String(limit)]);
    expect(r.status, r.stderr).toBe(0);
    const tooLong = rows.filter((x) => lengthOf(x) > limit);
    expect(tooLong.length).toBeGreaterThan(0);
    expect(r.stdout).toMatch(new RegExp(`, too long ${tooLong.length}\\n$`));

    // Exactly the rows at or under the limit are kept: the ids of the SFT rows are theirs.
    const kept = files(ds, "data").flatMap((f) => (readJsonl(f) as TrlRow[]).map((row) => ({ row, split: splitOf(f) })));
    const expected = rows.filter((x) => lengthOf(x) <= limit).map((x) => toTrlRow(EpisodeRow.parse(x)).id);
    expect(kept.map((k) => k.row.id).sort()).toEqual(expected.sort());
    for (const k of kept) expect(byteTokens(rendered(k.row))).toBeLessThanOrEqual(limit);
    const manifest = JSON.parse(readFileSync(join(ds, "manifest.json"), "utf8")) as { counts: Record<string, number>; build: { options: Record<string, unknown> } };
    expect(manifest.counts.too_long).toBe(tooLong.length);
    expect(manifest.counts.failed_too_long).toBe(1);
    expect(manifest.build.options.max_tokens).toBe(limit);
    // The preference configs never use the long failure; the short one is a rejected side.
    const dpo = files(ds, "dpo").flatMap((f) => readJsonl(f));
    const kto = files(ds, "kto").flatMap((f) => readJsonl(f));
    const idOf = (x: EpisodeRowInput) => toTrlRow(EpisodeRow.parse(x)).id;
    expect(dpo.map((p) => p.rejected_id)).toEqual([idOf(shortFail)]);
    expect(kto.some((k) => k.id === idOf(longFail))).toBe(false);
    expect(kto.some((k) => k.id === idOf(shortFail))).toBe(true);

    // The card: nearest-rank p50/p90/p99/max of the kept rows' token counts, per split and over all.
    const table = lengthTable(ds);
    const card = readFileSync(join(ds, "README.md"), "utf8");
    expect(card).toContain(`\`--max-tokens ${limit}\` dropped ${tooLong.length} rows and 1 failed episodes of the preference side`);
    expect(card).toContain(`${tooLong.length} longer than ${limit.toLocaleString("en-US")} tokens (--max-tokens)`);
    const splits = [...new Set(kept.map((k) => k.split))].sort();
    expect(splits).toEqual(["test", "train"]);
    for (const split of [...splits, "all"]) {
      const values = kept.filter((k) => split === "all" || k.split === split).map((k) => byteTokens(rendered(k.row)));
      expect(table.get(`default/${split}`), split).toEqual({ rows: values.length, measured: "the conversation, tokens", p: [50, 90, 99, 100].map((p) => nearestRank(values, p)) });
    }
    // dpo: the longer of the pair's trajectories.
    const pair = [...table.entries()].filter(([k]) => k.startsWith("dpo/"));
    expect(pair.map(([, v]) => [v.rows, v.p[3]])).toEqual([[1, Math.max(lengthOf(chosen), lengthOf(shortFail))]]);
    for (const [, v] of table) expect(v.p[3]).toBeLessThanOrEqual(limit);
    expect(cli(["dataset", "validate", ds]).status).toBe(0);
  });

  it("--chat-template: rows are measured as the model's template renders them, and the card says so", () => {
    const input = join(dir, "templated.jsonl");
    writeFileSync(input, toJsonl(rows));
    const template = join(dir, "roles.jinja");
    writeFileSync(template, "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}");
    const ds = join(dir, "templated");
    const r = cli(["dataset", "build", "--from", input, "--out", ds, "--splits", "train", "--format", "trl", "--tokenizer", tokenizer, "--chat-template", template]);
    expect(r.status, r.stderr).toBe(0);
    // A message without content (a tool call) renders as its role alone.
    const values = files(ds, "data").flatMap((f) => (readJsonl(f) as TrlRow[]).map((row) => byteTokens(row.messages.map((m) => `[${m.role}]${m.content ?? ""}`).join(""))));
    expect(lengthTable(ds).get("default/train")).toEqual({ rows: values.length, measured: "the conversation, tokens", p: [50, 90, 99, 100].map((p) => nearestRank(values, p)) });
    expect(readFileSync(join(ds, "README.md"), "utf8")).toMatch(/rendered with the chat template given to `--chat-template` \(sha256 `[0-9a-f]{16}…`\)/);
    expect(JSON.parse(readFileSync(join(ds, "manifest.json"), "utf8")).build.options.chat_template_sha256).toMatch(/^[0-9a-f]{64}$/);
    // A template that does not parse is the flag at fault: one line, exit 2, nothing written.
    const broken = join(dir, "broken.jinja");
    writeFileSync(broken, "{% for m in messages %}{{ m.content }");
    const out = join(dir, "refused-template");
    const bad = cli(["dataset", "build", "--from", input, "--out", out, "--splits", "train", "--chat-template", broken]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^ehrgym: --chat-template .*broken\.jinja: the template does not parse/);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  });

  it("without --tokenizer the card gives characters; --max-tokens without it, or a tokenizer it cannot read, is a one-line usage error that writes nothing", () => {
    const input = join(dir, "plain.jsonl");
    writeFileSync(input, toJsonl(rows));
    const ds = join(dir, "chars");
    const r = cli(["dataset", "build", "--from", input, "--out", ds, "--splits", "train", "--format", "trl"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toContain("too long");
    const chars = files(ds, "data").flatMap((f) => (readJsonl(f) as TrlRow[]).map((row) => rendered(row).length));
    expect(lengthTable(ds).get("default/train")).toEqual({ rows: chars.length, measured: "the conversation, characters", p: [50, 90, 99, 100].map((p) => nearestRank(chars, p)) });
    expect(readFileSync(join(ds, "README.md"), "utf8")).toContain("No tokenizer was given (`--tokenizer tokenizer.json`)");

    const cases: [string[], RegExp][] = [
      [["--max-tokens", "4096"], /^ehrgym: --max-tokens: give --tokenizer tokenizer\.json .*\(got "4096"\)\n$/],
      [["--max-tokens", "0", "--tokenizer", tokenizer], /^ehrgym: --max-tokens: .*\(got "0"\)\n$/],
      [["--max-tokens", "many", "--tokenizer", tokenizer], /^ehrgym: --max-tokens: .*\(got "many"\)\n$/],
      [["--max-tokens", "10", "--tokenizer", join(dir, "missing.json")], /^ehrgym: --tokenizer: no such file/],
      [["--max-tokens", "10", "--tokenizer", input], /^ehrgym: --tokenizer .*plain\.jsonl: not a readable JSON file/],
    ];
    for (const [flags, message] of cases) {
      const out = join(dir, "refused");
      const bad = cli(["dataset", "build", "--from", input, "--out", out, "--splits", "train", ...flags]);
      expect(bad.status, flags.join(" ")).toBe(2);
      expect(bad.stderr, flags.join(" ")).toMatch(message);
      expect(bad.stderr.trim().split("\n")).toHaveLength(1);
      expect(existsSync(out)).toBe(false);
    }
  });
});
