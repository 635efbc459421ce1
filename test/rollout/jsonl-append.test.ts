// Rows are appended as JSON.stringify writes them, whole lines in call order.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MedAgentEnv } from "../../env/core/index.ts";
import { generateStore } from "../../env/ehr/index.ts";
import { generateTasks } from "../../env/tasks/index.ts";
import { createExpertPolicy, readRowHeads, runEpisodes, type EpisodeRow } from "../../rollout/index.ts";
import { JsonlAppender } from "../../env/util/index.ts";
import { API_BASE, envConfig } from "./world.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-append-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("JsonlAppender", () => {
  it("writes each row of real episodes (both protocols) byte for byte as JSON.stringify, in call order", async () => {
    const { store } = generateStore({ seed: 5, patients: 30 });
    const config = envConfig(store);
    const tasks = (["mab-v1", "mab-v2"] as const).flatMap((suite) => generateTasks(store, { suite, perType: 3, seed: 5 }));
    const rows: EpisodeRow[] = [];
    for (const protocol of ["text", "tools"] as const) {
      const run = await runEpisodes({ makeEnv: () => new MedAgentEnv(config), policy: createExpertPolicy({ apiBase: API_BASE }), tasks, protocol, maxRounds: 8, concurrency: 4, progress: false });
      rows.push(...run.rows);
    }
    // Long FHIR replies are among them (the case the piecewise encoding is for).
    expect(rows.some((r) => r.messages.some((m) => (m.content?.length ?? 0) > 8192))).toBe(true);
    const path = join(dir, "rows.jsonl");
    const appender = new JsonlAppender(path);
    // Some appends awaited, others left in flight: line buffers are reused while other lines are being written.
    const inFlight: Promise<void>[] = [];
    for (const [i, row] of rows.entries()) {
      const appended = appender.append(row);
      if (i % 3 === 0) {
        // Resolved: the row's line is in the file, after every row appended before it.
        await appended;
        expect(readFileSync(path, "utf8")).toBe(rows.slice(0, i + 1).map((r) => `${JSON.stringify(r)}\n`).join(""));
      } else inFlight.push(appended);
    }
    await Promise.all(inFlight);
    await appender.close();
    expect(readFileSync(path, "utf8")).toBe(rows.map((row) => `${JSON.stringify(row)}\n`).join(""));
  });

  it("a run with --out keeps no rows in memory; its counts match the file", async () => {
    const { store } = generateStore({ seed: 6, patients: 20 });
    const config = envConfig(store);
    const tasks = generateTasks(store, { suite: "mab-v1", perType: 2, seed: 6 });
    const out = join(dir, "run.jsonl");
    const result = await runEpisodes({ makeEnv: () => new MedAgentEnv(config), policy: createExpertPolicy({ apiBase: API_BASE }), tasks, protocol: "text", maxRounds: 8, concurrency: 4, progress: false, out });
    const written = readFileSync(out, "utf8").trim().split("\n").map((line) => JSON.parse(line) as EpisodeRow);
    expect(result.rows).toEqual([]);
    expect(written).toHaveLength(tasks.length);
    expect(result.ran).toEqual({
      episodes: tasks.length,
      correct: written.filter((r) => r.reward === 1).length,
      promptTokens: written.reduce((n, r) => n + (r.usage?.prompt_tokens ?? 0), 0),
      completionTokens: written.reduce((n, r) => n + (r.usage?.completion_tokens ?? 0), 0),
    });
    expect(result.ran.correct).toBeGreaterThan(0);
    // Its heads are the file's rows without transcripts, in file order.
    expect(result.heads).toEqual(written.map(({ messages: _m, tools: _t, ...head }) => head));

    // A second run over the same file, given the heads read once (as `ehrgym rollout` does): it skips
    // every key, reads nothing again, and reports the same heads plus its own (none).
    const heads = await readRowHeads(out);
    expect(heads).toEqual(result.heads);
    const again = await runEpisodes({ makeEnv: () => new MedAgentEnv(config), policy: createExpertPolicy({ apiBase: API_BASE }), tasks, protocol: "text", maxRounds: 8, concurrency: 4, progress: false, out, existingHeads: heads });
    expect(again.skipped).toBe(tasks.length);
    expect(again.ran.episodes).toBe(0);
    expect(again.heads).toEqual(result.heads);
  });
});

describe("readRowHeads", () => {
  it("reads every row once without its transcript, cuts a half-written last line, names a line that is not a row", async () => {
    const path = join(dir, "heads.jsonl");
    const row = (i: number) => ({ task_id: `t${i}`, suite: "mab-v1", sample: 0, reward: i % 2, messages: [{ role: "user", content: "x".repeat(200_000) }], tools: [{ type: "function" }] });
    writeFileSync(path, `${JSON.stringify(row(1))}\n${JSON.stringify(row(2))}\n${JSON.stringify(row(3)).slice(0, 5000)}`);
    expect(await readRowHeads(path)).toEqual([
      { task_id: "t1", suite: "mab-v1", sample: 0, reward: 1 },
      { task_id: "t2", suite: "mab-v1", sample: 0, reward: 0 },
    ]);
    // The torn line is gone from the file too, so the next append starts on a fresh line.
    expect(readFileSync(path, "utf8").endsWith("\n")).toBe(true);
    expect(readFileSync(path, "utf8").split("\n").filter(Boolean)).toHaveLength(2);

    writeFileSync(path, `${JSON.stringify(row(1))}\n{"not":"a row"}\n`);
    await expect(readRowHeads(path)).rejects.toThrow(`${path}:2: not an episode row`);
    expect(await readRowHeads(join(dir, "absent.jsonl"))).toEqual([]);
  });
});
