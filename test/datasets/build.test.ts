// `ehrgym dataset build` end to end (child processes on real files): formats, determinism,
// splits, decontamination, bad input.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDataset, cardFeatures, hfFeatures, type Format, OPENAI_LINE_FIELDS, OPENAI_MESSAGE_FIELDS, rowColumns, toolCallProblems, TrlRow } from "../../datasets/index.ts";

/** An Arrow row as `datasets` decodes it: the Json columns' text parsed. */
const decoded = (r: unknown) => {
  const row = r as { messages: string[]; tools: string | null };
  return { ...row, messages: row.messages.map((m) => JSON.parse(m)), tools: row.tools === null ? null : JSON.parse(row.tools) };
};
import type { EpisodeRowInput } from "../../rollout/index.ts";
import { expertRows, toJsonl } from "./fixture.ts";
import { arrowRowsApache, arrowRowsFlechette, cli, cliChild, readJsonl, tree } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-ds-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let rows: EpisodeRowInput[];
let firstStderr = "";
const input = join(dir, "teacher.jsonl");
const ds = join(dir, "ds");

const build = (...args: string[]) => cli(["dataset", "build", ...args]);
const jsonlFiles = (d: string, split?: string) =>
  readdirSync(join(d, "data"))
    .filter((f) => f.endsWith(".jsonl") && (!split || f.startsWith(`${split}-`)))
    .sort()
    .map((f) => join(d, "data", f));
const allRows = (d: string) => jsonlFiles(d).flatMap(readJsonl) as TrlRow[];
/** How many rows a build keeps of these: a conversation repeated exactly (same messages, tools, reward) counts once. */
const distinctRows = (xs: readonly EpisodeRowInput[]) => new Set(xs.map((r) => JSON.stringify([r.messages, r.tools ?? null, r.reward]))).size;

beforeAll(async () => {
  rows = await expertRows({ perType: 2, samples: 2 });
  // one failed episode so --keep matters (the expert is right on these tasks)
  rows.push({ ...rows[0]!, sample: 7, reward: 0, status: "completed", checks: [{ name: "answer", ok: false, detail: "wrong" }] });
  writeFileSync(input, toJsonl(rows));
  const r = build("--from", input, "--out", ds, "--split-fractions", "0.6,0.2,0.2", "--seed", "5", "--name", "ehr-sft-test");
  expect(r.status, r.stderr).toBe(0);
  firstStderr = r.stderr;
});

