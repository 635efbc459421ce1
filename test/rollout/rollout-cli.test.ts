// `ehrgym rollout` as a child process, through the real `openai` client over real HTTP against the
// stand-in teacher, in both protocols: rows, rewards (vs /v1/score), usage, target, hold-out, faults.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_BASE, EmbeddedBackend, EnvConfig } from "../../env/core/index.ts";
import { createFhirService } from "../../env/fhir/index.ts";
import { createRewardServer, medAgentBackend, type RewardServer } from "../../env/server/index.ts";
import { EpisodeRow } from "../../rollout/index.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { cli, EHR_FLAGS, smallWorld } from "./rollout-fixture.ts";

const world = smallWorld(2);
let teacher: TeacherServer;
let scorer: RewardServer;
let scoreUrl: string;

beforeAll(async () => {
  teacher = await startTeacherServer({ tasks: world.tasks, seed: 11 });
  const service = createFhirService(world.store, { baseUrl: DEFAULT_API_BASE });
  const config = new EnvConfig({ backend: new EmbeddedBackend(world.store, service, DEFAULT_API_BASE), tasks: world.tasks });
  scorer = createRewardServer({ backend: medAgentBackend(config, world.tasks) });
  scoreUrl = await scorer.listen(0);
});
afterAll(async () => {
  await teacher?.close();
  await scorer?.close();
});

const rowsOf = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => EpisodeRow.parse(JSON.parse(l)));

const rollout = (out: string, ...extra: string[]) =>
  cli(["rollout", "--base-url", teacher.url, "--model", "ehrgym-stand-in", "--tasks", world.tasksFile, ...EHR_FLAGS, "--out", out, "--no-progress", ...extra]);

async function score(row: EpisodeRow): Promise<number> {
  const task = world.tasks.find((t) => t.id === row.task_id && t.suite === row.suite)!;
  const res = await fetch(`${scoreUrl}/v1/score`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ task, protocol: row.protocol, messages: row.messages }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { reward: number }).reward;
}

describe.each(["text", "tools"] as const)("ehrgym rollout, %s protocol", (protocol) => {
  const out = join(world.dir, `teacher-${protocol}.jsonl`);
  let rows: EpisodeRow[];

  it("records every episode as a complete row", async () => {
    const r = await rollout(out, "--protocol", protocol, "--concurrency", "8");
    expect(r.status, r.stderr).toBe(0);
    rows = rowsOf(out);
    expect(rows).toHaveLength(world.tasks.length);
    expect(new Set(rows.map((x) => `${x.suite}/${x.task_id}/${x.sample}`)).size).toBe(world.tasks.length);
    for (const row of rows) {
      expect(row.protocol).toBe(protocol);
      expect(row.policy).toMatchObject({ kind: "openai", model: "ehrgym-stand-in", base_url_host: new URL(teacher.url).host, sampling: { temperature: 0.7 } });
      const task = world.tasks.find((t) => t.id === row.task_id)!;
      expect(row.mrn).toBe(task.eval_MRN); // absent only for a patient who does not exist
      expect(row.started_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      if (protocol === "tools") expect(row.tools?.length).toBeGreaterThan(0);
      else expect(row.tools).toBeUndefined();
      if (row.status === "model_error") continue;
      const assistantTurns = row.messages.filter((m) => m.role === "assistant").length;
      expect(row.turns).toHaveLength(assistantTurns);
      const sum = (k: "prompt_tokens" | "completion_tokens" | "total_tokens") => row.turns!.reduce((s, t) => s + t.usage![k], 0);
      expect(row.usage).toEqual({ prompt_tokens: sum("prompt_tokens"), completion_tokens: sum("completion_tokens"), total_tokens: sum("total_tokens") });
      const replies = row.messages.filter((m) => m.role === "assistant");
      row.turns!.forEach((t, i) => expect(t.finish_reason).toBe(replies[i]!.tool_calls?.length ? "tool_calls" : "stop"));
    }
    // The stand-in errs on a seeded share: both outcomes occur.
    expect(rows.some((x) => x.reward === 1)).toBe(true);
    expect(rows.some((x) => x.reward === 0)).toBe(true);
    const meta = JSON.parse(readFileSync(`${out}.meta.json`, "utf8"));
    expect(meta.counts.rows).toBe(rows.length);
    expect(meta.tasks.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(meta)).not.toMatch(/api[_-]?key"\s*:/i);
    expect(r.stdout).toMatch(/tokens: [\d,]+ in, [\d,]+ out/);
  });

  it("gives each row the reward that grading its transcript with /v1/score gives", async () => {
    for (const row of rows) expect(await score(row), `${row.task_id}`).toBe(row.reward);
  });

  it("skips every key already in the file when run again", async () => {
    const r = await rollout(out, "--protocol", protocol);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`0 episodes run .*; ${world.tasks.length} already in the file`));
    expect(rowsOf(out)).toHaveLength(world.tasks.length);
  });
});

