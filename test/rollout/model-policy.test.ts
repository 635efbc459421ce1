// The model policy through the real `openai` client against the stand-in teacher's fault injection:
// retries (429 with Retry-After, 500, dropped connections), model-shaped failures, errors no retry fixes.
import { getEventListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_API_BASE, EmbeddedBackend, EnvConfig, MedAgentEnv, ModelError, RunAborted } from "../../env/core/index.ts";
import { createFhirService } from "../../env/fhir/index.ts";
import { createModelPolicy, EpisodeRow, runEpisodes, type RunOptions } from "../../rollout/index.ts";
import { backoffMs } from "../../rollout/model/backoff.ts";
import { startTeacherServer, type TeacherServer, type TeacherServerInput } from "../../rollout/teacher/index.ts";
import { smallWorld } from "./rollout-fixture.ts";

const world = smallWorld(1);
const config = new EnvConfig({ backend: new EmbeddedBackend(world.store, createFhirService(world.store, { baseUrl: DEFAULT_API_BASE }), DEFAULT_API_BASE) });
const makeEnv = () => new MedAgentEnv(config);
const tasks = world.tasks.slice(0, 12);

let servers: TeacherServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function teacher(options: Partial<TeacherServerInput> = {}) {
  const s = await startTeacherServer({ tasks: world.tasks, seed: 5, errorRate: 0, ...options });
  servers.push(s);
  return s;
}

// Retries wait a jittered share of the backoff: a zero draw keeps the tests quick and deterministic.
const policyFor = (url: string, extra: Partial<Parameters<typeof createModelPolicy>[0]> = {}) =>
  createModelPolicy({ model: "ehrgym-stand-in", baseURL: url, apiKey: "k", random: () => 0, timeoutMs: 600_000, ...extra });

const run = (policy: RunOptions["policy"], protocol: "text" | "tools" = "text", extra: Partial<RunOptions> = {}) =>
  runEpisodes({ makeEnv, policy, tasks, protocol, maxRounds: 8, concurrency: 4, progress: false, ...extra });

describe("model policy: retries", () => {
  it.each(["text", "tools"] as const)("retries 429/500/dropped connections and still completes every episode (%s)", async (protocol) => {
    const s = await teacher({ faults: "429:0.1,500:0.1,reset:0.1" });
    const policy = policyFor(s.url);
    const { rows } = await run(policy, protocol);
    expect(rows).toHaveLength(tasks.length);
    for (const row of rows) EpisodeRow.parse(row);
    expect(rows.every((r) => r.status !== "model_error")).toBe(true);
    expect(rows.every((r) => r.reward === 1)).toBe(true);
    expect(policy.stats.retries).toBeGreaterThan(0);
    expect(rows.flatMap((r) => r.turns ?? []).some((t) => (t.attempts ?? 1) > 1)).toBe(true);
    expect(policy.stats.requests).toBe(rows.reduce((s, r) => s + r.turns!.reduce((a, t) => a + t.attempts!, 0), 0));
  });

  it("waits what Retry-After asks for, else a full-jitter share of an exponential backoff", () => {
    expect(backoffMs(0, 1000)).toBe(1000);
    expect(backoffMs(5, 2000, { random: () => 0.99 })).toBe(2000);
    expect(backoffMs(3, undefined, { random: () => 1, baseMs: 500 })).toBe(4000);
    expect(backoffMs(3, undefined, { random: () => 0.25, baseMs: 500 })).toBe(1000);
    expect(backoffMs(30, undefined, { random: () => 1 })).toBe(60_000);
  });

  it("ends the episode as model_error with the error text once retries run out", async () => {
    const s = await teacher({ faults: "500:1" });
    const { rows, stopped } = await run(policyFor(s.url, { maxRetries: 2 }), "text", { maxConsecutiveErrors: 1000 });
    // Nothing ever succeeded: the run stops at the first such episode instead of writing one per task.
    expect(rows).toHaveLength(0);
    expect(stopped?.reason).toBe("fatal");
    expect(stopped?.message).toMatch(/failed every request so far: HTTP 500.*\(after 3 attempts\)/);
  });

  it("stops after N model_error episodes in a row once the endpoint goes down mid-run", async () => {
    const s = await teacher();
    let seen = 0;
    const { rows, stopped } = await run(policyFor(s.url, { maxRetries: 0 }), "text", {
      maxConsecutiveErrors: 2,
      concurrency: 1,
      onRow: () => {
        if (++seen === 3) void s.close();
      },
    });
    expect(stopped?.reason).toBe("errors");
    expect(stopped?.message).toMatch(/2 episodes in a row failed at the model endpoint; last: connection failed/);
    expect(rows).toHaveLength(5);
    expect(rows.slice(0, 3).every((r) => r.status === "completed")).toBe(true);
    expect(rows.slice(3).every((r) => r.status === "model_error" && r.reward === 0 && /connection failed/.test(r.error!))).toBe(true);
  });
});