describe("dataset build", () => {
  it("shows its progress in a log as whole lines: the input's MB read, then the rows written, each to 100%", () => {
    const kept = new Set(rows.filter((r) => r.reward === 1).map((r) => JSON.stringify(r.messages))).size;
    const mb = Math.round(statSync(input).size / 1e6).toLocaleString("en-US");
    expect(firstStderr).not.toContain("\r");
    expect(firstStderr, firstStderr).toMatch(new RegExp(`^dataset: reading ${mb}/${mb} MB \\(100%\\) \\| [\\d.,]+ MB/s \\| ETA \\S+$`, "m"));
    expect(firstStderr, firstStderr).toMatch(new RegExp(`^dataset: writing ${kept}/${kept} rows \\(100%\\) \\| [\\d.,]+ rows/s \\| ETA \\S+$`, "m"));
    expect(firstStderr.indexOf("dataset: reading")).toBeLessThan(firstStderr.indexOf("dataset: writing"));
  });

  it("stops on SIGINT or SIGTERM with one line and exit 130, leaving nothing behind", async () => {
    // Big enough to take a second or two: the signal comes as soon as the build's temp folder appears.
    const big = join(dir, "big.jsonl");
    writeFileSync(big, Array.from({ length: 8 }, (_, k) => toJsonl(rows.map((r) => ({ ...r, sample: (r.sample ?? 0) + 100 * (k + 1) })))).join(""));
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      const out = join(dir, `stopped-${signal}`);
      const child = cliChild(["dataset", "build", "--from", big, "--out", out]);
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
      const temp = `.${basename(out)}.tmp-${child.pid}`;
      while (!readdirSync(dir).includes(temp)) await new Promise((r) => setTimeout(r, 5));
      child.kill(signal);
      expect(await closed, stderr).toBe(130);
      expect(stderr).toContain(`dataset build stopped: nothing written (${out} is as it was)`);
      expect(readdirSync(dir).filter((f) => f.includes(`stopped-${signal}`))).toEqual([]);
    }
  });

  it("keeps the correct episodes as trl rows that pass the one row schema", () => {
    const out = allRows(ds);
    // a conversation played out identically by two samples is kept once
    const conversation = (r: EpisodeRowInput) => JSON.stringify(r.messages);
    const correct = rows.filter((r) => r.reward === 1);
    expect(out.length).toBe(distinctRows(correct));
    for (const row of out) expect(TrlRow.safeParse(row).success).toBe(true);
    expect(new Set(out.map((r) => r.id)).size).toBe(out.length);
    // every source row is there by its key, or another sample with the same conversation is
    const keys = new Set(out.map((r) => `${r.suite}/${r.task_id}/${r.sample}/${r.protocol}`));
    const key = (r: EpisodeRowInput) => `${r.suite}/${r.task_id}/${r.sample}/${r.protocol}`;
    for (const r of correct) expect(correct.some((x) => conversation(x) === conversation(r) && keys.has(key(x)))).toBe(true);
    const tools = out.filter((r) => r.protocol === "tools");
    expect(tools.length).toBeGreaterThan(0);
    for (const r of tools) expect(Array.isArray(r.tools)).toBe(true);
    // absent keys, not nulls: chat templates test `'tool_calls' in message`
    for (const m of out.flatMap((r) => r.messages)) for (const k of ["tool_calls", "tool_call_id", "name"]) expect(k in m ? (m as Record<string, unknown>)[k] : "absent").not.toBeNull();
    expect(out.every((r) => r.patient_source === "synthetic (seed 3, 8 patients)")).toBe(true);
    for (const r of out.filter((x) => x.protocol === "text")) expect(r.tools).toBeNull();
    expect(out.every((r) => r.model === "scripted-expert" && r.prompt_tokens > 0)).toBe(true);
  });

  it("writes Arrow streams that apache-arrow and flechette both read back as the JSONL rows, with the huggingface features", () => {
    for (const jsonl of jsonlFiles(ds)) {
      const expected = readJsonl(jsonl);
      const a = arrowRowsApache(jsonl.replace(/\.jsonl$/, ".arrow"));
      const f = arrowRowsFlechette(jsonl.replace(/\.jsonl$/, ".arrow"));
      expect(a.rows.map(decoded)).toEqual(expected);
      expect(f.rows.map(decoded)).toEqual(expected);
      const meta = JSON.parse(a.metadata.get("huggingface")!);
      expect(meta.info.features).toEqual(hfFeatures());
      expect(JSON.parse(f.metadata!.get("huggingface")!)).toEqual(meta);
      // datasets' Json feature for the messages and the tool list
      expect(meta.info.features.messages).toEqual({ feature: { _type: "Json" }, _type: "List" });
      expect(meta.info.features.tools).toEqual({ _type: "Json" });
      expect(meta.info.features.rounds).toEqual({ dtype: "int64", _type: "Value" });
      expect(Object.keys(meta.info.features)).toEqual(rowColumns().map(([n]) => n));
    }
  });

  it("writes a card whose YAML parses and whose counts match the files", () => {
    const text = readFileSync(join(ds, "README.md"), "utf8");
    const header = parse(/^---\n([\s\S]*?)\n---\n/.exec(text)![1]!);
    expect(header.license).toBe("mit");
    expect(header.language).toEqual(["en"]);
    expect(header.task_categories).toEqual(["text-generation"]);
    expect(header.tags).toEqual(expect.arrayContaining(["medical", "fhir", "ehr", "agents", "tool-calling", "sft", "medagentbench"]));
    expect(header.pretty_name).toBe("Clinical EHR agent trajectories (ehrgym, MedAgentBench tasks)");
    expect(header.dataset_info.features).toEqual(cardFeatures());
    const manifest = JSON.parse(readFileSync(join(ds, "manifest.json"), "utf8"));
    for (const s of header.dataset_info.splits) {
      const n = jsonlFiles(ds, s.name).flatMap(readJsonl).length;
      expect(s.num_examples).toBe(n);
      expect(manifest.splits.find((x: { name: string }) => x.name === s.name).rows).toBe(n);
    }
    expect(header.dataset_info.splits.map((s: { name: string }) => s.name)).toEqual(["train", "validation", "test"]);
    const def = header.configs.find((c: { config_name: string }) => c.config_name === "default");
    // one config (datasets reads a repository with one builder): the Arrow files
    expect(header.configs).toHaveLength(1);
    // each split's files by name (never a glob: `datasets` would read a same-sized rebuild from its cache)
    expect(def.data_files).toEqual(
      ["train", "validation", "test"].map((split) => ({ split, path: jsonlFiles(ds, split).map((f) => `data/${basename(f).replace(/\.jsonl$/, ".arrow")}`) })),
    );
    expect(header.size_categories).toEqual(["n<1K"]);
    const total = allRows(ds).length;
    expect(text).toContain(`**${total} kept**`);
    for (const needle of ["scripted-expert", "## Decontamination", "assistant_only_loss", "load_dataset", "openai/train.jsonl", "synthetic", "### Teacher pass rate", "### Per type", "### Per grading branch", "### Example"])
      expect(text).toContain(needle);
    const pass = rows.filter((r) => r.reward === 1).length;
    expect(text).toContain(`| scripted-expert | ${rows.length} | ${pass} | ${((100 * pass) / rows.length).toFixed(1)}% |`);
  });

  it("lists every file in the manifest with rows, bytes and sha256, and the inputs with theirs", async () => {
    const manifest = JSON.parse(readFileSync(join(ds, "manifest.json"), "utf8"));
    const files = tree(ds);
    files.delete("manifest.json");
    expect(manifest.files.map((f: { path: string }) => f.path).sort()).toEqual([...files.keys()].sort());
    const { createHash } = await import("node:crypto");
    for (const f of manifest.files) {
      const bytes = files.get(f.path)!;
      expect(f.bytes).toBe(bytes.length);
      expect(f.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    }
    expect(manifest.inputs).toEqual([{ file: "teacher.jsonl", bytes: readFileSync(input).length, sha256: createHash("sha256").update(readFileSync(input)).digest("hex"), lines: rows.length }]);
    // provenance without local paths or the command line
    expect(manifest.build).not.toHaveProperty("command");
    for (const [path, bytes] of tree(ds)) expect(bytes.includes(dir), path).toBe(false);
  });

  it("puts all of a patient's rows in one split", () => {
    const where = new Map<string, string>();
    for (const split of ["train", "validation", "test"]) {
      const got = jsonlFiles(ds, split).flatMap(readJsonl) as TrlRow[];
      expect(got.length).toBeGreaterThan(0);
      for (const r of got.filter((x) => x.patient)) {
        expect(where.get(r.patient) ?? split, `patient ${r.patient}`).toBe(split);
        where.set(r.patient, split);
      }
    }
    expect(where.size).toBeGreaterThan(3);
  });

  it("answers every tool call with a tool reply of the same id", () => {
    let calls = 0;
    for (const row of allRows(ds)) {
      expect(toolCallProblems(row.messages)).toEqual([]);
      for (const m of row.messages) for (const c of m.tool_calls ?? []) {
        calls++;
        expect(typeof c.function.arguments).toBe("object");
        const reply = row.messages.find((x) => x.role === "tool" && x.tool_call_id === c.id);
        const last = row.messages.filter((x) => x.role === "assistant").at(-1);
        expect(reply ?? (last?.tool_calls?.some((x) => x.id === c.id) ? "final call" : undefined), `${row.id} call ${c.id}`).toBeDefined();
      }
    }
    expect(calls).toBeGreaterThan(10);
  });

  it("writes format openai with only the fields OpenAI accepts", () => {
    const trl = new Map(allRows(ds).map((r) => [r.id, r]));
    for (const split of ["train", "validation", "test"]) {
      const lines = readJsonl(join(ds, "openai", `${split}.jsonl`));
      const ids = jsonlFiles(ds, split).flatMap(readJsonl).map((r) => r.id as string);
      expect(lines.length).toBe(ids.length);
      lines.forEach((line, i) => {
        const row = trl.get(ids[i]!)!;
        for (const k of Object.keys(line)) expect(OPENAI_LINE_FIELDS).toContain(k);
        if (row.tools) {
          expect(line.tools).toEqual(row.tools);
          expect(line.parallel_tool_calls).toBe(row.messages.some((m) => (m.tool_calls?.length ?? 0) > 1));
        } else {
          expect(line).not.toHaveProperty("tools");
          expect(line).not.toHaveProperty("parallel_tool_calls");
        }
        const messages = line.messages as Record<string, unknown>[];
        // ends on the assistant's last turn (the replies to its finish call are left out)
        expect(messages.length).toBe(row.messages.map((m) => m.role).lastIndexOf("assistant") + 1);
        for (const m of messages) {
          for (const k of Object.keys(m)) expect(OPENAI_MESSAGE_FIELDS[m.role as "user"]).toContain(k);
          if (m.role === "assistant") expect(m.weight).toBe(1);
          else expect(m).not.toHaveProperty("weight");
          if (m.role === "tool") expect(typeof m.tool_call_id).toBe("string");
          for (const c of (m.tool_calls ?? []) as { function: { arguments: unknown } }[]) expect(typeof JSON.parse(c.function.arguments as string)).toBe("object");
          expect(m.content !== null || Array.isArray(m.tool_calls)).toBe(true);
        }
      });
    }
  });

  it("passes `dataset validate`, and `validate` names a tampered file", () => {
    const ok = cli(["dataset", "validate", ds]);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("valid");
    const copy = join(dir, "tampered");
    cli(["dataset", "build", "--from", input, "--out", copy, "--splits", "train"]);
    const file = jsonlFiles(copy, "train")[0]!;
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replace('"reward":1,', '"reward":0,'));
    const bad = cli(["dataset", "validate", copy]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(`data/${basename(file)}: sha256 differs from manifest.json`);
  });
});

