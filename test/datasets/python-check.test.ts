// scripts/python/check_sft_jsonl.py (standard library only) on a built dataset, and on broken lines.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildDataset } from "../../datasets/index.ts";
import { PROJECT_ROOT } from "../helpers/shared.ts";
import { expertRows, toJsonl } from "./fixture.ts";

const CHECK = join(PROJECT_ROOT, "scripts", "python", "check_sft_jsonl.py");
const PYTHON = spawnSync("python3", ["--version"]).status === 0 ? "python3" : undefined;
const dir = mkdtempSync(join(tmpdir(), "ehrgym-dspy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const check = (...files: string[]) => spawnSync(PYTHON!, [CHECK, ...files], { encoding: "utf8", env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" } });

describe.skipIf(!PYTHON)(`check_sft_jsonl.py${PYTHON ? "" : " [skipped: python3 not found]"}`, () => {
  it("passes every JSONL file of a built dataset (format trl and format openai)", async () => {
    const input = join(dir, "rows.jsonl");
    writeFileSync(input, toJsonl(await expertRows({ perType: 1 })));
    const out = join(dir, "ds");
    await buildDataset({ inputs: [input], out, keep: "correct", dedupe: false, splits: [{ name: "train", fraction: 1 }], seed: 0, excludeMrnsFrom: [], formats: ["trl", "openai", "arrow"], name: "py", license: "mit", shardRows: 7, force: false, command: "test" });
    const files = [...readdirSync(join(out, "data")).filter((f) => f.endsWith(".jsonl")).map((f) => join(out, "data", f)), join(out, "openai", "train.jsonl")];
    expect(files.length).toBeGreaterThan(2);
    const r = check(...files);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toHaveLength(files.length);
  });

  it("fails on a torn line, a message without role, and one with neither content nor tool calls", () => {
    const bad = join(dir, "bad.jsonl");
    writeFileSync(
      bad,
      [
        JSON.stringify({ messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "ok" }] }),
        JSON.stringify({ messages: [{ content: "no role" }] }),
        JSON.stringify({ messages: [{ role: "assistant", content: null, tool_calls: null }] }),
        '{"messages": [',
      ].join("\n"),
    );
    const r = check(bad);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`${bad}:2: messages[0]: no valid role`);
    expect(r.stdout).toContain(`${bad}:3: messages[0] (assistant): neither content nor tool_calls`);
    expect(r.stdout).toContain(`${bad}:4: not JSON`);
  });
});