describe("model policy: what the model sends back", () => {
  it("a 200 that is not a chat completion (no choices, truncated JSON, an HTML page) is retried and counted like a dropped connection", async () => {
    for (const fault of ["nochoices", "truncated", "html"]) {
      const s = await teacher({ faults: `${fault}:0.3` });
      const policy = policyFor(s.url);
      const { rows } = await run(policy);
      expect(rows.filter((r) => r.status === "model_error"), fault).toEqual([]);
      expect(policy.stats.retries, fault).toBeGreaterThan(0);
      expect(rows.some((r) => (r.turns ?? []).some((t) => (t.attempts ?? 1) > 1)), fault).toBe(true);
    }
  });

  it("an endpoint that is not a chat-completions server (501, 405) fails at once with one line, no page in it", async () => {
    for (const status of [501, 405]) {
      let hits = 0;
      const server = createServer((_req, res) => {
        hits++;
        res.writeHead(status, { "content-type": "text/html" });
        res.end(`<html>\n<body>\n${"<p>Not Implemented</p>\n".repeat(14)}</body>\n</html>\n`);
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
        const policy = createModelPolicy({ model: "m", baseURL: url, apiKey: "x", maxRetries: 6, random: () => 0 });
        const task = tasks[0]!;
        const { observation } = await makeEnv().reset({ task, protocol: "text", maxRounds: 8 });
        const err = (await policy.act({ task, protocol: "text", messages: observation, episodeKey: "k" }).catch((e: unknown) => e)) as ModelError;
        expect(err).toBeInstanceOf(ModelError);
        expect(err.fatal).toMatch(new RegExp(`answered ${status} to POST /chat/completions: it is not an OpenAI-compatible chat-completions server`));
        expect(hits).toBe(1);
        for (const text of [err.message, err.fatal!]) {
          expect(text.split("\n")).toHaveLength(1);
          expect(text.length).toBeLessThan(400);
        }
      } finally {
        server.close();
      }
    }
  });

  it("names the broken reply, on one line, when retries run out", async () => {
    for (const [fault, named] of [
      ["nochoices", "a 200 reply that is not a chat completion: `choices` is empty"],
      ["truncated", "a 200 reply whose body is not complete JSON"],
      ["html", "a 200 reply that is not a chat completion: an HTML page"],
    ] as const) {
      const s = await teacher({ faults: `${fault}:1` });
      const policy = createModelPolicy({ model: "ehrgym-stand-in", baseURL: s.url, apiKey: "x", maxRetries: 2, random: () => 0 });
      const task = tasks[0]!;
      const { observation } = await makeEnv().reset({ task, protocol: "text", maxRounds: 8 });
      const err = await policy.act({ task, protocol: "text", messages: observation, episodeKey: "k" }).catch((e: unknown) => e as Error);
      expect(err, fault).toBeInstanceOf(ModelError);
      expect((err as Error).message, fault).toContain(named);
      expect((err as Error).message, fault).toContain("(after 3 attempts)");
      expect((err as Error).message.split("\n"), fault).toHaveLength(1);
      expect(policy.stats.retries, fault).toBe(2);
    }
  });

  it("empty content is an invalid action, noted in the row", async () => {
    const s = await teacher({ faults: "empty:0.3" });
    const { rows } = await run(policyFor(s.url));
    const bad = rows.filter((r) => r.error?.includes("the model returned empty content"));
    expect(bad.length).toBeGreaterThan(0);
    for (const r of bad) expect(r.status).toBe("invalid_action");
  });

  it("tool calls whose arguments are not JSON end the run, graded with the answer [] (MedAgentBench V2)", async () => {
    const s = await teacher({ faults: "badargs:0.3" });
    const { rows } = await run(policyFor(s.url), "tools");
    const ended = rows.filter((r) => r.status === "invalid_action" && /not valid JSON/.test(r.error ?? ""));
    expect(ended.length).toBeGreaterThan(0);
    // Still graded: an action task whose rule is "no POST" passes on "[]" (the original's verdict too).
    for (const r of ended) expect(r.checks.length).toBeGreaterThan(0);
  });

  it("context_length_exceeded ends the episode as context_limit", async () => {
    const s = await teacher({ faults: "context:0.3" });
    const { rows } = await run(policyFor(s.url));
    const cut = rows.filter((r) => r.status === "context_limit");
    expect(cut.length).toBeGreaterThan(0);
    for (const r of cut) expect(r.reward).toBe(0);
  });
});

/** A loopback endpoint answering every request with `status` and the JSON `body`. */
async function answering(status: number, body: unknown): Promise<{ url: string; close: () => void }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(status, { "content-type": "application/json", "x-request-id": "req-1" });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => server.close() };
}