describe("dataset build: determinism", () => {
  it("gives byte-identical files from the same rows shuffled and split across shard files", () => {
    const lines = toJsonl(rows).trim().split("\n");
    // a seeded shuffle, then three shard files in another order
    let s = 12345;
    const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = lines.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [lines[i], lines[j]] = [lines[j]!, lines[i]!];
    }
    const parts = [lines.slice(0, 50), lines.slice(50, 51), lines.slice(51)].map((p, i) => {
      const path = join(dir, `shard-${i}.jsonl`);
      writeFileSync(path, `${p.join("\n")}\n`);
      return path;
    });
    const again = join(dir, "again");
    const r = build("--from", parts[2]!, parts[0]!, parts[1]!, "--out", again, "--split-fractions", "0.6,0.2,0.2", "--seed", "5", "--name", "ehr-sft-test");
    expect(r.status, r.stderr).toBe(0);
    const a = tree(ds);
    const b = tree(again);
    expect([...b.keys()]).toEqual([...a.keys()]);
    for (const [path, bytes] of a) {
      if (path === "manifest.json") continue;
      expect(b.get(path)!.equals(bytes), path).toBe(true);
    }
    const ma = JSON.parse(a.get("manifest.json")!.toString());
    const mb = JSON.parse(b.get("manifest.json")!.toString());
    expect(mb.files).toEqual(ma.files);
    expect(mb.inputs.map((i: { file: string }) => i.file)).toEqual(["shard-2.jsonl", "shard-0.jsonl", "shard-1.jsonl"]);
  });

  it("a different seed gives different splits; sharding names files -0000K-of-0000N-{content hash}", () => {
    const other = join(dir, "seed9");
    const r = build("--from", input, "--out", other, "--split-fractions", "0.6,0.2,0.2", "--seed", "9", "--shard-rows", "20");
    expect(r.status, r.stderr).toBe(0);
    const trainA = new Set(jsonlFiles(ds, "train").flatMap(readJsonl).map((x) => x.id));
    const trainB = jsonlFiles(other, "train").flatMap(readJsonl).map((x) => x.id as string);
    expect(trainB.some((id) => !trainA.has(id))).toBe(true);
    const names = readdirSync(join(other, "data")).filter((f) => f.startsWith("train-") && f.endsWith(".jsonl")).sort();
    const n = Math.ceil(trainB.length / 20);
    expect(names.map((f) => f.replace(/-[0-9a-f]{16}\.jsonl$/, ".jsonl"))).toEqual(Array.from({ length: n }, (_, k) => `train-${String(k).padStart(5, "0")}-of-${String(n).padStart(5, "0")}.jsonl`));
    // the hash is of the shard's content: the JSONL and the Arrow file of a shard share it
    for (const f of names) expect(readdirSync(join(other, "data"))).toContain(f.replace(/\.jsonl$/, ".arrow"));
    const counts = names.map((f) => readJsonl(join(other, "data", f)).length);
    expect(counts.slice(0, -1).every((c) => c === 20)).toBe(true);
    // rows are in id order across shards
    expect([...trainB].sort()).toEqual(trainB);
  });
});

