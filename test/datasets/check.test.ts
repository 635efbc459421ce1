// Rows that teach only what they should (issue 26): a build from input holding each problem case
// comes out clean, and `dataset validate` / `dataset check` (one set of checks) catch each case
// when it is planted by hand.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EpisodeRowInput } from "../../rollout/index.ts";
import { expertRows, toJsonl } from "./fixture.ts";
import { cli, readJsonl } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-dscheck-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// An official-style evaluation file whose "patient not found" task has no MRN (like v1 task1_29).
const INSTRUCTION = 'What\'s the MRN of the patient with name Ada Lovelace and DOB of 1815-12-10? If the patient does not exist, the answer should be "Patient not found"';
const evalFile = join(dir, "eval.json");
const input = join(dir, "rows.jsonl");
let base: EpisodeRowInput[];
type Msg = { role: string; content?: string | null; tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[]; tool_call_id?: string };

const build = (out: string, ...args: string[]) => cli(["dataset", "build", "--from", input, "--out", out, "--exclude-mrns-from", evalFile, "--splits", "train", ...args]);
const dataFile = (ds: string) => join(ds, "data", readdirSync(join(ds, "data")).find((f) => f.endsWith(".jsonl"))!);

/** A correct tool-protocol row that recovered from a call whose arguments are Python-dict text. */
function recovered(row: EpisodeRowInput): EpisodeRowInput {
  const messages = row.messages as Msg[];
  const firstCall = messages.findIndex((m) => m.role === "assistant" && m.tool_calls?.length);
  const call = messages[firstCall]!.tool_calls![0]!;
  const bad: Msg[] = [
    { role: "assistant", content: null, tool_calls: [{ id: "call_bad", type: "function", function: { name: call.function.name, arguments: call.function.arguments.replace(/"/g, "'") } }] },
    { role: "tool", tool_call_id: "call_bad", content: "Error: the arguments are not JSON" },
  ];
  return { ...row, task_id: `${row.task_id}-recovered`, messages: [...messages.slice(0, firstCall), ...bad, ...messages.slice(firstCall)] } as EpisodeRowInput;
}

beforeAll(async () => {
  writeFileSync(evalFile, JSON.stringify([{ id: "task1_29", instruction: INSTRUCTION, context: "", sol: ["Patient not found"] }]));
  base = await expertRows({ perType: 1, suites: ["mab-v1"] });
  const text = base.find((r) => r.protocol === "text" && r.type === "task1")!;
  const tools = base.find((r) => r.protocol === "tools" && (r.messages as Msg[]).filter((m) => m.role === "tool").length >= 1)!;
  const planted: EpisodeRowInput[] = [
    // the evaluation task itself, without an MRN
    { ...text, task_id: "task1_29", mrn: undefined } as EpisodeRowInput,
    // another id, but the evaluation instruction in its prompt
    { ...text, task_id: "copied-instruction", mrn: undefined, messages: [{ role: "user", content: `Question: ${INSTRUCTION}` }, ...(text.messages as Msg[]).slice(1)] } as EpisodeRowInput,
    recovered(tools),
  ];
  writeFileSync(input, toJsonl([...base, ...planted]));
});

describe("dataset build: the problem cases come out clean", () => {
  it("--keep clean (default): evaluation tasks and instructions excluded, recovered mistakes left out, parallel calls declared where made", () => {
    const ds = join(dir, "clean");
    const r = build(ds);
    expect(r.status, r.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(ds, "manifest.json"), "utf8"));
    expect(manifest.build.options.keep).toBe("clean");
    expect(manifest.counts).toMatchObject({ excluded_task: 1, excluded_instruction: 1, unclean: 1 });
    const rows = readJsonl(dataFile(ds));
    const ids = rows.map((x) => x.task_id as string);
    expect(ids).not.toContain("task1_29");
    expect(ids).not.toContain("copied-instruction");
    expect(ids.some((id) => id.endsWith("-recovered"))).toBe(false);
    const openai = readJsonl(join(ds, "openai", "train.jsonl"));
    expect(openai).toHaveLength(rows.length);
    let several = 0;
    for (const line of openai) {
      if (!line.tools) expect(line).not.toHaveProperty("parallel_tool_calls");
      else {
        const multi = (line.messages as Msg[]).some((m) => (m.tool_calls?.length ?? 0) > 1);
        several += multi ? 1 : 0;
        expect(line.parallel_tool_calls).toBe(multi);
      }
    }
    // the expert batches a search with its finish call: those lines declare parallel calls
    expect(several).toBeGreaterThan(0);
    const card = readFileSync(join(ds, "README.md"), "utf8");
    expect(card).toContain("**and whose every assistant turn is a valid action**");
    expect(card).toContain("1 for an evaluation task, 1 for an evaluation instruction");
    expect(cli(["dataset", "validate", ds]).status).toBe(0);
    const check = cli(["dataset", "check", dataFile(ds), join(ds, "openai", "train.jsonl")]);
    expect(check.status, check.stderr).toBe(0);
  });

  it("--keep correct keeps the recovered row; its invalid turn weighs 0 in format openai and keeps its text elsewhere", () => {
    const ds = join(dir, "correct");
    expect(build(ds, "--keep", "correct").status).toBe(0);
    const rows = readJsonl(dataFile(ds));
    const i = rows.findIndex((x) => (x.task_id as string).endsWith("-recovered"));
    expect(i).toBeGreaterThanOrEqual(0);
    const call = (rows[i]!.messages as Msg[]).flatMap((m) => m.tool_calls ?? []).find((c) => c.id === "call_bad")!;
    expect(typeof call.function.arguments).toBe("string");
    const line = readJsonl(join(ds, "openai", "train.jsonl"))[i]!;
    const weights = (line.messages as (Msg & { weight?: number })[]).filter((m) => m.role === "assistant").map((m) => (m.tool_calls?.some((c) => c.id === "call_bad") ? `bad:${m.weight}` : m.weight));
    expect(weights).toContain("bad:0");
    expect(weights.filter((w) => w === 1).length).toBeGreaterThan(0);
    expect(cli(["dataset", "validate", ds]).status).toBe(0);
  });
});

describe("dataset validate / check catch each case planted by hand", () => {
  let clean: string;
  beforeAll(() => {
    clean = join(dir, "clean");
  });

  const plantInto = (name: string, line: unknown) => {
    const copy = join(dir, name);
    cpSync(clean, copy, { recursive: true });
    const file = dataFile(copy);
    writeFileSync(file, `${readFileSync(file, "utf8")}${JSON.stringify(line)}\n`);
    return cli(["dataset", "validate", copy]);
  };
  const firstRow = () => readJsonl(dataFile(clean))[0]!;

  it("a row of an evaluation task (from the manifest's hashes, no file needed)", () => {
    const v = plantInto("plant-task", { ...firstRow(), task_id: "task1_29", suite: "mab-v1" });
    expect(v.status).toBe(1);
    expect(v.stderr).toContain("evaluation task mab-v1/task1_29");
  });

  it("a row with the evaluation instruction, when the evaluation file is given", () => {
    const row = firstRow();
    const messages = row.messages as Msg[];
    const v = plantInto("plant-instruction", { ...row, id: "f".repeat(24), messages: [{ role: "user", content: INSTRUCTION }, ...messages.slice(1)] });
    expect(v.status).toBe(1);
    const again = cli(["dataset", "validate", join(dir, "plant-instruction"), "--exclude-mrns-from", evalFile]);
    expect(again.stderr).toContain("the instruction of an evaluation task");
  });

  it("an invalid action in a --keep clean dataset, and a message carrying tool_calls: null", () => {
    const tools = readJsonl(dataFile(clean)).find((x) => x.protocol === "tools")!;
    const messages = structuredClone(tools.messages) as { role: string; tool_calls?: { function: { arguments: unknown } }[] }[];
    messages.find((m) => m.tool_calls)!.tool_calls![0]!.function.arguments = "{'code': 'GLU'}";
    const v = plantInto("plant-invalid", { ...tools, id: "e".repeat(24), messages });
    expect(v.status).toBe(1);
    expect(v.stderr).toMatch(/invalid action in a --keep clean dataset: tool_calls\[0\] \(\w+\): arguments are not a JSON object/);
    const nulls = plantInto("plant-null", { ...tools, id: "d".repeat(24), messages: (tools.messages as Msg[]).map((m) => ({ ...m, tool_calls: m.tool_calls ?? null })) });
    expect(nulls.status).toBe(1);
    expect(nulls.stderr).toMatch(/field messages\.\d+\.tool_calls/);
  });

  it("a tool call carrying a key the strict schema it was offered forbids (pydantic would ignore it; a model under strict tool calling never writes it)", () => {
    const tools = readJsonl(dataFile(clean)).find((x) => x.protocol === "tools")!;
    const messages = structuredClone(tools.messages) as Msg[];
    const call = messages.find((m) => m.tool_calls)!.tool_calls![0]! as { function: { arguments: unknown } };
    call.function.arguments = { ...(call.function.arguments as object), note: "x" }; // rows keep arguments as objects
    const v = plantInto("plant-strict", { ...tools, id: "c".repeat(24), messages });
    expect(v.status).toBe(1);
    expect(v.stderr).toMatch(/tool_calls\[0\] \(\w+\): arguments its strict schema refuses: \(arguments\): Unrecognized key: "note"/);
  });

  it("format openai: parallel_tool_calls that lie, nothing to train on, a trained invalid turn, an unanswered call", () => {
    const line = readJsonl(join(clean, "openai", "train.jsonl")).find((l) => (l.tools as unknown[] | undefined)?.length && (l.parallel_tool_calls as boolean) === true)!;
    const cases: [string, (l: Record<string, unknown>) => void, RegExp][] = [
      ["lie", (l) => (l.parallel_tool_calls = false), /parallel_tool_calls is false but a turn calls several tools/],
      ["untrainable", (l) => (l.messages as { role: string; weight?: number }[]).forEach((m) => m.role === "assistant" && (m.weight = 0)), /nothing to train on/],
      ["invalid", (l) => ((l.messages as Msg[]).find((m) => m.tool_calls)!.tool_calls![0]!.function.arguments = "{'a': 1"), /a trained turn \(weight 1\) that is not a valid action/],
      ["unanswered", (l) => (l.messages = (l.messages as Msg[]).filter((m, i, all) => !(m.role === "tool" && i === all.findIndex((x) => x.role === "tool")))), /has no reply/],
      ["text-parallel", (l) => (delete l.tools, (l.parallel_tool_calls = false)), /parallel_tool_calls without tools/],
    ];
    for (const [name, edit, expected] of cases) {
      const copy = structuredClone(line);
      edit(copy);
      const file = join(dir, `openai-${name}.jsonl`);
      writeFileSync(file, `${JSON.stringify(copy)}\n`);
      const r = cli(["dataset", "check", file]);
      expect(r.status, name).toBe(1);
      expect(r.stderr, name).toMatch(expected);
    }
  });

  it("a line whose bytes are not UTF-8: named by file and line", () => {
    const good = readFileSync(join(clean, "openai", "train.jsonl"), "utf8").split("\n")[0]!;
    const file = join(dir, "openai-bytes.jsonl");
    writeFileSync(file, Buffer.concat([Buffer.from(`${good}\n`), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a])]));
    const r = cli(["dataset", "check", file]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${file}:2: not UTF-8 text`);
  });
});
