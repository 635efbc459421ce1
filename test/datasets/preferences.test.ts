// `ehrgym dataset build --format ...,dpo,kto` end to end (child processes on real files): pairs of
// correct and failed trajectories of the same task prompt, labelled singles, their configs in the
// card, the same patient-disjoint splits as the SFT rows, decontamination, determinism, validate.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cardFeatures, DpoRow, hfFeatures, KtoRow, TrlRow } from "../../datasets/index.ts";
import type { EpisodeRowInput } from "../../rollout/index.ts";
import { expertRows, failedCopy, toJsonl } from "./fixture.ts";
import { arrowRowsApache, cli, readJsonl, tree } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-dsp-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const input = join(dir, "rollout.jsonl");
const ds = join(dir, "ds");
let rows: EpisodeRowInput[];
const build = (...args: string[]) => cli(["dataset", "build", ...args]);
const files = (d: string, folder: string) =>
  readdirSync(join(d, folder))
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .map((f) => join(d, folder, f));
const rowsOf = <T>(d: string, folder: string) => files(d, folder).flatMap(readJsonl) as T[];
const splitOfFile = (path: string) => /([a-z]+)-\d{5}-of-\d{5}-[0-9a-f]{16}\.jsonl$/.exec(path)![1]!;
const key = (r: { suite: string; task_id: string; sample?: number; protocol: string }) => `${r.suite}/${r.task_id}/${r.sample ?? 0}/${r.protocol}`;

beforeAll(async () => {
  const good = await expertRows({ perType: 2, samples: 2 });
  // failures on every other task: a wrong answer and an invalid turn; one endpoint failure that no format may use
  const failed = good
    .filter((r, i) => r.sample === 0 && i % 2 === 0)
    .flatMap((r, i) => [failedCopy(r, "wrong", 10), failedCopy(r, "invalid", 11), ...(i === 0 ? [failedCopy(r, "model_error", 12)] : [])]);
  rows = [...good, ...failed];
  writeFileSync(input, toJsonl(rows));
  const r = build("--from", input, "--out", ds, "--format", "trl,arrow,dpo,kto", "--pairs-per-task", "3", "--split-fractions", "0.6,0.2,0.2", "--seed", "5");
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/; dpo \d+ rows \(train \d+/);
});