describe("dataset build: filters", () => {
  it("--keep all keeps every reward; --min-reward filters; --dedupe drops repeated assistant turns; --max-per-task caps", () => {
    const all = join(dir, "all");
    expect(build("--from", input, "--out", all, "--keep", "all", "--splits", "train").status).toBe(0);
    const got = allRows(all);
    expect(got.length).toBe(distinctRows(rows));
    const failed = got.filter((r) => r.reward === 0);
    expect(failed.length).toBe(distinctRows(rows.filter((r) => r.reward !== 1)));
    // format openai holds only lines with a turn to train on: a failed episode has none
    const openai = readJsonl(join(all, "openai", "train.jsonl"));
    expect(openai.length).toBe(got.filter((r) => r.reward === 1).length);
    expect(JSON.parse(readFileSync(join(all, "manifest.json"), "utf8")).counts.openai_untrainable).toBe(failed.length);

    const min = join(dir, "min");
    expect(build("--from", input, "--out", min, "--keep", "all", "--min-reward", "1", "--splits", "train").status).toBe(0);
    expect(allRows(min).length).toBe(distinctRows(rows.filter((r) => r.reward === 1)));

    // the expert is deterministic: sample 1 repeats sample 0's assistant turns exactly
    const dedupe = join(dir, "dedupe");
    const d = build("--from", input, "--out", dedupe, "--dedupe", "--splits", "train");
    expect(d.status, d.stderr).toBe(0);
    const dd = allRows(dedupe);
    const distinct = new Set(rows.filter((r) => r.reward === 1).map((r) => `${r.suite}/${r.task_id}/${r.protocol}`));
    expect(dd.length).toBe(distinct.size);
    expect(d.stdout).toMatch(new RegExp(`deduped ${distinctRows(rows.filter((r) => r.reward === 1)) - distinct.size}`));

    const cap = join(dir, "cap");
    expect(build("--from", input, "--out", cap, "--max-per-task", "1", "--splits", "train").status).toBe(0);
    const capped = allRows(cap);
    const perTask = new Map<string, number>();
    for (const r of capped) perTask.set(`${r.suite}/${r.task_id}`, (perTask.get(`${r.suite}/${r.task_id}`) ?? 0) + 1);
    expect([...perTask.values()].every((n) => n === 1)).toBe(true);
    expect(capped.every((r) => r.sample === 0)).toBe(true);
  });

  it("reads rows of the older `ehrgym eval` shape (policy a name, no mrn, no usage)", async () => {
    const legacy = await expertRows({ perType: 1, legacy: true, protocols: ["text"], suites: ["mab-v1"] });
    const file = join(dir, "legacy.jsonl");
    writeFileSync(file, toJsonl(legacy));
    const out = join(dir, "legacy-ds");
    const r = build("--from", file, "--out", out, "--splits", "train");
    expect(r.status, r.stderr).toBe(0);
    const got = allRows(out);
    expect(got.length).toBe(legacy.filter((x) => x.reward === 1).length);
    expect(got.every((x) => x.model === "expert" && x.prompt_tokens === 0 && x.completion_tokens === 0 && x.patient === "" && x.sample === 0)).toBe(true);
    expect(readFileSync(join(out, "README.md"), "utf8")).toMatch(/rows carry no MRN/);
  });
});

