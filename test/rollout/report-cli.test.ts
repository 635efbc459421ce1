// `ehrgym report` as a child process: the files it writes, what it prints, and bad input as one
// clear line with exit code 2.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/shared.ts";
import { expertRows, perturbed, writeRun } from "./report-fixture.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-report-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const report = (...args: string[]) => spawnSync(process.execPath, ["--import", "tsx", "scripts/cli.ts", "report", ...args], { cwd: PROJECT_ROOT, encoding: "utf8" });

let base: string;
let sft: string;
beforeAll(async () => {
  const rows = await expertRows(1);
  base = writeRun(join(dir, "base.jsonl"), perturbed(rows, 5, 0.4, "base-model"));
  sft = writeRun(join(dir, "sft.jsonl"), perturbed(rows.slice(0, -2), 6, 0.1)); // two tasks fewer
});

describe("ehrgym report", () => {
  it("writes index.html, summary.json and a PNG per chart; prints rates, the comparison and where the report is", () => {
    const out = join(dir, "report");
    const r = report(base, sft, "--names", "base,sft", "--out", out);
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(out).sort()).toEqual(["index.html", "status.png", "success-by-type-mab-v1.png", "success-by-type-mab-v2.png", "success-overall.png", "summary.json"]);
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
    expect(summary.runs.map((x: { name: string }) => x.name)).toEqual(["base", "sft"]);
    expect(r.stdout).toMatch(/^base: \d+\/\d+ = [\d.]+% \(95% CI [\d.]+-[\d.]+%\)$/m);
    expect(r.stdout).toMatch(/^sft vs base: fixed \d+, broken \d+, both \d+, neither \d+; exact McNemar p = [\d.]+$/m);
    expect(r.stdout).toContain(`report: ${join(out, "index.html")} (+ summary.json, 4 PNG charts)`);
    expect(r.stderr).toMatch(/note: base: 2 of its \d+ tasks \(2 episodes\) are not in every run and were left out/);
  });

  it("names default to the file names; a second run replaces the folder", () => {
    const out = join(dir, "report");
    const r = report(base, "--out", out);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8")).runs.map((x: { name: string }) => x.name)).toEqual(["base"]);
  });

  const bad = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it.each([
    ["an empty run file", () => [bad("empty.jsonl", "")], /^ehrgym: run file .*empty\.jsonl has no episode rows$/],
    ["a missing run file", () => [join(dir, "nope.jsonl")], /^ehrgym: cannot read run file .*nope\.jsonl: no such file$/],
    ["a folder as run file", () => [dir], /^ehrgym: cannot read run file .*: is a directory$/],
    ["a bad line", () => [bad("bad.jsonl", `${readFileSync(base, "utf8").split("\n")[0]}\n{"task_id": 5}\n`)], /^ehrgym: .*bad\.jsonl:2: not an episode row: task_id: .*\(got 5\)$/],
    ["names that do not match", () => [base, sft, "--names", "only-one"], /^ehrgym: --names: 1 names for 2 run files/],
    ["a bad protocol", () => [base, "--protocol", "smoke"], /^ehrgym: --protocol: /],
    ["a bad reference", () => [base, "--reference", bad("ref.json", `{"source": "x", "models": [{"name": "m", "overall": 70}]}`)], /^ehrgym: --reference: .*models\.0\.overall: a success rate is a fraction/],
    ["no run file", () => [], /missing required argument/],
  ])("%s: one clear line, exit 2", (_, args, message) => {
    const out = join(dir, "bad-out");
    const r = report(...(args as () => string[])(), "--out", out);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split("\n")[0]).toMatch(message);
    if (!/missing required/.test(String(message))) expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses to replace a folder that holds something else", () => {
    const out = join(dir, "mine");
    mkdirSync(out);
    writeFileSync(join(out, "notes.txt"), "keep me");
    const r = report(base, "--out", out);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/holds no report/);
    expect(readFileSync(join(out, "notes.txt"), "utf8")).toBe("keep me");
  });
});
