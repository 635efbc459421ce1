// --exclude-mrns-from sources: the official task files (when ../shared is present), ehrgym task
// JSONL, MRN lists; and the transcript scan that catches rows without an MRN.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ExcludeFileError, readExcludeFile } from "../../datasets/index.ts";
import { HeldOut, heldOutRecord } from "../../datasets/exclude.ts";
import { describeShared, sharedFile } from "../helpers/shared.ts";
import { fixtureTasks } from "./fixture.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-dsx-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeShared("exclude: the official evaluation files", () => {
  for (const name of ["test_data_v1.json", "test_data_v2.json", "new_patient_tasks_v2.json"]) {
    it(`reads every eval_MRN of ${name}`, () => {
      const expected = [...new Set((JSON.parse(readFileSync(sharedFile(name), "utf8")) as { eval_MRN?: string }[]).flatMap((t) => (t.eval_MRN ? [t.eval_MRN] : [])))].sort();
      const got = readExcludeFile(sharedFile(name));
      expect(got.mrns).toEqual(expected);
      expect(got.mrns.length).toBeGreaterThan(10);
    });
  }
});

describe("exclude: ehrgym task JSONL and MRN lists", () => {
  it("reads the eval_MRN of every task of a generated JSONL", () => {
    const { tasks } = fixtureTasks({ perType: 1 });
    const path = join(dir, "tasks.jsonl");
    writeFileSync(path, tasks.map((t) => JSON.stringify(t)).join("\n"));
    expect(readExcludeFile(path).mrns).toEqual([...new Set(tasks.flatMap((t) => (t.eval_MRN ? [t.eval_MRN] : [])))].sort());
  });

  it("reads MRN lists with comments, and names a bad line", () => {
    const ok = join(dir, "mrns.txt");
    writeFileSync(ok, "# held out\nS0000001\n\nS0000002  # second\n");
    expect(readExcludeFile(ok).mrns).toEqual(["S0000001", "S0000002"]);
    const bad = join(dir, "bad.txt");
    writeFileSync(bad, "S0000001\nnot an mrn!\n");
    expect(() => readExcludeFile(bad)).toThrow(ExcludeFileError);
    expect(() => readExcludeFile(bad)).toThrow(`${bad}:2: not an MRN: "not an mrn!"`);
    const empty = join(dir, "empty.txt");
    writeFileSync(empty, "# nothing\n");
    expect(() => readExcludeFile(empty)).toThrow(/names no patient/);
  });

  it("finds a held-out MRN in the row's own MRN or anywhere in its transcript, as a whole token", () => {
    const h = new HeldOut([{ path: "x", sha256: "0".repeat(64), mrns: ["S1234567"], tasks: [], instructions: [] }]);
    const row = (patient: string, ...texts: string[]) => ({ suite: "mab-v1", task_id: "t", patient, messages: texts.map((content) => ({ role: "user", content })) });
    expect(h.hit(row("S1234567"))).toBe("held-out patient S1234567");
    expect(h.hit(row("", '{"id": "S1234567"}'))).toBe("held-out patient S1234567");
    expect(h.hit(row("", "GET http://x/fhir/Patient?identifier=S1234567&_count=1"))).toBe("held-out patient S1234567");
    expect(h.hit(row("", "patient S1234567."))).toBe("held-out patient S1234567");
    expect(h.hit(row("S7654321", "S12345678 and XS1234567"))).toBeUndefined();
  });

  it("finds an evaluation task by suite and id, or by its instruction in the prompt, also from the manifest's hashes", () => {
    const file = join(dir, "eval.json");
    const instruction = 'What\'s the MRN of the patient with name Ada Lovelace and DOB of 1815-12-10? If the patient does not exist, the answer should be "Patient not found"';
    writeFileSync(file, JSON.stringify([{ id: "task1_29", instruction, context: "", sol: ["Patient not found"] }]));
    const source = readExcludeFile(file);
    expect(source.mrns).toEqual([]);
    expect(source.tasks).toEqual(["mab-v1/task1_29"]);
    const h = new HeldOut([source]);
    const row = (taskId: string, prompt: string) => ({ suite: "mab-v1", task_id: taskId, patient: "", messages: [{ role: "user", content: prompt }, { role: "assistant", content: "FINISH([])" }] });
    expect(h.hit(row("task1_29", "anything"))).toBe("evaluation task mab-v1/task1_29");
    expect(h.hit(row("mab-v1/task1/7", `You are an agent.\nQuestion:   ${instruction.replace(/ /g, "  ")}\nGo.`))).toMatch(/^the instruction of an evaluation task/);
    expect(h.hit(row("mab-v1/task1/7", "What's the MRN of the patient with name Ada Byron?"))).toBeUndefined();
    const fromRecord = new HeldOut([], heldOutRecord([source]));
    expect(fromRecord.hit(row("task1_29", "x"))).toBe("evaluation task mab-v1/task1_29");
    expect(JSON.stringify(heldOutRecord([source]))).not.toContain("task1_29");
  });
});
