// `ehrgym eval` end to end as a child process on a small synthetic population.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/shared.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-eval-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const evalCli = (...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "scripts/cli.ts", "eval", ...args], { cwd: PROJECT_ROOT, encoding: "utf8" });

const SMALL = ["--patients", "8", "--seed", "3", "--per-type", "3", "--types", "task1,task3,task9"];
const lines = (path: string) => readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);

describe("ehrgym eval", () => {
  const out = join(dir, "runs", "eval.jsonl");
  const report = join(dir, "report.json");

  it("writes one JSON line per episode and prints the success table", () => {
    const r = evalCli(...SMALL, "--limit", "5", "--out", out);
    expect(r.status, r.stderr).toBe(0);
    const rows = lines(out);
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      for (const field of ["task_id", "suite", "type", "reward", "status", "rounds", "checks", "messages"]) expect(row).toHaveProperty(field);
      expect(row.reward).toBe(1);
      expect((row.messages as unknown[]).length).toBeGreaterThan(1);
    }
    expect(r.stdout).toMatch(/overall\s+5\s+5\s+100\.0%/);
    expect(r.stdout).toContain(out);
  });

  it("resumes: tasks already in the file are skipped, the summary covers the whole file", () => {
    const refused = evalCli(...SMALL, "--out", out, "--protocol", "tools");
    expect(refused.status, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/holds 5 row\(s\) of expert:expert \(protocol text\); this run is expert:expert \(protocol tools\)/);
    const r = evalCli(...SMALL, "--out", out, "--report", report, "--protocol", "tools", "--append-different");
    expect(r.status, r.stderr).toBe(0);
    const rows = lines(out);
    // 3 types x 2 suites x 3 per type
    expect(rows).toHaveLength(18);
    expect(new Set(rows.map((x) => `${x.suite}/${x.task_id}`)).size).toBe(18);
    expect(r.stdout).toMatch(/13 episodes run .*; 5 already in the file/);
    expect(rows.slice(0, 5).every((x) => x.protocol === "text")).toBe(true);
    expect(rows.slice(5).every((x) => x.protocol === "tools")).toBe(true);
    const summary = JSON.parse(readFileSync(report, "utf8"));
    expect(summary.overall.n).toBe(18);
    expect(summary.byType.length).toBe(6);
    expect(summary.byKind.query.n + summary.byKind.action.n).toBe(18);
  });

  it("prints the failed checks of failing episodes", () => {
    // Round limit 1: the expert cannot finish, the episode ends limit_reached.
    const r = evalCli(...SMALL, "--types", "task9", "--max-rounds", "1", "--limit", "2", "--out", join(dir, "limit.jsonl"), "--fail-under", "50");
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/failures \(2\)/);
    expect(r.stdout).toMatch(/limit_reached/);
  });

  it("--html writes the run's report; --reference draws the shipped published figures on it", () => {
    const html = join(dir, "html-report");
    const r = evalCli(...SMALL, "--limit", "3", "--out", join(dir, "html.jsonl"), "--html", html, "--reference", "medagentbench-v1");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/overall\s+3\s+3\s+100\.0%/); // the table is still printed
    expect(r.stdout).toContain(`report: ${join(html, "index.html")}`);
    expect(readdirSync(html).sort()).toEqual(["index.html", "status.png", "success-by-type-mab-v1.png", "success-overall.png", "summary.json"]);
    const summary = JSON.parse(readFileSync(join(html, "summary.json"), "utf8"));
    expect(summary.runs).toHaveLength(1);
    expect(summary.runs[0].summary.overall).toMatchObject({ n: 3, success: 3 });
    expect(summary.reference.models.map((m: { name: string }) => m.name)).toContain("GPT-4o");
    expect(readFileSync(join(html, "index.html"), "utf8")).toContain("not measured here");
  });

  it.each([
    ["an unknown name", ["--html", join(dir, "never"), "--reference", "medagentbench-v9"], /^ehrgym: --reference: no file medagentbench-v9 and no shipped reference of that name \(shipped: medagentbench-v1/m],
    ["no --html to draw on", ["--reference", "medagentbench-v1"], /^ehrgym: --reference: .*give --html DIR too/m],
  ])("a bad --reference (%s) fails before any episode runs, exit 2", (_label, args, message) => {
    const out = join(dir, "never.jsonl");
    const r = evalCli(...SMALL, "--limit", "2", "--out", out, ...(args as string[]));
    expect(r.status, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(message as RegExp);
    expect(existsSync(out)).toBe(false);
    expect(existsSync(join(dir, "never"))).toBe(false);
  });

  it.each([
    [["--protocol", "smoke-signals"], /--protocol/],
    [["--tasks", "/no/such/file.json"], /--tasks: no such file/],
    [["--per-type", "0"], /--per-type/],
    [["--policy", "oracle"], /--policy/],
    [["--data", dir, "--patients-from", "/no/such.ndjson"], /--patients-from|--data/],
  ])("rejects bad flags with exit code 2: %j", (args, message) => {
    const r = evalCli(...(args as string[]), "--out", join(dir, "bad.jsonl"));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message as RegExp);
  });

  it("rejects a task file that is not a task list with exit code 2", () => {
    const r = evalCli("--tasks", join(PROJECT_ROOT, "package.json"), "--patients", "5", "--out", join(dir, "bad2.jsonl"));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--tasks/);
  });
});
