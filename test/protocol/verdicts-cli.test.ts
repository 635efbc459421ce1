// The verdict transcripts (./verdict-cases.ts) through `ehrgym eval` and `ehrgym rollout` as child
// processes: their real `openai` client talks over loopback to a scripted model that answers each
// case's turns in order, on the cases' EHR exported as NDJSON (--data). Every row must carry the
// verdict the environment gives (./verdicts.test.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportNdjson } from "../../env/fhir/index.ts";
import { EpisodeRow } from "../../rollout/index.ts";
import { cli } from "../rollout/rollout-fixture.ts";
import { caseOf, VERDICT_CASES, verdictOf, verdictStore } from "./verdict-cases.ts";

const dir = mkdtempSync(join(tmpdir(), "ehrgym-verdicts-"));
const data = join(dir, "ehr");
const tasksFile = join(dir, "tasks.jsonl");
const textTasksFile = join(dir, "text-tasks.jsonl");
const TOOL_CASES = VERDICT_CASES.filter((c) => (c.protocol ?? "tools") === "tools");
const TEXT_CASES = VERDICT_CASES.filter((c) => c.protocol === "text");
let model: Server;
let modelUrl: string;

/** An OpenAI-compatible endpoint that plays each case's next turn (its n-th after n assistant messages). */
function scriptedModel(): Server {
  return createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const request = JSON.parse(body) as { model: string; messages: { role: string; content?: unknown }[] };
      const c = caseOf(request.messages);
      const turn = c?.turns[request.messages.filter((m) => m.role === "assistant").length];
      res.setHeader("content-type", "application/json");
      if (!turn) {
        res.statusCode = 400;
        return res.end(JSON.stringify({ error: { message: `no scripted turn for this conversation (case ${c?.name ?? "unknown"})`, type: "invalid_request_error" } }));
      }
      // Reasoning in the field the case names, as vLLM returns it (the real client passes it through).
      const message = {
        role: "assistant",
        content: turn.content ?? null,
        ...(turn.reasoning_content ? { reasoning_content: turn.reasoning_content } : {}),
        ...(turn.reasoning ? { reasoning: turn.reasoning } : {}),
        ...(turn.tool_calls ? { tool_calls: turn.tool_calls } : {}),
      };
      res.end(
        JSON.stringify({
          id: "chatcmpl-verdict",
          object: "chat.completion",
          created: 0,
          model: request.model,
          choices: [{ index: 0, finish_reason: turn.tool_calls ? "tool_calls" : "stop", message }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
}

beforeAll(async () => {
  await exportNdjson(verdictStore(), data);
  writeFileSync(tasksFile, TOOL_CASES.map((c) => JSON.stringify(c.task)).join("\n") + "\n");
  writeFileSync(textTasksFile, TEXT_CASES.map((c) => JSON.stringify(c.task)).join("\n") + "\n");
  model = scriptedModel();
  await new Promise<void>((r) => model.listen(0, "127.0.0.1", r));
  modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise<void>((r) => model.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const rowsOf = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => EpisodeRow.parse(JSON.parse(l)));

describe.each([
  ["eval", "original"],
  ["rollout", "original"],
  ["eval", "medarc"],
  ["rollout", "medarc"],
] as const)("ehrgym %s --v2-semantics %s", (command, mode) => {
  it("writes every case's row with the reference's verdict", async () => {
    const out = join(dir, `${command}-${mode}.jsonl`);
    const policy = command === "eval" ? ["--policy", "openai"] : [];
    const r = await cli([command, ...policy, "--model", "scripted", "--base-url", modelUrl, "--tasks", tasksFile, "--data", data, "--protocol", "tools", "--v2-semantics", mode, "--out", out, "--no-progress"]);
    expect(r.status, r.stderr).toBe(0);
    const rows = rowsOf(out);
    expect(rows).toHaveLength(TOOL_CASES.length);
    for (const c of TOOL_CASES) {
      const row = rows.find((x) => x.task_id === c.task.id)!;
      expect(verdictOf({ status: row.status, reward: row.reward, result: row.result, messages: row.messages }, c[mode]), `${c.name}: ${c.why}`).toEqual(c[mode]);
    }
  });
});

describe.each([
  ["eval", "split"],
  ["rollout", "split"],
  ["eval", "official"],
  ["rollout", "official"],
] as const)("ehrgym %s --protocol text --think-blocks %s", (command, mode) => {
  it("writes every reasoning case's row with the environment's verdict, its reasoning apart", async () => {
    const out = join(dir, `${command}-text-${mode}.jsonl`);
    const policy = command === "eval" ? ["--policy", "openai"] : [];
    const r = await cli([command, ...policy, "--model", "scripted", "--base-url", modelUrl, "--tasks", textTasksFile, "--data", data, "--protocol", "text", "--think-blocks", mode, "--out", out, "--no-progress"]);
    expect(r.status, r.stderr).toBe(0);
    const rows = rowsOf(out);
    expect(rows).toHaveLength(TEXT_CASES.length);
    for (const c of TEXT_CASES) {
      const row = rows.find((x) => x.task_id === c.task.id)!;
      const expected = mode === "split" ? c.original : c.official!;
      expect(verdictOf({ status: row.status, reward: row.reward, result: row.result, messages: row.messages }, expected, "text"), `${c.name}: ${c.why}`).toEqual(expected);
    }
    const think = rows.find((x) => x.task_id === "task2_think-then-get")!;
    if (mode === "split") expect(think.messages[1]).toEqual({ role: "assistant", content: "GET http://localhost:8080/fhir/Patient?identifier=S1000001", reasoning_content: "Look the patient up first." });
    const field = rows.find((x) => x.task_id === "task2_reasoning-field")!;
    expect(field.messages[1]!.reasoning_content).toMatch(/^FINISH\(\[71\]\)\? No/);
  });
});