describe("ehrgym rollout: stopping, hold-out, mixing", () => {
  it("--target-correct stops at exactly N correct rows, counting those already in the file", async () => {
    const out = join(world.dir, "target.jsonl");
    const first = await rollout(out, "--samples", "4", "--target-correct", "5", "--concurrency", "6");
    expect(first.status, first.stderr).toBe(0);
    expect(rowsOf(out).filter((r) => r.reward === 1)).toHaveLength(5);
    const second = await rollout(out, "--samples", "4", "--target-correct", "9", "--concurrency", "6");
    expect(second.status, second.stderr).toBe(0);
    const rows = rowsOf(out);
    expect(rows.filter((r) => r.reward === 1)).toHaveLength(9);
    expect(new Set(rows.map((x) => `${x.suite}/${x.task_id}/${x.sample}`)).size).toBe(rows.length);
  });

  it("refuses tasks of held-out patients with one line and never runs them", async () => {
    const out = join(world.dir, "heldout.jsonl");
    const held = [...new Set(world.tasks.slice(0, 6).flatMap((t) => (t.eval_MRN ? [t.eval_MRN] : [])))];
    const list = join(world.dir, "eval-mrns.txt");
    writeFileSync(list, held.join("\n") + "\n");
    const r = await rollout(out, "--exclude-mrns-from", list);
    expect(r.status, r.stderr).toBe(0);
    const refused = world.tasks.filter((t) => t.eval_MRN && held.includes(t.eval_MRN)).length;
    expect(r.stderr).toContain(`refused ${refused} task(s) whose patient is in --exclude-mrns-from`);
    const rows = rowsOf(out);
    expect(rows).toHaveLength(world.tasks.length - refused);
    expect(rows.filter((x) => held.includes(x.mrn!))).toEqual([]);
  });

  it("--max-episodes caps the rows in the file", async () => {
    const out = join(world.dir, "max.jsonl");
    expect((await rollout(out, "--max-episodes", "7")).status).toBe(0);
    expect(rowsOf(out)).toHaveLength(7);
    expect((await rollout(out, "--max-episodes", "10")).status).toBe(0);
    expect(rowsOf(out)).toHaveLength(10);
  });

  it("refuses to mix rows of another protocol or model into --out unless told", async () => {
    const out = join(world.dir, "teacher-text.jsonl");
    const r = await rollout(out, "--protocol", "tools");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/holds \d+ row\(s\) of openai:ehrgym-stand-in \(protocol text\); this run is openai:ehrgym-stand-in \(protocol tools\)/);
    expect(r.stderr).toContain("--append-different");
  });

  it("shards partition the keys: every key in exactly one shard", async () => {
    const keys: string[] = [];
    for (const k of [0, 1, 2]) {
      const out = join(world.dir, `shard-${k}.jsonl`);
      const r = await rollout(out, "--shard", `${k}/3`, "--samples", "2");
      expect(r.status, r.stderr).toBe(0);
      keys.push(...rowsOf(out).map((x) => `${x.suite}/${x.task_id}/${x.sample}`));
    }
    expect(keys).toHaveLength(world.tasks.length * 2);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("rejects bad flags naming the flag and the value", async () => {
    const r = await rollout(join(world.dir, "bad.jsonl"), "--shard", "3/3");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--shard: K must be below N/);
    const e = await rollout(join(world.dir, "bad.jsonl"), "--extra-body", "{top_k: 1}");
    expect(e.status).toBe(2);
    expect(e.stderr).toMatch(/--extra-body: expected a JSON object/);
  });
});