describe("dataset build: decontamination", () => {
  it("drops and counts rows of held-out patients; none is left, in any file", () => {
    const kept = rows.filter((r) => r.reward === 1 && r.mrn);
    const patients = [...new Set(kept.map((r) => r.mrn!))].sort().slice(0, 2);
    const list = join(dir, "heldout.txt");
    writeFileSync(list, `# evaluation patients\n${patients.join("\n")}\n`);
    // an official-style task file naming a third patient
    const third = [...new Set(kept.map((r) => r.mrn!))].sort()[2]!;
    const tasks = join(dir, "eval-tasks.json");
    writeFileSync(tasks, JSON.stringify([{ id: "task2_1", instruction: `How old is ${third}?`, context: "", sol: [], eval_MRN: third }]));
    const heldOut = new Set([...patients, third]);
    const out = join(dir, "decon");
    const r = build("--from", input, "--out", out, "--exclude-mrns-from", list, tasks, "--splits", "train");
    expect(r.status, r.stderr).toBe(0);
    const got = allRows(out);
    const expectedRemoved = rows.filter((x) => x.reward === 1 && (heldOut.has(x.mrn ?? "") || JSON.stringify(x.messages).match(new RegExp([...heldOut].join("|"))))).length;
    expect(expectedRemoved).toBeGreaterThan(0);
    const exact = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")).counts.exact_duplicates as number;
    expect(got.length).toBe(rows.filter((x) => x.reward === 1).length - expectedRemoved - exact);
    for (const [path, bytes] of tree(out)) {
      if (path === "manifest.json" || path === "README.md") continue;
      for (const mrn of heldOut) expect(bytes.includes(mrn), `${mrn} in ${path}`).toBe(false);
    }
    const card = readFileSync(join(out, "README.md"), "utf8");
    expect(card).toContain(`This removed **${expectedRemoved} rows**: ${expectedRemoved} for a held-out patient (3 distinct)`);
    expect(card).toContain("`heldout.txt`");
    expect(card).toContain("`eval-tasks.json`");
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    expect(manifest.counts.excluded).toBe(expectedRemoved);
    expect(cli(["dataset", "validate", out]).status).toBe(0);
    // the undecontaminated dataset fails validate against the same files
    const v = cli(["dataset", "validate", ds, "--exclude-mrns-from", list]);
    expect(v.status).toBe(1);
    expect(v.stderr).toMatch(new RegExp(`held-out patient (${patients.join("|")})`));
    // the build's own record (hashes in manifest.json) catches a held-out row planted by hand, without the files
    const planted = jsonlFiles(out, "train")[0]!;
    const victim = allRows(ds).find((x) => heldOut.has(x.patient))!;
    writeFileSync(planted, `${readFileSync(planted, "utf8")}${JSON.stringify(victim)}\n`);
    const p = cli(["dataset", "validate", out]);
    expect(p.status).toBe(1);
    expect(p.stderr).toContain(`held-out patient ${victim.patient}`);
  });
});