async function firstTurn(url: string, protocol: "text" | "tools" = "text") {
  const policy = createModelPolicy({ model: "m", baseURL: url, apiKey: "x", maxRetries: 0, random: () => 0 });
  const task = tasks[0]!;
  const { observation } = await makeEnv().reset({ task, protocol, maxRounds: 8 });
  return policy.act({ task, protocol, messages: observation, episodeKey: "k" });
}

describe("model policy: error replies of OpenAI-compatible servers in other shapes than OpenAI's", () => {
  const context = "This model's maximum context length is 2048 tokens. However, you requested 2723 tokens (1699 in the messages, 1024 in the completion).";
  it.each([
    // vLLM before 0.10.1: the fields at the top level (vllm-project/vllm#12886)
    ["vLLM < 0.10.1", 400, { object: "error", message: context, type: "BadRequestError", param: null, code: 400 }, "context_limit", "HTTP 400: 400 This model's maximum context length is 2048 tokens."],
    // vLLM >= 0.10.1: OpenAI's shape, with the status repeated as a numeric code (not named twice)
    ["vLLM >= 0.10.1", 400, { error: { message: context, type: "BadRequestError", param: null, code: 400 } }, "context_limit", "HTTP 400: 400 This model's maximum context length"],
    // transformers serve (FastAPI's HTTPException): a field it does not take, e.g. vLLM's return_token_ids
    ["transformers serve", 422, { detail: "Unexpected fields in the request: {'return_token_ids'}" }, "model_error", "HTTP 422: 422 Unexpected fields in the request: {'return_token_ids'}"],
    // FastAPI's request validation
    ["FastAPI validation", 422, { detail: [{ type: "missing", loc: ["body", "messages"], msg: "Field required", input: {} }] }, "model_error", "HTTP 422: 422 body.messages: Field required"],
    // TGI: the message as a string
    ["TGI", 422, { error: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096", error_type: "validation" }, "model_error", "HTTP 422: 422 Input validation error"],
  ] as const)("%s: the endpoint's message is kept (a context-length error ends the episode as context_limit)", async (_name, status, body, ending, text) => {
    const s = await answering(status, body);
    try {
      const err = (await firstTurn(s.url).catch((e: unknown) => e)) as ModelError;
      expect(err).toBeInstanceOf(ModelError);
      expect(err.status).toBe(ending);
      expect(err.message).toContain(text);
      expect(err.message).not.toContain("no body");
    } finally {
      s.close();
    }
  });

  it("a text-protocol turn the server parsed into tool calls (transformers serve parses them even when no tools were offered) says so", async () => {
    const s = await answering(200, {
      id: "req-1",
      object: "chat.completion",
      created: 0,
      model: "m",
      choices: [{ index: 0, finish_reason: "tool_calls", message: { role: "assistant", content: "", tool_calls: [{ id: "req-1_tool_call_0", type: "function", function: { name: "patient_search", arguments: "{}" } }] } }],
      usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
    });
    try {
      const step = (await firstTurn(s.url, "text")) as { turn: unknown; note?: string };
      expect(step.note).toBe("the model answered with tool calls (patient_search), which the text protocol does not read");
      expect(step.turn).toBe("");
    } finally {
      s.close();
    }
  });
});

describe("model policy: errors no retry fixes stop the run at once", () => {
  it("a wrong key (401)", async () => {
    const s = await teacher({ apiKey: "right" });
    const policy = policyFor(s.url, { apiKey: "wrong", apiKeyEnv: "MY_KEY" });
    const { rows, stopped } = await run(policy);
    expect(rows).toHaveLength(0);
    expect(stopped).toEqual({ reason: "fatal", message: expect.stringMatching(/refused the key \(401\): check the key in \$MY_KEY/) });
    expect(policy.stats.requests).toBeLessThanOrEqual(4); // one per worker, not one per task
  });

  it("an unknown model (404)", async () => {
    const s = await teacher();
    const { stopped } = await run(policyFor(s.url, { model: "no-such-model" }));
    expect(stopped?.reason).toBe("fatal");
    expect(stopped?.message).toMatch(/does not know model "no-such-model" \(404\)/);
  });

  it("an unreachable endpoint", async () => {
    const s = await teacher();
    const url = s.url;
    await s.close();
    servers = [];
    const { rows, stopped } = await run(policyFor(url, { maxRetries: 1 }));
    expect(rows).toHaveLength(0);
    expect(stopped?.message).toMatch(/failed every request so far: connection failed/);
  });
});

describe("model policy: the run's signal", () => {
  it("leaves no listener on it after each turn (a long run must not pile them up)", async () => {
    const s = await teacher();
    const policy = policyFor(s.url);
    const controller = new AbortController();
    const task = tasks[0]!;
    const env = makeEnv();
    const { observation } = await env.reset({ task, protocol: "text", maxRounds: 8 });
    for (let i = 0; i < 3; i++) await policy.act({ task, protocol: "text", messages: [...observation], signal: controller.signal, episodeKey: `k/${i}` });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    for (let i = 3; i < 6; i++) await policy.act({ task, protocol: "text", messages: [...observation], signal: controller.signal, episodeKey: `k/${i}` });
    expect(policy.stats.succeeded).toBe(6);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("aborting it ends a request in flight", async () => {
    const s = await teacher({ latencyMs: 60_000 });
    const policy = policyFor(s.url);
    const controller = new AbortController();
    const task = tasks[0]!;
    const { observation } = await makeEnv().reset({ task, protocol: "text", maxRounds: 8 });
    const turn = policy.act({ task, protocol: "text", messages: observation, signal: controller.signal, episodeKey: "k" });
    await expect.poll(() => policy.stats.requests).toBe(1);
    controller.abort();
    await expect(turn).rejects.toBeInstanceOf(RunAborted);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});
