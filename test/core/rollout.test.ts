import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedBackend, Environment, RolloutResult } from "../../env/core/index.ts";
import { API_BASE, MRNS, service, smallStore, solGrader, task } from "./fixtures.ts";

// A tiny OpenAI-compatible endpoint: each request gets the next scripted reply of the model named in it.
type Scripted = { content?: string; tool_calls?: unknown[] } | { error: { status: number; code: string; message: string } };
const scripts = new Map<string, Scripted[]>();
const requests: { model: string; messages: unknown[]; tools?: unknown[]; temperature?: number }[] = [];
let server: Server;
let client: OpenAI;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const parsed = JSON.parse(body);
      requests.push(parsed);
      const next = scripts.get(parsed.model)?.shift();
      res.setHeader("content-type", "application/json");
      if (!next || req.url !== "/v1/chat/completions") {
        res.statusCode = 500;
        return res.end(JSON.stringify({ error: { message: "script exhausted" } }));
      }
      if ("error" in next) {
        res.statusCode = next.error.status;
        return res.end(JSON.stringify({ error: { message: next.error.message, code: next.error.code, type: "invalid_request_error" } }));
      }
      res.end(
        JSON.stringify({
          id: "chatcmpl-1",
          object: "chat.completion",
          created: 0,
          model: parsed.model,
          choices: [{ index: 0, finish_reason: next.tool_calls ? "tool_calls" : "stop", message: { role: "assistant", content: next.content ?? null, tool_calls: next.tool_calls } }],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  client = new OpenAI({ baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: "test", maxRetries: 0 });
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const store = smallStore();
const backend = new EmbeddedBackend(store, service(store));

describe("Environment.rollout with the openai client", () => {
  it("text protocol: the model's turns drive the episode to a graded FINISH", async () => {
    scripts.set("text-model", [{ content: `GET ${API_BASE}Patient?identifier=${MRNS[1]}` }, { content: `FINISH(["${MRNS[1]}"])` }]);
    const env = new Environment({ backend, grader: solGrader() }, { protocol: "text" });
    const result = await env.rollout(client, "text-model", task("r1", MRNS[1], [MRNS[1]]), { temperature: 0 });
    expect(RolloutResult.parse(result)).toEqual(result);
    expect(result.reward).toBe(1);
    expect(result.metrics).toMatchObject({ correct: 1 });
    expect(result.state).toMatchObject({ task_id: "r1", protocol: "text", status: "completed", rounds: 2 });
    expect(result.prompt).toHaveLength(1);
    expect(result.completion.map((m) => m.role)).toEqual(["assistant", "user", "assistant"]);
    const sent = requests.filter((r) => r.model === "text-model");
    expect(sent).toHaveLength(2);
    expect(sent[0]!.temperature).toBe(0);
    expect(sent[1]!.messages).toHaveLength(3);
    expect(sent[0]!.tools).toBeUndefined();
  });

  it("tool protocol: tool calls, tool messages, finish", async () => {
    scripts.set("tool-model", [
      { tool_calls: [{ id: "c1", type: "function", function: { name: "fhir_observation_search", arguments: JSON.stringify({ search_params: { patient: MRNS[0], code: "K" }, explanation: "latest potassium" }) } }] },
      { tool_calls: [{ id: "c2", type: "function", function: { name: "finish", arguments: JSON.stringify({ value: [MRNS[0]] }) } }] },
    ]);
    const env = new Environment({ backend, grader: solGrader() }, { protocol: "tools" });
    const result = await env.rollout(client, "tool-model", task("r2", MRNS[0], [MRNS[0]]));
    expect(result).toMatchObject({ reward: 1, state: { status: "completed", protocol: "tools" } });
    expect(result.completion.map((m) => m.role)).toEqual(["assistant", "tool", "assistant", "tool"]); // finish answers too, as in the original
    expect(result.completion[1]!.tool_call_id).toBe("c1");
    const sent = requests.filter((r) => r.model === "tool-model");
    expect(sent[0]!.tools).toHaveLength(11);
    expect((sent[1]!.messages as { role: string }[]).map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
  });

  it("a context-length error from the model ends the episode with context_limit; other errors with error", async () => {
    scripts.set("small-model", [{ content: `GET ${API_BASE}Patient?identifier=${MRNS[0]}` }, { error: { status: 400, code: "context_length_exceeded", message: "maximum context length is 10 tokens" } }]);
    const env = new Environment({ backend, grader: solGrader() });
    const result = await env.rollout(client, "small-model", task("r3"));
    expect(result).toMatchObject({ reward: 0, state: { status: "context_limit", rounds: 1 } });
    scripts.set("broken-model", []);
    const broken = await env.rollout(client, "broken-model", task("r4"));
    expect(broken).toMatchObject({ reward: 0, state: { status: "error", rounds: 0 } });
  });
});
