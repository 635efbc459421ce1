// Bytes that are not UTF-8 in a file a command reads: one line naming the file and the line, exit 2,
// nothing written; never text with U+FFFD in it carried on (a corrupted task id reaching a dataset).
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readRowHeads, RowFileError } from "../../rollout/jsonl.ts";
import { firstNonUtf8Line, utf8Text } from "../../env/util/index.ts";
import { loadPromptTemplate, loadToolSchemas } from "../../env/protocol/index.ts";
import { cli } from "../rollout/rollout-fixture.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-utf8-"));
/** A file of these lines; Buffers are written as they are. */
function file(name: string, ...lines: (string | Buffer)[]): string {
  const path = join(dir, name);
  writeFileSync(path, Buffer.concat(lines.map((l) => Buffer.concat([typeof l === "string" ? Buffer.from(l) : l, Buffer.from("\n")]))));
  return path;
}
/** `text` with the byte 0xff (never valid UTF-8) in place of its "#". */
const corrupt = (text: string) => Buffer.concat(text.split("#").flatMap((part, i) => (i ? [Buffer.from([0xff]), Buffer.from(part)] : [Buffer.from(part)])));

const TASK = (id: string) => JSON.stringify({ id, instruction: "What is the MRN of the patient named Ann Garner?", context: "", sol: ["S1"], eval_MRN: "S1" });
const PATIENT = (id: string) => JSON.stringify({ resourceType: "Patient", id, name: [{ family: "García", given: ["José"] }] });
const ROW = (taskId: string) => JSON.stringify({ task_id: taskId, suite: "mab-v1", reward: 1 });

const NOT_UTF8 = "not UTF-8 text (an invalid byte sequence: a corrupted or binary line)";

/** The command fails with exit 2 and one line naming `where`. */
async function refused(args: string[], where: string) {
  const r = await cli(args);
  expect(r.status, r.stderr).toBe(2);
  const lines = r.stderr.split("\n").filter((l) => l.trim() && !/^loading /.test(l));
  expect(lines).toEqual([expect.stringContaining(`${where}: ${NOT_UTF8}`)]);
}

describe("text files that are not UTF-8", () => {
  it("name the first line that is not, and pass other text (accents, emoji, CRLF) through", () => {
    const bytes = Buffer.concat([Buffer.from("José ✓ 🩺\r\n{\n  \"a\": \""), Buffer.from([0xe2, 0x82]), Buffer.from("\"\n}\n")]);
    expect(firstNonUtf8Line(bytes)).toBe(3);
    expect(() => utf8Text(bytes, "x.json")).toThrow(`x.json:3: ${NOT_UTF8}`);
    expect(utf8Text(Buffer.from("José ✓ 🩺\r\n"), "ok.txt")).toBe("José ✓ 🩺\r\n");
    expect(firstNonUtf8Line(Buffer.from("a\nb\n"))).toBeUndefined();
  });

  it("in a task file (JSONL or the official JSON array): exit 2 naming file and line", async () => {
    await refused(["tasks", "stats", file("tasks.jsonl", TASK("task1_1"), corrupt(TASK("task1_#2")))], `${dir}/tasks.jsonl:2`);
    const official = file("official.json", "[", `  ${TASK("task1_1")},`, corrupt(`  ${TASK("task1_#2")}`), "]");
    await refused(["tasks", "stats", official], `${dir}/official.json:3`);
  });

  it("in a population NDJSON (`fhir import`, `ehr generate --patients-from`, `eval --patients-from`), with nothing written", async () => {
    const patients = file("patients.ndjson", PATIENT("p1"), PATIENT("p2"), corrupt(PATIENT("p#3")));
    const out = join(dir, "imported");
    await refused(["fhir", "import", patients, "--out", out], `${patients}:3`);
    expect(existsSync(out)).toBe(false);
    await refused(["ehr", "generate", "--patients-from", patients, "--out", join(dir, "generated")], `${patients}:3`);
    expect(existsSync(join(dir, "generated"))).toBe(false);
    await refused(["eval", "--patients-from", patients, "--out", join(dir, "eval.jsonl")], `--patients-from: ${patients}:3`);
    expect(existsSync(join(dir, "eval.jsonl"))).toBe(false);
  });

  it("in rows a run resumes from or a report reads: exit 2 naming file and line", async () => {
    const rows = file("run.jsonl", ROW("task1_1"), corrupt(ROW("task1_#2")), ROW("task1_3"));
    await refused(["report", rows], `${rows}:2`);
    await refused(["eval", "--patients", "8", "--seed", "3", "--limit", "1", "--out", rows], `--out: ${rows}:2`);
  });

  it("in a prompt template, tool schemas or a report's reference: one line naming file and line", async () => {
    const template = file("prompt.txt", "Answer {question}", corrupt("Context: {context} #"), "{functions}");
    expect(() => loadPromptTemplate(template)).toThrow(`--prompt-template ${template}:2: ${NOT_UTF8}`);
    const tools = file("tools.json", "[", corrupt(`  {"type": "function", "function": {"name": "finish#"}}`), "]");
    expect(() => loadToolSchemas(tools)).toThrow(`--tool-schemas ${tools}:2: ${NOT_UTF8}`);
    await refused(["report", file("ok.jsonl", ROW("task1_1")), "--reference", tools], `--reference: ${tools}:2`);
  });

  it("in rows: a line cut in the middle of a character by a killed writer is a torn last line, not an error", async () => {
    const whole = Buffer.from(ROW("task1_é"));
    const cut = whole.subarray(0, whole.indexOf(Buffer.from("é")) + 1); // the first byte of "é" only
    const torn = join(dir, "torn.jsonl");
    writeFileSync(torn, Buffer.concat([Buffer.from(`${ROW("task1_1")}\n`), cut]));
    expect((await readRowHeads(torn)).map((r) => r.task_id)).toEqual(["task1_1"]);
    const inside = file("inside.jsonl", ROW("task1_1"), cut, ROW("task1_3"));
    await expect(readRowHeads(inside)).rejects.toThrow(RowFileError);
    await expect(readRowHeads(inside)).rejects.toThrow(`${inside}:2: ${NOT_UTF8}`);
  });
});
