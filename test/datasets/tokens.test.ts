// Format tokens: a rollout with --capture tokens against the stand-in (CLI child processes), built with
// `dataset build --format trl,arrow,tokens`: per trajectory what TRL's rollout_func returns, its own config
// in the card with declared features, written like every config (content-hashed JSONL and Arrow shards
// named one by one in the card), and `dataset validate` checking it.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EpisodeRow, trajectoryTokens } from "../../rollout/index.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { cardFeatures, hfFeatures } from "../../datasets/features.ts";
import { TokensRow } from "../../datasets/tokens.ts";
import { cli as rolloutCli, EHR_FLAGS, smallWorld } from "../rollout/rollout-fixture.ts";
import { arrowRowsApache, cliAsync, lengthTable, nearestRank, readJsonl } from "./helpers.ts";

const world = smallWorld(1);
let teacher: TeacherServer;
const runs = { text: join(world.dir, "text.jsonl"), tools: join(world.dir, "tools.jsonl"), plain: join(world.dir, "plain.jsonl") };

beforeAll(async () => {
  teacher = await startTeacherServer({ tasks: world.tasks, seed: 9 });
  const rollout = (out: string, ...extra: string[]) =>
    rolloutCli(["rollout", "--base-url", teacher.url, "--model", "ehrgym-stand-in", "--tasks", world.tasksFile, ...EHR_FLAGS, "--out", out, "--no-progress", ...extra]);
  const results = await Promise.all([
    rollout(runs.text, "--capture", "tokens"),
    rollout(runs.tools, "--capture", "tokens", "--protocol", "tools"),
    rollout(runs.plain),
  ]);
  for (const r of results) expect(r.status, r.stderr).toBe(0);
});
afterAll(async () => {
  await teacher?.close();
});

const episodes = (path: string) => readJsonl(path).map((r) => EpisodeRow.parse(r));
/** The files of a config's split in a built folder, by kind: content-hashed shard names. */
const shards = (ds: string, folder: string, split: string, ext: string) =>
  readdirSync(join(ds, folder))
    .filter((f) => new RegExp(`^${split}-\\d{5}-of-\\d{5}-[0-9a-f]{16}\\.${ext}$`).test(f))
    .sort()
    .map((f) => `${folder}/${f}`);
type Header = { configs: { config_name: string; data_files: { split: string; path: string[] }[] }[]; dataset_info: { config_name: string; features: unknown; splits: { num_examples: number }[] }[] };
const header = (ds: string) => parse(/^---\n([\s\S]*?)\n---\n/.exec(readFileSync(join(ds, "README.md"), "utf8"))![1]!) as Header;