describe("dataset build: bad input", () => {
  it("skips rows that fail the schema, counted and named by file:line", () => {
    const file = join(dir, "mixed.jsonl");
    const good = toJsonl(rows.slice(0, 4));
    const noAssistant = { ...rows[1]!, task_id: "x-no-assistant", messages: rows[1]!.messages.filter((m) => m.role !== "assistant") };
    writeFileSync(file, `${good}{"resourceType":"Patient","id":"S1"}\n${JSON.stringify(noAssistant)}\n${JSON.stringify(rows[5]).slice(0, 200)}`);
    const out = join(dir, "mixed-ds");
    const r = build("--from", file, "--out", out, "--splits", "train");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${file}:5: not an episode row: field task_id`);
    expect(r.stderr).toContain(`${file}:6: transcript without an assistant turn`);
    expect(r.stderr).toContain(`${file}:7: torn last line`);
    expect(r.stdout).toMatch(/invalid 3/);
    expect(allRows(out).length).toBe(rows.slice(0, 4).filter((x) => x.reward === 1).length);
  });

  it("a split left empty is left out of the card, and the others keep their own fractions", async () => {
    const file = join(dir, "fractions.jsonl");
    writeFileSync(file, toJsonl(rows));
    const logs: string[] = [];
    const splits = [{ name: "train", fraction: 0.9 }, { name: "validation", fraction: 0.001 }, { name: "test", fraction: 0.099 }];
    const opts = { inputs: [file], keep: "all" as const, dedupe: false, splits, seed: 3, excludeMrnsFrom: [], formats: ["trl"] as Format[], name: "fractions", license: "mit", shardRows: 1000, force: true };
    const r = await buildDataset({ ...opts, out: join(dir, "fractions-one"), log: (l) => logs.push(l) });
    expect(logs).toContain("split validation is empty (too few patients for its fraction): left out");
    expect(r.manifest.splits.map((sp) => sp.name)).toEqual(["train", "test"]);
    expect(readFileSync(join(dir, "fractions-one", "README.md"), "utf8")).toContain("splits train 0.9 / test 0.099 by patient");
  });

  it("names bad lines by file:line: not JSON, torn, and bytes that are not UTF-8", async () => {
    const file = join(dir, "ranged.jsonl");
    const good = toJsonl(rows);
    const corrupt = Buffer.from(toJsonl([rows[2]]).replace(rows[2]!.task_id, "TASKID"));
    const at = corrupt.indexOf("TASKID");
    corrupt[at] = 0xff;
    writeFileSync(file, Buffer.concat([Buffer.from(`${good}not json\n`), corrupt, Buffer.from(`${good.split("\n").slice(0, 3).join("\n")}\n{"torn":`)]));
    const logs: string[] = [];
    const opts = { inputs: [file], keep: "correct" as const, dedupe: false, splits: [{ name: "train", fraction: 0.5 }, { name: "test", fraction: 0.5 }], seed: 3, excludeMrnsFrom: [], formats: ["trl", "openai", "arrow"] as Format[], name: "ranged", license: "mit", shardRows: 7, force: true };
    const r = await buildDataset({ ...opts, out: join(dir, "ranged-one"), log: (l) => logs.push(l) });
    const lines = good.split("\n").length;
    expect(logs).toContain(`skipped ${file}:${lines}: not a JSON line`);
    expect(logs).toContain(`skipped ${file}:${lines + 1}: not UTF-8 text (an invalid byte sequence: a corrupted or binary line)`);
    expect(logs).toContain(`skipped ${file}:${lines + 5}: torn last line (no newline, not JSON)`);
    expect(r.manifest.counts.invalid).toBe(3);
    for (const row of allRows(join(dir, "ranged-one"))) expect(row.task_id).not.toContain("\ufffd");
  });

  it("rows with long transcripts, over several Arrow batches: every text as given", async () => {
    // Tool replies and prompts of 70-300 KB (read in parts), enough rows for several chunks of 4 MB.
    const bundle = (k: number) => `${JSON.stringify({ resourceType: "Bundle", entry: Array.from({ length: 400 + k * 40 }, (_, i) => ({ resource: { id: `obs-${i}`, note: "mg/dL é \u{1F600}\n\t\\ \"q\"" } })) }, null, 2)}`;
    const long = rows.map((r, k) => ({ ...r, messages: r.messages.map((m) => (m.role === "tool" || (m.role === "user" && m.content?.startsWith("Here is"))) && m.content ? { ...m, content: `${m.content}\n${bundle(k % 5)}` } : m) }));
    const file = join(dir, "long.jsonl");
    writeFileSync(file, toJsonl(long));
    const opts = { inputs: [file], keep: "all" as const, dedupe: false, splits: [{ name: "train", fraction: 1 }], seed: 3, excludeMrnsFrom: [], formats: ["trl", "openai", "arrow"] as Format[], name: "long", license: "mit", shardRows: 1000, force: true };
    await buildDataset({ ...opts, out: join(dir, "long-one") });
    expect(Math.max(...long.map((r) => JSON.stringify(r).length))).toBeGreaterThan(128 << 10);
    expect(statSync(file).size).toBeGreaterThan(3 * (4 << 20));
    const byKey = new Map(long.map((r) => [`${r.suite}/${r.task_id}/${r.sample}/${r.protocol}`, r]));
    const out = allRows(join(dir, "long-one"));
    expect(out.length).toBe(distinctRows(long));
    for (const row of out) {
      const given = byKey.get(`${row.suite}/${row.task_id}/${row.sample}/${row.protocol}`)!;
      // a tool-call turn without text is written with content ""
      expect(row.messages.map((m) => m.content)).toEqual(given.messages.map((m) => m.content ?? (m.tool_calls?.length ? "" : null)));
    }
    const arrowFiles = readdirSync(join(dir, "long-one", "data")).filter((f) => f.endsWith(".arrow"));
    const arrow = arrowFiles.flatMap((f) => arrowRowsApache(join(dir, "long-one", "data", f)).rows.map(decoded) as unknown as { id: string; messages: { content: string | null }[] }[]);
    expect(arrow.length).toBe(out.length);
    const jsonlById = new Map(out.map((r) => [r.id, r]));
    for (const r of arrow) expect(r.messages.map((m) => m.content)).toEqual(jsonlById.get(r.id)!.messages.map((m) => m.content));
  });

  it("fails with one line when no row is kept, and leaves nothing behind", () => {
    const file = join(dir, "junk.jsonl");
    writeFileSync(file, "not json\n{}\n");
    const out = join(dir, "junk-ds");
    const r = build("--from", file, "--out", out);
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines.at(-1)).toMatch(/^ehrgym: no rows kept: no valid episode rows in the input \(2 rows failed the schema/);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes(".tmp-"))).toEqual([]);

    const failedOnly = join(dir, "failed.jsonl");
    writeFileSync(failedOnly, toJsonl([{ ...rows[0]!, reward: 0 }]));
    const f = build("--from", failedOnly, "--out", out);
    expect(f.status).toBe(1);
    expect(f.stderr).toMatch(/no rows kept: 1 valid rows, but none passed --keep clean \(1 not correct\)/);
  });

  it("refuses an existing --out unless --force, and bad flags with exit 2", () => {
    const r = build("--from", input, "--out", ds);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/--out .* exists; pass --force to replace it/);
    const fractions = build("--from", input, "--out", join(dir, "x"), "--split-fractions", "0.5,0.2");
    expect(fractions.status).toBe(2);
    expect(fractions.stderr).toMatch(/--split-fractions: the fractions add up to 0.7/);
    const missing = build("--from", join(dir, "nope.jsonl"), "--out", join(dir, "x"));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/--from(\.0)?: no such file/);
    const forced = build("--from", input, "--out", join(dir, "min"), "--force", "--splits", "train");
    expect(forced.status, forced.stderr).toBe(0);
  });
});
