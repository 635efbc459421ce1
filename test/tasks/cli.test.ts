import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseTaskFile } from "../../env/tasks/index.ts";

const cli = (...args: string[]) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
    const p = spawn(process.execPath, ["--import", "tsx", "scripts/cli.ts", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("close", (status) => done({ status, stdout, stderr }));
  });

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ehrgym-cli-tasks-"));
  const patients: string[] = [];
  const obs: string[] = [];
  let id = 100;
  for (let i = 0; i < 12; i++) {
    const mrn = `S20000${String(i).padStart(2, "0")}`;
    patients.push(
      JSON.stringify({ resourceType: "Patient", id: mrn, identifier: [{ type: { coding: [{ code: "MR" }] }, value: mrn }], name: [{ family: `Fam${i}`, given: [`Giv${i}`] }], birthDate: `19${50 + i}-0${1 + (i % 9)}-1${i % 10}` }),
    );
    if (i % 3 !== 0)
      obs.push(
        JSON.stringify({
          resourceType: "Observation",
          id: String(id++),
          status: "final",
          code: { coding: [{ system: "http://loinc.org", code: "K" }], text: "K" },
          subject: { reference: `Patient/${mrn}` },
          effectiveDateTime: "2023-11-10T08:00:00+00:00",
          valueQuantity: { value: i % 3 === 1 ? 3.1 : 4.2, unit: "mmol/L" },
        }),
      );
  }
  writeFileSync(join(dir, "Patient.ndjson"), patients.join("\n") + "\n");
  writeFileSync(join(dir, "Observation.ndjson"), obs.join("\n") + "\n");
  return dir;
}

describe("ehrgym tasks", () => {
  it("generate on --data DIR writes balanced JSONL; stats prints the balance; hold-out applies", async () => {
    const dir = dataDir();
    const out = join(dir, "out", "tasks.jsonl");
    const held = join(dir, "held.txt");
    writeFileSync(held, "# held out\nS2000001\n");
    const r = await cli("tasks", "generate", "--suite", "mab-v1", "--per-type", "6", "--types", "task9,task1", "--data", dir, "--out", out, "--seed", "3", "--exclude-mrns-from", held);
    expect(r.stderr).toContain("wrote 12 tasks");
    expect(r.status).toBe(0);
    const tasks = parseTaskFile(readFileSync(out, "utf8"));
    expect(tasks).toHaveLength(12);
    expect(tasks.some((t) => t.eval_MRN === "S2000001")).toBe(false);
    const s = await cli("tasks", "stats", out);
    expect(s.status).toBe(0);
    expect(s.stdout).toContain("mab-v1/task9");
    expect(s.stdout).toMatch(/no-k=2\s+k>=3\.5=2\s+k<3\.5=2/);
  });

  it("--suite all is every suite, workflows included; --suite takes a list; --types picks the suites that have them", async () => {
    const dir = dataDir();
    const suitesIn = async (...args: string[]) => {
      const out = join(dir, `${args.join("_").replace(/[^a-z0-9]+/gi, "-")}.jsonl`);
      const r = await cli("tasks", "generate", "--per-type", "2", "--data", dir, "--out", out, ...args);
      expect(r.status, r.stderr).toBe(0);
      const tasks = parseTaskFile(readFileSync(out, "utf8"));
      return [...new Set(tasks.map((t) => `${t.suite}/${t.type}`))].sort();
    };
    const all = await suitesIn();
    expect(await suitesIn("--suite", "all")).toEqual(all);
    expect(new Set(all.map((k) => k.split("/")[0]))).toEqual(new Set(["mab-v1", "mab-v2", "workflows"]));
    expect(await suitesIn("--suite", "mab-v2,workflows", "--types", "task9,review")).toEqual(["mab-v2/task9", "workflows/review"]);
    expect(await suitesIn("--types", "review")).toEqual(["workflows/review"]);
    expect(await suitesIn("--types", "v2_task9,task2")).toEqual(["mab-v1/task2", "mab-v2/task2", "mab-v2/v2_task9"]);
  });

  it("bad flags exit 2 naming the flag, and write nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ehrgym-cli-bad-"));
    const out = join(dir, "t.jsonl");
    const cases: [string[], RegExp][] = [
      [["--per-type", "0"], /--per-type/],
      [["--suite", "mab-v3"], /--suite/],
      [["--split", "dev"], /--split/],
      [["--split-fractions", "0.5,0.5"], /--split-fractions/],
      [["--split-fractions", "2,2,2"], /--split-fractions: each fraction must be from 0 to 1 \(got "2,2,2"\)/],
      [["--split-fractions", "-0.2,0.6,0.6"], /--split-fractions: each fraction must be from 0 to 1/],
      [["--split-fractions", "0.5,0.2,0.2"], /--split-fractions: the three fractions must sum to 1/],
      [["--like", dir], /--like: is a directory, expected a file/],
      [["--data", join(dir, "nope")], /--data/],
      [["--exclude-mrns-from", join(dir, "nope.txt")], /--exclude-mrns-from/],
      [["--like", join(dir, "nope.json")], /--like/],
      [["--seed", "-1"], /--seed/],
      [["--types", "task1,task99"], /^ehrgym: --types: unknown task type "task99" \(known: .*; review \(workflows\)\) \(got "task1,task99"\)\n$/],
      [["--suite", "mab-v2", "--types", "review"], /^ehrgym: --types: "review" is not a task type of --suite mab-v2 \(review is a type of workflows\)\n$/],
    ];
    mkdirSync(join(dir, "d"));
    writeFileSync(join(dir, "mrns.txt"), "S2000001\n");
    const results = await Promise.all(cases.map(([args]) => cli("tasks", "generate", "--out", out, ...args)));
    results.forEach((r, i) => {
      expect(r.status, cases[i]![0].join(" ")).toBe(2);
      expect(r.stderr).toMatch(cases[i]![1]);
    });
    const conflict = await cli("tasks", "generate", "--out", out, "--data", join(dir, "d"), "--synthetic");
    expect(conflict.status).toBe(2);
    expect(conflict.stderr).toMatch(/--synthetic/);
    const onInput = await cli("tasks", "generate", "--out", join(dir, "mrns.txt"), "--exclude-mrns-from", join(dir, "mrns.txt"));
    expect(onInput.status).toBe(2);
    expect(onInput.stderr).toContain("it is also an input of this command");
    const onDir = await cli("tasks", "generate", "--out", join(dir, "d"));
    expect(onDir.status).toBe(2);
    expect(onDir.stderr).toContain(`--out ${join(dir, "d")}: is a directory; give a file path`);
    const stats = await cli("tasks", "stats", join(dir, "missing.jsonl"));
    expect(stats.status).toBe(2);
    writeFileSync(join(dir, "broken.jsonl"), '{"id": "task1_1"}\n');
    const broken = await cli("tasks", "stats", join(dir, "broken.jsonl"));
    expect(broken.status).toBe(2);
    expect(broken.stderr).toMatch(/field instruction/);
    expect(existsSync(out)).toBe(false);
  });
});
