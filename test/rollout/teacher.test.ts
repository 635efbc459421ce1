// The stand-in teacher (`ehrgym teacher serve`) through the real openai client over loopback HTTP:
// /v1/models, both protocols, task recognition, usage, retries, determinism and error replies.
import { countTokens } from "gpt-tokenizer";
import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvConfig, Message } from "../../env/core/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { play } from "./world.ts";
import { about, chatBody, client, environment, firstRequest, MODEL, world } from "./teacher-world.ts";

let config: EnvConfig;
let tasks: Task[];
const servers: TeacherServer[] = [];
async function serve(options: Partial<Parameters<typeof startTeacherServer>[0]> = {}): Promise<TeacherServer> {
  const s = await startTeacherServer({ tasks, seed: 7, ...options });
  servers.push(s);
  return s;
}

beforeAll(async () => {
  ({ config, tasks } = world({ patients: 8, seed: 21, perType: 2 }));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

const tokens = (m: { content?: string | null; tool_calls?: { function: { name: string; arguments: string } }[] }) =>
  (m.content ? countTokens(m.content) : 0) + (m.tool_calls ?? []).reduce((n, c) => n + countTokens(c.function.name) + countTokens(c.function.arguments), 0);

describe("teacher serve: what a client sees", () => {
  it("lists its models as an ehrgym stand-in, not a model", async () => {
    const s = await serve({ models: ["ehrgym-stand-in", "teacher-b"] });
    const list = await client(s.url).models.list();
    expect(list.data.map((m) => m.id)).toEqual(["ehrgym-stand-in", "teacher-b"]);
    for (const m of list.data) {
      expect(m.object).toBe("model");
      expect(m.owned_by).toMatch(/ehrgym stand-in/);
      expect(m.owned_by).toMatch(/not a model/);
    }
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  for (const protocol of ["text", "tools"] as const) {
    it(`with --error-rate 0 plays exactly the scripted expert (${protocol} protocol)`, async () => {
      const s = await serve({ errorRate: 0 });
      const env = environment(config, protocol);
      const c = client(s.url);
      const results = await Promise.all(tasks.map((t) => env.rollout(c, MODEL, t)));
      const expert = await play(config, tasks, protocol);
      const byId = new Map(expert.map((r) => [`${r.suite}/${r.task_id}`, r]));
      results.forEach((r, i) => {
        const e = byId.get(`${tasks[i]!.suite}/${tasks[i]!.id}`)!;
        expect([r.reward, r.state.status, r.state.rounds], tasks[i]!.id).toEqual([e.reward, e.status, e.rounds]);
      });
      expect(results.filter((r) => r.reward === 1).length).toBeGreaterThan(tasks.length * 0.9);
    });
  }

  it("answers the tool protocol with tool calls: ids, finish_reason tool_calls, JSON arguments", async () => {
    const s = await serve({ errorRate: 0 });
    const req = await firstRequest(config, tasks[0]!, "tools");
    const res = await client(s.url).chat.completions.create(chatBody(req));
    expect(res.object).toBe("chat.completion");
    expect(res.id).toMatch(/^chatcmpl-/);
    expect(res.model).toBe(MODEL);
    const choice = res.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.role).toBe("assistant");
    expect(choice.message.tool_calls!.length).toBeGreaterThan(0);
    for (const call of choice.message.tool_calls!) {
      expect(call.id).toMatch(/^call_\w+$/);
      expect(call.type).toBe("function");
      if (call.type === "function") expect(() => JSON.parse(call.function.arguments)).not.toThrow();
    }
  });

  it("answers the text protocol with the turn as content (finish_reason stop) and an x-request-id header", async () => {
    const s = await serve({ errorRate: 0 });
    const req = await firstRequest(config, tasks[0]!, "text");
    const { data, response } = await client(s.url).chat.completions.create(chatBody(req)).withResponse();
    expect(data.choices[0]!.finish_reason).toBe("stop");
    expect(data.choices[0]!.message.content).toMatch(/^(GET|POST|FINISH\()/);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("reports usage as gpt-tokenizer counts of the messages' text and tool calls", async () => {
    const s = await serve({ errorRate: 0 });
    for (const protocol of ["text", "tools"] as const) {
      const env = environment(config, protocol);
      const state = await env.setupState(tasks[3]!);
      const messages: Message[] = [...state.prompt];
      const c = client(s.url);
      for (let turn = 0; turn < 3 && !state.done; turn++) {
        const res = await c.chat.completions.create(chatBody({ messages, ...(state.tools ? { tools: state.tools } : {}) }));
        const m = res.choices[0]!.message;
        const reply: Message = { role: "assistant", content: m.content ?? null };
        if (m.tool_calls?.length) reply.tool_calls = m.tool_calls.flatMap((t) => (t.type === "function" ? [{ id: t.id, type: "function" as const, function: t.function }] : []));
        const prompt = messages.reduce((n, x) => n + tokens(x), 0);
        expect(prompt).toBeGreaterThan(100);
        expect(res.usage).toEqual({ prompt_tokens: prompt, completion_tokens: tokens(reply), total_tokens: prompt + tokens(reply) });
        messages.push(reply);
        messages.push(...(await env.envResponse(messages, state)).messages);
      }
    }
  });
});

describe("teacher serve: episodes, retries and determinism", () => {
  it("counts samples per prompt; a retried request gets the same reply and moves nothing", async () => {
    const s = await serve({ errorRate: 1 });
    const req = await firstRequest(config, tasks[1]!, "text");
    const c = client(s.url);
    const first = await c.chat.completions.create(chatBody(req));
    const again = await c.chat.completions.create(chatBody(req), { headers: { "X-Stainless-Retry-Count": "1" } });
    expect(again).toEqual(first);
    expect(about(first).sample).toBe(0);
    const second = await c.chat.completions.create(chatBody(req));
    expect(about(second).sample).toBe(1);
    expect(about(second).task_id).toBe(tasks[1]!.id);
  });

  it("replays the reply of a request re-sent with the same Idempotency-Key", async () => {
    const s = await serve({ errorRate: 0.5 });
    const req = await firstRequest(config, tasks[4]!, "tools");
    const c = client(s.url);
    const key = { headers: { "Idempotency-Key": "episode-1-turn-0" } };
    const first = await c.chat.completions.create(chatBody(req), key);
    expect(await c.chat.completions.create(chatBody(req), key)).toEqual(first);
    expect(about(await c.chat.completions.create(chatBody(req), { headers: { "Idempotency-Key": "episode-2-turn-0" } })).sample).toBe(1);
  });

  it("answers a later turn re-sent without the retry header as before, when no other episode waits there", async () => {
    const s = await serve({ errorRate: 0 });
    const c = client(s.url);
    const env = environment(config, "text");
    const task = tasks.find((t) => t.suite === "mab-v1" && t.type === "task5")!;
    const state = await env.setupState(task);
    const messages: Message[] = [...state.prompt];
    const first = await c.chat.completions.create(chatBody({ messages }));
    messages.push({ role: "assistant", content: first.choices[0]!.message.content });
    messages.push(...(await env.envResponse(messages, state)).messages);
    expect(state.done).toBe(false);
    const turn2 = await c.chat.completions.create(chatBody({ messages }));
    const resent = await c.chat.completions.create(chatBody({ messages }));
    expect(resent).toEqual(turn2);
    expect(about(turn2).turn).toBe("expert");
  });

  it("gives the same replies for the same seed and sequence of requests, other replies for another seed", async () => {
    const run = async (seed: number) => {
      const s = await serve({ seed, errorRate: 0.5 });
      const c = client(s.url);
      const out: unknown[] = [];
      for (const protocol of ["text", "tools"] as const) {
        const env = environment(config, protocol);
        for (const task of tasks.filter((_, i) => i % 3 === 0)) {
          for (let sample = 0; sample < 2; sample++) {
            const r = await env.rollout(c, MODEL, task);
            // The environment's replies carry fresh bundle ids and times; the stand-in's turns must match.
            out.push([task.id, r.reward, r.state.status, r.completion.filter((m) => m.role === "assistant")]);
          }
        }
      }
      await s.close();
      return out;
    };
    const a = await run(3);
    expect(await run(3)).toEqual(a);
    expect(await run(4)).not.toEqual(a);
  });

  it("keeps an episode's mistake across its turns: at error rate 1 no episode passes", async () => {
    const s = await serve({ errorRate: 1 });
    const c = client(s.url);
    for (const protocol of ["text", "tools"] as const) {
      const env = environment(config, protocol);
      const results = await Promise.all(tasks.map((t) => env.rollout(c, MODEL, t)));
      const passed = results.filter((r) => r.reward === 1).length;
      // Some mistakes do not change a verdict (a wrong free-text answer where only the orders are graded).
      expect(passed, protocol).toBeLessThan(tasks.length * 0.3);
    }
  });
});

describe("teacher serve: bad requests", () => {
  it("404 model_not_found for an unknown model", async () => {
    const s = await serve();
    const req = await firstRequest(config, tasks[0]!, "text");
    const err = await client(s.url).chat.completions.create(chatBody(req, "gpt-4o")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as APIError).code).toBe("model_not_found");
    expect((err as APIError).message).toContain("gpt-4o");
  });

  it("401 invalid_api_key for a wrong or missing key when it has one", async () => {
    const s = await serve({ apiKey: "right-key" });
    const req = await firstRequest(config, tasks[0]!, "text");
    const err = await client(s.url, { apiKey: "wrong-key" }).chat.completions.create(chatBody(req)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as APIError).code).toBe("invalid_api_key");
    expect((await fetch(`${s.url}/models`)).status).toBe(401);
    const ok = await client(s.url, { apiKey: "right-key" }).chat.completions.create(chatBody(req));
    expect(ok.choices).toHaveLength(1);
  });

  it("400 for a conversation about no task it knows, naming the problem", async () => {
    const s = await serve();
    const err = await client(s.url)
      .chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "What is the capital of France?" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as APIError).message).toMatch(/unrecognised conversation/);
    expect((err as APIError).param).toBe("messages");
  });

  it("stream: true gives the same message as server-sent events (the openai client's stream)", async () => {
    const s = await serve();
    const req = await firstRequest(config, tasks[0]!, "text");
    const whole = await client(s.url).chat.completions.create({ ...chatBody(req), stream: false });
    const stream = await client(s.url).chat.completions.create({ ...chatBody(req), stream: true, stream_options: { include_usage: true } });
    let content = "";
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(content).toBe(whole.choices[0]!.message.content);
    expect(finish).toBe(whole.choices[0]!.finish_reason);
    expect(usage).toEqual(whole.usage);
  });

  it("400 for bodies that fail validation, naming the field", async () => {
    const s = await serve();
    const req = await firstRequest(config, tasks[0]!, "text");
    for (const [body, param] of [
      [{ messages: req.messages }, "model"],
      [{ model: MODEL, messages: [{ role: "robot", content: "x" }] }, "messages.0.role"],
      [{ model: MODEL, messages: [] }, "messages"],
    ] as const) {
      const res = await fetch(`${s.url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(res.status).toBe(400);
      const json = (await res.json()) as { error: { message: string; type: string; param: string; code: unknown } };
      expect(json.error.param).toBe(param);
      expect(json.error.type).toBe("invalid_request_error");
      expect(json.error.message).toContain(param);
    }
    const notJson = await fetch(`${s.url}/chat/completions`, { method: "POST", body: "{" });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { message: string } }).error.message).toMatch(/not valid JSON/);
  });
});