describe("dataset build --format tokens", () => {
  it("writes per trajectory prompt_ids, completion_ids, logprobs and env_mask, a config of its own, and validates", async () => {
    const ds = join(world.dir, "ds");
    const b = await cliAsync(["dataset", "build", "--from", runs.text, runs.tools, "--out", ds, "--keep", "all", "--splits", "train", "--format", "trl,openai,arrow,tokens"]);
    expect(b.status, b.stderr).toBe(0);
    // every shard's name carries a hash of its content
    const [tokensJsonl] = shards(ds, "tokens", "train", "jsonl");
    const [tokensArrow] = shards(ds, "tokens", "train", "arrow");
    expect(tokensJsonl).toMatch(/^tokens\/train-00000-of-00001-[0-9a-f]{16}\.jsonl$/);
    const rows = readJsonl(join(ds, tokensJsonl!)).map((r) => TokensRow.parse(r));
    const sft = readJsonl(join(ds, shards(ds, "data", "train", "jsonl")[0]!));
    expect(b.stdout).toContain(`; tokens ${rows.length} rows (train ${rows.length})`);
    const byKey = new Map([...episodes(runs.text), ...episodes(runs.tools)].map((e) => [`${e.protocol}/${e.suite}/${e.task_id}`, e]));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length + Number(/without a token sequence/.test(b.stderr) ? /(\d+) without/.exec(b.stderr)![1] : 0)).toBe(sft.length);
    // Same rows, same order, as the SFT config.
    expect(rows.map((r) => r.id)).toEqual(sft.map((r) => r.id).filter((id) => rows.some((t) => t.id === id)));
    for (const row of rows) {
      const episode = byKey.get(`${row.protocol}/${row.suite}/${row.task_id}`)!;
      const t = trajectoryTokens(episode.turns!);
      if ("reason" in t) throw new Error(t.reason);
      expect({ prompt_ids: row.prompt_ids, completion_ids: row.completion_ids, logprobs: row.logprobs, env_mask: row.env_mask }).toEqual(t);
      // Model tokens are the turns' completions, in order; environment tokens carry logprob 0.
      const sampled = row.completion_ids.filter((_, i) => row.env_mask[i] === 1);
      expect(sampled).toEqual(episode.turns!.flatMap((c) => c.tokens!.completion_ids));
      row.env_mask.forEach((m, i) => m === 0 && expect(row.logprobs[i]).toBe(0));
      expect(row.prompt.at(-1)!.role).toBe("user");
      expect(row.reward).toBe(episode.reward);
    }
    // The Arrow shard holds the same rows, integers and floats exact, with the features in its schema.
    const arrow = arrowRowsApache(join(ds, tokensArrow!));
    expect(JSON.parse(arrow.metadata.get("huggingface")!).info.features).toEqual(hfFeatures(TokensRow));
    const fromArrow = arrow.rows as Record<string, unknown>[];
    expect(fromArrow.map((r) => r.id)).toEqual(rows.map((r) => r.id));
    fromArrow.forEach((r, i) => expect({ prompt_ids: r.prompt_ids, completion_ids: r.completion_ids, logprobs: r.logprobs, env_mask: r.env_mask }).toEqual({ prompt_ids: rows[i]!.prompt_ids, completion_ids: rows[i]!.completion_ids, logprobs: rows[i]!.logprobs, env_mask: rows[i]!.env_mask }));
    const card = readFileSync(join(ds, "README.md"), "utf8");
    const h = header(ds);
    expect(h.configs.map((c) => c.config_name)).toEqual(["default", "tokens"]);
    // named one by one, in the default config's file format (Arrow here), never a glob
    expect(h.configs[1]!.data_files).toEqual([{ split: "train", path: [tokensArrow] }]);
    const info = h.dataset_info.find((i) => i.config_name === "tokens")!;
    expect(info.features).toEqual(cardFeatures(TokensRow));
    expect(info.splits[0]!.num_examples).toBe(rows.length);
    const manifest = JSON.parse(readFileSync(join(ds, "manifest.json"), "utf8")) as { configs: { name: string; splits: { name: string; rows: number }[] }[]; files: { path: string; rows: number }[] };
    expect(manifest.configs).toEqual([{ name: "tokens", splits: [{ name: "train", rows: rows.length }] }]);
    expect(manifest.files.filter((f) => f.path.startsWith("tokens/")).map((f) => [f.path, f.rows])).toEqual([[tokensJsonl, rows.length], [tokensArrow, rows.length]]);
    expect(card).toContain("## Token-level rows (config `tokens`)");
    // The card's length figures of the tokens config count the sampled ids exactly.
    const sampledLengths = rows.map((r) => r.prompt_ids.length + r.completion_ids.length);
    expect(lengthTable(ds).get("tokens/train")).toEqual({ rows: rows.length, measured: "prompt_ids + completion_ids (sampled ids), tokens", p: [50, 90, 99, 100].map((p) => nearestRank(sampledLengths, p)) });
    const v = await cliAsync(["dataset", "validate", ds]);
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout).toContain(`tokens: ${rows.length} rows`);

    // The stand-in's own tokenizer as tokenizer.json: rendering each chat again gives the sampled ids,
    // except where a reply's first token would merge with the "\n" before it (counted, not a failure).
    const tokenizer = join(world.dir, "tokenizer.json");
    const t = await cliAsync(["teacher", "tokenizer", "--out", tokenizer]);
    expect(t.status, t.stderr).toBe(0);
    const same = await cliAsync(["dataset", "validate", ds, "--tokenizer", tokenizer]);
    expect(same.status, same.stderr).toBe(0);
    const differ = Number(/(\d+) of (\d+) re-tokenise to different ids/.exec(same.stdout)![1]);
    expect(differ).toBeLessThan(rows.length / 4);
    // Another tokenizer (bytes only: no merges) re-tokenises every row differently.
    const json = JSON.parse(readFileSync(tokenizer, "utf8")) as { model: { merges: unknown[]; vocab: Record<string, number> } };
    json.model.merges = [];
    json.model.vocab = Object.fromEntries(Object.entries(json.model.vocab).filter(([piece]) => [...piece].length === 1 || piece.startsWith("<|")));
    const bytesOnly = join(world.dir, "bytes-tokenizer.json");
    writeFileSync(bytesOnly, JSON.stringify({ ...json, model: { ...json.model, ignore_merges: false } }));
    const other = await cliAsync(["dataset", "validate", ds, "--tokenizer", bytesOnly]);
    expect(other.status, other.stderr).toBe(0);
    expect(other.stdout).toContain(`${rows.length} of ${rows.length} re-tokenise to different ids`);
    // The model's own chat template, here ChatML written in Jinja for messages without tools (what the
    // stand-in renders in the text protocol), in a tokenizer_config.json: the text protocol's rows
    // re-tokenise as with the built-in rendering, the tools protocol's (no tools block here) all differ.
    const config = join(world.dir, "tokenizer_config.json");
    writeFileSync(config, JSON.stringify({ chat_template: "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}", eos_token: "<|im_end|>" }));
    const templated = await cliAsync(["dataset", "validate", ds, "--tokenizer", tokenizer, "--chat-template", config]);
    expect(templated.status, templated.stderr).toBe(0);
    const toolsRows = rows.filter((r) => r.protocol === "tools").length;
    expect(toolsRows).toBeGreaterThan(0);
    const withTemplate = new RegExp(`(\\d+) of ${rows.length} re-tokenise to different ids with ${tokenizer} when the chat is rendered again \\(with ${config}\\)`).exec(templated.stdout);
    expect(withTemplate, templated.stdout).not.toBeNull();
    expect(Number(withTemplate![1])).toBeGreaterThanOrEqual(toolsRows);
    expect(Number(withTemplate![1])).toBeLessThanOrEqual(toolsRows + differ);
    // Flags at fault exit 2: a template without a tokenizer, files that cannot be read as what they name.
    for (const flags of [["--chat-template", config], ["--tokenizer", config], ["--tokenizer", tokenizer, "--chat-template", tokenizer]]) {
      const bad = await cliAsync(["dataset", "validate", ds, ...flags]);
      expect(bad.status, `${flags.join(" ")}: ${bad.stderr}`).toBe(2);
      expect(bad.stderr).toMatch(/--chat-template|--tokenizer/);
    }
  });

  it("without arrow, names its JSONL shards; shards count the token rows, not the kept rows, and validate finds a broken one", async () => {
    // Rows without captured tokens are kept in the SFT config but have no token row.
    const ds = join(world.dir, "jsonl-ds");
    const b = await cliAsync(["dataset", "build", "--from", runs.text, runs.plain, "--out", ds, "--keep", "all", "--splits", "train", "--format", "trl,tokens", "--shard-rows", "2"]);
    expect(b.status, b.stderr).toBe(0);
    const sftRows = shards(ds, "data", "train", "jsonl").flatMap((f) => readJsonl(join(ds, f)));
    const files = shards(ds, "tokens", "train", "jsonl");
    const rows = files.flatMap((f) => readJsonl(join(ds, f)));
    const skipped = Number(/(\d+) without a token sequence/.exec(b.stderr)![1]);
    expect(skipped).toBeGreaterThan(0);
    expect(rows.length).toBe(sftRows.length - skipped);
    // the token rows are SFT rows' trajectories, in the SFT rows' order
    expect(rows.map((r) => r.id)).toEqual(sftRows.map((r) => r.id).filter((id) => rows.some((t) => t.id === id)));
    const n = Math.ceil(rows.length / 2);
    expect(files.map((f) => f.replace(/-[0-9a-f]{16}\.jsonl$/, ""))).toEqual(Array.from({ length: n }, (_, k) => `tokens/train-${String(k).padStart(5, "0")}-of-${String(n).padStart(5, "0")}`));
    expect(shards(ds, "tokens", "train", "arrow")).toEqual([]);
    expect(header(ds).configs[1]!.data_files).toEqual([{ split: "train", path: files }]);
    expect((await cliAsync(["dataset", "validate", ds])).status).toBe(0);
    // A token row that breaks its schema is found by validate's row checks, naming the file and line.
    const first = join(ds, files[0]!);
    const lines = readFileSync(first, "utf8").split("\n");
    const bad = JSON.parse(lines[0]!) as Record<string, unknown>;
    bad.env_mask = [];
    lines[0] = JSON.stringify(bad);
    writeFileSync(first, lines.join("\n"));
    const v = await cliAsync(["dataset", "validate", ds]);
    expect(v.status).toBe(1);
    expect(v.stderr).toContain(`${files[0]}:1: field env_mask: logprobs and env_mask must hold one value per completion id`);
  });

  it("refuses when no kept trajectory captured tokens, saying how to get them", async () => {
    const r = await cliAsync(["dataset", "build", "--from", runs.plain, "--out", join(world.dir, "plain-ds"), "--keep", "all", "--splits", "train", "--format", "trl,tokens"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/--format tokens: none of the \d+ kept trajectories has a token sequence .*--capture tokens/);
  });
});
