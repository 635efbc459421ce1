// Format tokens: a rollout with --capture tokens against the stand-in (CLI child processes), built with
// `dataset build --format trl,tokens`: per trajectory what TRL's rollout_func returns, its own config
// in the card with declared features, and `dataset validate` checking it.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EpisodeRow, trajectoryTokens } from "../../rollout/index.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { tokensCardFeatures, TokensRow } from "../../datasets/tokens.ts";
import { cli as rolloutCli, EHR_FLAGS, smallWorld } from "../rollout/rollout-fixture.ts";
import { cliAsync, readJsonl } from "./helpers.ts";

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

describe("dataset build --format tokens", () => {
  it("writes per trajectory prompt_ids, completion_ids, logprobs and env_mask, a config of its own, and validates", async () => {
    const ds = join(world.dir, "ds");
    const b = await cliAsync(["dataset", "build", "--from", runs.text, runs.tools, "--out", ds, "--keep", "all", "--splits", "train", "--format", "trl,openai,tokens"]);
    expect(b.status, b.stderr).toBe(0);
    const rows = readJsonl(join(ds, "tokens", "train-00000-of-00001.jsonl")).map((r) => TokensRow.parse(r));
    // the SFT shard's name carries a hash of its content
    const sft = readJsonl(join(ds, "data", readdirSync(join(ds, "data")).find((f) => /^train-00000-of-00001-[0-9a-f]{16}\.jsonl$/.test(f))!));
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
    const card = readFileSync(join(ds, "README.md"), "utf8");
    const header = parse(/^---\n([\s\S]*?)\n---\n/.exec(card)![1]!) as { configs: { config_name: string; data_files: unknown }[]; dataset_info: { config_name: string; features: unknown; splits: { num_examples: number }[] }[] };
    expect(header.configs.map((c) => c.config_name)).toEqual(["default", "tokens"]);
    expect(header.configs[1]!.data_files).toEqual([{ split: "train", path: "tokens/train-*.jsonl" }]);
    const info = header.dataset_info.find((i) => i.config_name === "tokens")!;
    expect(info.features).toEqual(tokensCardFeatures());
    expect(info.splits[0]!.num_examples).toBe(rows.length);
    expect(card).toContain("## Token-level rows (config `tokens`)");
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
  });

  it("refuses tokens beside arrow (datasets would read the tokens config with the Arrow builder)", async () => {
    const r = await cliAsync(["dataset", "build", "--from", runs.text, "--out", join(world.dir, "arrow-ds"), "--format", "trl,arrow,tokens"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--format: tokens cannot be combined with arrow yet/);
  });

  it("refuses when no kept trajectory captured tokens, saying how to get them", async () => {
    const r = await cliAsync(["dataset", "build", "--from", runs.plain, "--out", join(world.dir, "plain-ds"), "--keep", "all", "--splits", "train", "--format", "trl,tokens"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/--format tokens: none of the \d+ kept trajectories has a token sequence .*--capture tokens/);
  });
});
