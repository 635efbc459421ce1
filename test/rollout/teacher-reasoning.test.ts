// The stand-in's `--reasoning think|field` through the real openai client over loopback HTTP: the thought
// comes back as vLLM returns it (inline <think> in content, or the `reasoning` field), the episodes reach
// the verdicts they reach without reasoning, rows keep each turn's reasoning apart from its action, and
// `--reasoning-history` decides whether earlier thoughts go back to the model.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedBackend, EnvConfig, MedAgentEnv, type Message } from "../../env/core/index.ts";
import type { Protocol } from "../../env/protocol/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { createModelPolicy, EpisodeRow, runEpisodes, type EpisodeRow as Row } from "../../rollout/index.ts";
import { startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { chatBody, client, firstRequest, world } from "./teacher-world.ts";

let config: EnvConfig;
let tasks: Task[];
const servers: TeacherServer[] = [];
async function serve(reasoning?: "think" | "field", errorRate = 0): Promise<TeacherServer> {
  const s = await startTeacherServer({ tasks, seed: 11, errorRate, ...(reasoning ? { reasoning } : {}) });
  servers.push(s);
  return s;
}

beforeAll(() => {
  ({ config, tasks } = world({ patients: 8, seed: 21, perType: 1 }));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function rows(url: string, protocol: Protocol, env: EnvConfig = config, reasoningHistory: "drop" | "keep" = "drop"): Promise<Row[]> {
  const policy = createModelPolicy({ model: "ehrgym-stand-in", baseURL: url, apiKey: "x", reasoningHistory });
  const { rows } = await runEpisodes({ makeEnv: () => new MedAgentEnv(env), policy, tasks, protocol, maxRounds: 8, concurrency: 4, progress: false });
  return [...rows].sort((a, b) => a.task_id.localeCompare(b.task_id));
}

const verdicts = (rs: Row[]) => rs.map((r) => `${r.task_id} ${r.status} ${r.reward} ${r.result ?? ""}`);
const actions = (rs: Row[]) => rs.map((r) => r.messages.filter((m) => m.role === "assistant").map((m) => ({ content: m.content, tool_calls: m.tool_calls })));

describe("teacher serve --reasoning: what a client sees", () => {
  it.each(["text", "tools"] as const)("think: a leading <think> block in content, then the turn it plays without reasoning (%s)", async (protocol) => {
    const [plain, think] = [await serve(), await serve("think")];
    const body = chatBody(await firstRequest(config, tasks[0]!, protocol));
    const a = await client(plain.url).chat.completions.create(body);
    const b = await client(think.url).chat.completions.create(body);
    const content = b.choices[0]!.message.content!;
    expect(content).toMatch(/^<think>\nThe task \(.+\) asks: [\s\S]+\n<\/think>\n\n/);
    expect(content.slice(content.indexOf("</think>\n\n") + 10)).toBe(a.choices[0]!.message.content ?? "");
    expect(b.choices[0]!.message.tool_calls).toEqual(a.choices[0]!.message.tool_calls);
    expect(b.usage!.completion_tokens).toBeGreaterThan(a.usage!.completion_tokens);
  });

  it.each(["text", "tools"] as const)("field: the thought in the message's `reasoning` field, the content as without reasoning (%s)", async (protocol) => {
    const [plain, field] = [await serve(), await serve("field")];
    const body = chatBody(await firstRequest(config, tasks[0]!, protocol));
    const a = await client(plain.url).chat.completions.create(body);
    const b = await client(field.url).chat.completions.create(body);
    const message = b.choices[0]!.message as typeof b.choices[0]["message"] & { reasoning?: string };
    expect(message.reasoning).toMatch(/^The task \(.+\) asks: /);
    expect(message.content).toBe(a.choices[0]!.message.content);
    expect(message.tool_calls).toEqual(a.choices[0]!.message.tool_calls);
    // Streaming: the thought arrives as a `reasoning` delta, as vLLM streams it.
    const stream = await client(field.url).chat.completions.create({ ...body, stream: true });
    let streamed = "";
    for await (const chunk of stream) streamed += (chunk.choices[0]?.delta as { reasoning?: string } | undefined)?.reasoning ?? "";
    expect(streamed).toBe(message.reasoning);
  });
});

describe("episodes against a thinking stand-in", () => {
  it.each([
    ["think", "text"],
    ["field", "text"],
    ["think", "tools"],
    ["field", "tools"],
  ] as const)("--reasoning %s, %s protocol: the verdicts and actions of the stand-in without reasoning, each turn's thought kept apart", async (mode, protocol) => {
    const plain = await rows((await serve(undefined, 0.35)).url, protocol);
    const thinking = await rows((await serve(mode, 0.35)).url, protocol);
    for (const r of thinking) EpisodeRow.parse(r);
    expect(verdicts(thinking)).toEqual(verdicts(plain));
    expect(verdicts(plain).some((v) => / 1 /.test(v))).toBe(true);
    expect(actions(thinking)).toEqual(actions(plain));
    for (const r of thinking) {
      for (const m of r.messages.filter((x) => x.role === "assistant")) {
        expect(m.reasoning_content).toMatch(mode === "think" ? /^\nThe task \(.+\) asks: [^]+\n$/ : /^The task \(.+\) asks: /);
        expect(m.content ?? "").not.toContain("<think>");
        expect(m).not.toHaveProperty("reasoning");
      }
    }
  });

  it("--think-blocks official: a text turn opening with <think> is invalid, as the official harness reads it", async () => {
    const official = new EnvConfig({ backend: config.backend as EmbeddedBackend, thinkBlocks: "official" });
    const rs = await rows((await serve("think")).url, "text", official);
    expect(rs.every((r) => r.status === "invalid_action" && r.reward === 0 && r.rounds === 1)).toBe(true);
  });
});

describe("--reasoning-history", () => {
  let proxy: Server;
  let proxyUrl: string;
  const sent: { messages: Message[] }[] = [];
  beforeAll(async () => {
    const upstream = await serve("field");
    proxy = createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", async () => {
        sent.push(JSON.parse(body) as { messages: Message[] });
        const r = await fetch(upstream.url.replace(/\/v1$/, "") + req.url, { method: "POST", headers: { "content-type": "application/json" }, body });
        res.writeHead(r.status, { "content-type": "application/json" });
        res.end(await r.text());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => proxy.close(() => r())));

  it.each(["drop", "keep"] as const)("%s: earlier turns' reasoning %s the requests", async (history) => {
    sent.length = 0;
    const rs = await rows(proxyUrl, "text", config, history);
    expect(rs.every((r) => r.reward === 1)).toBe(true);
    const earlier = sent.flatMap((b) => b.messages.filter((m) => m.role === "assistant"));
    expect(earlier.length).toBeGreaterThan(0);
    for (const m of earlier) {
      expect(m).not.toHaveProperty("reasoning");
      if (history === "drop") expect(m).not.toHaveProperty("reasoning_content");
      else expect(m.reasoning_content).toMatch(/^The task \(.+\) asks: /);
    }
  });
});
