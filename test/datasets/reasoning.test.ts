// `dataset build --reasoning keep|drop` (child processes of the CLI) on rows of a rollout against the
// stand-in thinking inline (--reasoning think): kept, each assistant turn carries its reasoning in
// `reasoning_content` beside the action, where Qwen3's chat template reads it; dropped (the default),
// no row holds any; the openai format never does; the card says which.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MedAgentEnv } from "../../env/core/index.ts";
import { createModelPolicy, runEpisodes } from "../../rollout/index.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { fixtureTasks, toJsonl } from "./fixture.ts";
import { cliAsync, readJsonl } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-ds-reasoning-"));
const rowsFile = join(dir, "rows.jsonl");
let teacher: TeacherServer;

beforeAll(async () => {
  const { tasks, config } = fixtureTasks({ perType: 1 });
  teacher = await startTeacherServer({ tasks, seed: 4, errorRate: 0, reasoning: "think" });
  const policy = createModelPolicy({ model: "ehrgym-stand-in", baseURL: teacher.url, apiKey: "x" });
  const all = [];
  for (const protocol of ["text", "tools"] as const) {
    const { rows } = await runEpisodes({ makeEnv: () => new MedAgentEnv(config), policy, tasks, protocol, maxRounds: 8, concurrency: 4, progress: false });
    all.push(...rows);
  }
  writeFileSync(rowsFile, toJsonl(all));
});
afterAll(async () => {
  await teacher.close();
  rmSync(dir, { recursive: true, force: true });
});

// the one train shard (its name carries a hash of its content)
const assistants = (ds: string) =>
  readJsonl(join(ds, "data", readdirSync(join(ds, "data")).find((f) => /^train-00000-of-00001-[0-9a-f]{16}\.jsonl$/.test(f))!)).flatMap((r) => (r.messages as Record<string, unknown>[]).filter((m) => m.role === "assistant"));

describe("dataset build --reasoning", () => {
  it("keep: every assistant turn carries its reasoning in reasoning_content, apart from the action; the openai format holds none", async () => {
    const ds = join(dir, "keep");
    const r = await cliAsync(["dataset", "build", "--from", rowsFile, "--out", ds, "--splits", "train", "--split-fractions", "1", "--format", "trl,openai", "--reasoning", "keep"]);
    expect(r.status, r.stderr).toBe(0);
    const turns = assistants(ds);
    expect(turns.length).toBeGreaterThan(0);
    for (const m of turns) {
      expect(m.reasoning_content).toMatch(/^\nThe task \(.+\) asks: /);
      expect(String(m.content ?? "")).not.toContain("<think>");
    }
    expect(readFileSync(join(ds, "openai/train.jsonl"), "utf8")).not.toContain("reasoning");
    expect(readFileSync(join(ds, "README.md"), "utf8")).toContain("Reasoning: kept (`--reasoning keep`)");
    expect(JSON.parse(readFileSync(join(ds, "manifest.json"), "utf8")).build.options.reasoning).toBe("keep");
  });

  it("drop (the default): no row holds reasoning", async () => {
    const ds = join(dir, "drop");
    const r = await cliAsync(["dataset", "build", "--from", rowsFile, "--out", ds, "--splits", "train", "--split-fractions", "1", "--format", "trl"]);
    expect(r.status, r.stderr).toBe(0);
    expect(assistants(ds).every((m) => !("reasoning_content" in m))).toBe(true);
    expect(readFileSync(join(ds, "README.md"), "utf8")).toContain("Reasoning: dropped (`--reasoning drop`, the default)");
  });

  it("a bad --reasoning exits 2 naming the flag", async () => {
    const r = await cliAsync(["dataset", "build", "--from", rowsFile, "--out", join(dir, "bad"), "--reasoning", "inline"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--reasoning: /);
  });
});