describe("dataset build --format dpo,kto", () => {
  it("pairs each task prompt's correct episodes with its failed ones, capped, never an endpoint failure", () => {
    const dpo = rowsOf<DpoRow>(ds, "dpo");
    expect(dpo.length).toBeGreaterThan(10);
    const byKey = new Map(rows.map((r) => [key(r), r]));
    const sftIds = new Map((rowsOf<TrlRow>(ds, "data")).map((r) => [r.id, r]));
    const perPrompt = new Map<string, number>();
    for (const row of dpo) {
      expect(DpoRow.safeParse(row).success).toBe(true);
      expect(sftIds.has(row.chosen_id)).toBe(true); // the chosen episode is an SFT row (--keep clean)
      expect(["completed", "invalid_action"]).toContain(row.rejected_status);
      // the prompt ends where the model speaks next; both completions are the model's turns to its last
      expect(row.prompt[0]!.role).not.toBe("assistant");
      for (const side of [row.chosen, row.rejected]) {
        expect(side[0]!.role).toBe("assistant");
        expect(side.at(-1)!.role).toBe("assistant");
      }
      expect(row.chosen).not.toEqual(row.rejected);
      // the rows the pair came from, rebuilt: prompt + completion is the episode up to its last assistant turn
      const chosen = sftIds.get(row.chosen_id)!;
      const lastA = chosen.messages.map((m) => m.role).lastIndexOf("assistant");
      expect([...row.prompt, ...row.chosen]).toEqual(chosen.messages.slice(0, lastA + 1));
      const k = `${row.suite}/${row.task_id}/${row.protocol}`;
      perPrompt.set(k, (perPrompt.get(k) ?? 0) + 1);
      expect(byKey.get(`${row.suite}/${row.task_id}/${row.rejected_status === "completed" ? 10 : 11}/${row.protocol}`) ?? rows.find((x) => x.reward === 0 && x.task_id === row.task_id)).toBeDefined();
    }
    // 2 correct (samples 0, 1) and 2 failed per failing prompt: max(2, 2) = 2 pairs, under the cap of 3
    expect(Math.max(...perPrompt.values())).toBe(2);
    const prompt = (r: EpisodeRowInput) => `${r.suite}/${r.task_id}/${r.protocol}`;
    const pairable = new Set(rows.filter((r) => r.reward === 1).map(prompt).filter((p) => rows.some((r) => prompt(r) === p && r.reward === 0 && r.status !== "model_error")));
    expect(perPrompt.size).toBe(pairable.size);
    // the shared prefix: a wrong FINISH replaced only the last turn, so the prompt holds the turns before it
    expect(dpo.some((r) => r.prompt.some((m) => m.role === "assistant"))).toBe(true);
  });

  it("writes kto rows: correct episodes labelled true, the model's failures false, capped per prompt", () => {
    const kto = rowsOf<KtoRow>(ds, "kto");
    for (const row of kto) {
      expect(KtoRow.safeParse(row).success).toBe(true);
      expect(row.label).toBe(row.reward === 1);
      expect(row.prompt.some((m) => m.role === "assistant")).toBe(false);
      expect(row.completion.at(-1)!.role).toBe("assistant");
      expect(row.status).not.toBe("model_error");
    }
    // each conversation once (two samples that played out identically are one row)
    const distinct = (xs: EpisodeRowInput[]) => new Set(xs.map((r) => JSON.stringify(r.messages))).size;
    expect(kto.filter((r) => !r.label).length).toBe(distinct(rows.filter((r) => r.reward === 0 && r.status !== "model_error")));
    expect(kto.filter((r) => r.label).length).toBe(distinct(rows.filter((r) => r.reward === 1)));
    expect(new Set(kto.map((r) => r.id)).size).toBe(kto.length);
  });

  it("puts a patient in one split across every config", () => {
    const splitOf = new Map<string, string>();
    for (const folder of ["data", "dpo", "kto"])
      for (const f of files(ds, folder))
        for (const r of readJsonl(f) as { patient: string }[]) {
          if (!r.patient) continue;
          expect(splitOf.get(r.patient) ?? splitOfFile(f), `${folder} ${r.patient}`).toBe(splitOfFile(f));
          splitOf.set(r.patient, splitOfFile(f));
        }
    expect(new Set(splitOf.values()).size).toBeGreaterThan(1);
  });

  it("declares each config with its files and features in the card, the Arrow files with theirs, and validates", () => {
    const text = readFileSync(join(ds, "README.md"), "utf8");
    const header = parse(/^---\n([\s\S]*?)\n---\n/.exec(text)![1]!);
    expect(header.configs.map((c: { config_name: string }) => c.config_name)).toEqual(["default", "dpo", "kto"]);
    for (const [name, schema] of [["dpo", DpoRow], ["kto", KtoRow]] as const) {
      const config = header.configs.find((c: { config_name: string }) => c.config_name === name);
      for (const f of config.data_files) for (const path of f.path) expect(path).toMatch(new RegExp(`^${name}/${f.split}-\\d{5}-of-\\d{5}-[0-9a-f]{16}\\.arrow$`));
      const info = header.dataset_info.find((c: { config_name: string }) => c.config_name === name);
      expect(info.features).toEqual(cardFeatures(schema));
      for (const f of readdirSync(join(ds, name)).filter((x) => x.endsWith(".arrow"))) {
        const a = arrowRowsApache(join(ds, name, f));
        expect(JSON.parse(a.metadata.get("huggingface")!).info.features).toEqual(hfFeatures(schema));
        expect(a.rows.length).toBe(readJsonl(join(ds, name, f.replace(/\.arrow$/, ".jsonl"))).length);
      }
    }
    expect(cardFeatures(KtoRow)).toContainEqual({ name: "label", dtype: "bool" });
    for (const needle of ["## Preference configs", "DPOTrainer", "KTOTrainer", "desirable_weight", "--pairs-per-task 3"]) expect(text).toContain(needle);
    const v = cli(["dataset", "validate", ds]);
    expect(v.status, v.stderr).toBe(0);
  });

  it("validate names a dpo row whose completion does not end on an assistant turn", () => {
    const copy = join(dir, "tampered");
    cli(["dataset", "build", "--from", input, "--out", copy, "--format", "trl,dpo", "--splits", "train"]);
    const f = files(copy, "dpo")[0]!;
    const lines = readFileSync(f, "utf8").trim().split("\n");
    const row = JSON.parse(lines[0]!) as DpoRow;
    row.rejected.push({ role: "user", content: "x" });
    lines[0] = JSON.stringify(row);
    writeFileSync(f, `${lines.join("\n")}\n`);
    const v = cli(["dataset", "validate", copy]);
    expect(v.status).toBe(1);
    expect(v.stderr).toContain("rejected does not end on an assistant turn");
  });

  it("is deterministic: shuffled input in two shard files gives the same files", () => {
    const lines = toJsonl(rows).trim().split("\n").reverse();
    const a = join(dir, "a.jsonl");
    const b = join(dir, "b.jsonl");
    writeFileSync(a, `${lines.filter((_, i) => i % 2).join("\n")}\n`);
    writeFileSync(b, `${lines.filter((_, i) => !(i % 2)).join("\n")}\n`);
    const out = join(dir, "again");
    const r = build("--from", b, a, "--out", out, "--format", "trl,arrow,dpo,kto", "--pairs-per-task", "3", "--split-fractions", "0.6,0.2,0.2", "--seed", "5", "--name", "ds");
    expect(r.status, r.stderr).toBe(0);
    const x = tree(ds);
    const y = tree(out);
    x.delete("manifest.json");
    y.delete("manifest.json");
    expect([...y.keys()]).toEqual([...x.keys()]);
    for (const [k, v] of x) expect(y.get(k)!.equals(v), k).toBe(true);
  });

  it("drops failed episodes of held-out patients too, and leaves out a config with no rows", () => {
    const mrn = rows.find((r) => r.reward === 0 && r.mrn)!.mrn!;
    const list = join(dir, "held.txt");
    writeFileSync(list, `${mrn}\n`);
    const out = join(dir, "held");
    const r = build("--from", input, "--out", out, "--format", "trl,dpo,kto", "--exclude-mrns-from", list, "--splits", "train");
    expect(r.status, r.stderr).toBe(0);
    for (const folder of ["data", "dpo", "kto"]) expect(readFileSync(files(out, folder)[0]!, "utf8")).not.toContain(mrn);
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    expect(manifest.counts.failed_excluded).toBeGreaterThan(0);

    const onlyGood = join(dir, "good.jsonl");
    writeFileSync(onlyGood, toJsonl(rows.filter((x) => x.reward === 1)));
    const none = build("--from", onlyGood, "--out", join(dir, "nopairs"), "--format", "trl,dpo,kto", "--splits", "train");
    expect(none.status, none.stderr).toBe(0);
    expect(none.stderr).toContain("format dpo: no rows (no task has both a correct and a failed episode)");
    const header = parse(/^---\n([\s\S]*?)\n---\n/.exec(readFileSync(join(dir, "nopairs", "README.md"), "utf8"))![1]!);
    expect(header.configs.map((c: { config_name: string }) => c.config_name)).toEqual(["default", "kto"]);
  });
});
