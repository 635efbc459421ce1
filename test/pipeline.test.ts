// `npm start`'s pipeline end to end (the --quick variant): every stage's output exists and is valid.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EpisodeRow } from "../rollout/index.ts";
import { PROJECT_ROOT } from "./helpers/shared.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-pipeline-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rows = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => EpisodeRow.parse(JSON.parse(l)));

describe("npm start: the offline pipeline", () => {
  it("runs teacher -> rollout -> dataset -> push --dry-run -> eval x2 -> report, and says where everything is", () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/pipeline.ts", "--quick", "--out", dir], { cwd: PROJECT_ROOT, encoding: "utf8", timeout: 600_000 });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    for (const stage of ["ehr", "tasks", "teacher", "rollout", "dataset", "push", "eval", "report"]) expect(r.stdout).toMatch(new RegExp(`\\] ${stage}\\s`));
    expect(r.stdout).toContain("not a model");

    const teacher = rows(join(dir, "teacher.jsonl"));
    expect(teacher.filter((x) => x.reward === 1)).toHaveLength(40);
    // Evaluation patients never reach training rows ("patient not found" tasks name nobody).
    const evalMrns = new Set(readFileSync(join(dir, "eval-tasks.jsonl"), "utf8").split("\n").filter(Boolean).flatMap((l) => (JSON.parse(l).eval_MRN as string | undefined) ?? []));
    expect(evalMrns.size).toBeGreaterThan(0);
    expect(teacher.filter((x) => x.mrn !== undefined && evalMrns.has(x.mrn))).toEqual([]);

    const manifest = JSON.parse(readFileSync(join(dir, "dataset", "manifest.json"), "utf8")) as { files: { path: string; rows: number }[] };
    expect(manifest.files.some((f) => f.path.endsWith(".arrow"))).toBe(true);
    expect(existsSync(join(dir, "dataset", "README.md"))).toBe(true);
    const validate = spawnSync(process.execPath, ["--import", "tsx", "scripts/cli.ts", "dataset", "validate", join(dir, "dataset"), "--exclude-mrns-from", join(dir, "eval-tasks.jsonl")], { cwd: PROJECT_ROOT, encoding: "utf8" });
    expect(validate.status, validate.stdout + validate.stderr).toBe(0);

    const expert = rows(join(dir, "eval-expert.jsonl"));
    expect(expert.every((x) => x.reward === 1)).toBe(true);
    const standin = rows(join(dir, "eval-stand-in.jsonl"));
    expect(standin).toHaveLength(expert.length * 2);
    expect(standin.some((x) => x.reward === 0)).toBe(true);

    expect(readFileSync(join(dir, "report", "index.html"), "utf8")).toContain("<svg");
    const summary = JSON.parse(readFileSync(join(dir, "report", "summary.json"), "utf8"));
    expect(JSON.stringify(summary)).toContain("stand-in");
  }, 600_000);
});
