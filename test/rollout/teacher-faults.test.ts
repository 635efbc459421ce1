// Injected faults of the stand-in teacher, each seen through the real openai client (maxRetries 0:
// every error surfaces with its status), plus a run that survives them through the client's retries.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvConfig } from "../../env/core/index.ts";
import type { Task } from "../../env/tasks/index.ts";
import { parseFaults, replyDelays, startTeacherServer, type TeacherServer } from "../../rollout/teacher/index.ts";
import { chatBody, client, environment, firstRequest, MODEL, world } from "./teacher-world.ts";

let config: EnvConfig;
let tasks: Task[];
const servers: TeacherServer[] = [];
async function serve(faults: string, extra: Partial<Parameters<typeof startTeacherServer>[0]> = {}): Promise<TeacherServer> {
  const s = await startTeacherServer({ tasks, seed: 5, faults, ...extra });
  servers.push(s);
  return s;
}

beforeAll(() => {
  ({ config, tasks } = world({ patients: 8, seed: 31, perType: 1 }));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function failure(s: TeacherServer, protocol: "text" | "tools" = "text", options: Partial<ConstructorParameters<typeof OpenAI>[0]> = {}): Promise<unknown> {
  const req = await firstRequest(config, tasks[2]!, protocol);
  return client(s.url, options).chat.completions.create(chatBody(req)).then(
    (ok) => ok,
    (e: unknown) => e,
  );
}

describe("teacher serve --faults", () => {
  it("429 with Retry-After and OpenAI's rate-limit error body", async () => {
    const err = await failure(await serve("429:1"));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const e = err as APIError;
    expect(e.status).toBe(429);
    expect(e.headers?.get("retry-after")).toBe("1");
    expect(e.code).toBe("rate_limit_exceeded");
    expect(e.type).toBe("requests");
  });

  it("500 as a server error", async () => {
    const err = await failure(await serve("500:1"));
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as APIError).status).toBe(500);
  });

  it("reset drops the connection without a reply", async () => {
    const err = await failure(await serve("reset:1"));
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err).not.toBeInstanceOf(APIConnectionTimeoutError);
  });

  it("slow holds the reply past the client's timeout", async () => {
    const err = await failure(await serve("slow:1", { slowMs: 20_000 }), "text", { timeout: 300 });
    expect(err).toBeInstanceOf(APIConnectionTimeoutError);
  });

  it("context: 400 context_length_exceeded", async () => {
    const err = await failure(await serve("context:1"));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as APIError).code).toBe("context_length_exceeded");
    expect((err as APIError).message).toMatch(/maximum context length/);
  });

  it("empty: a choice with empty content; nochoices: choices []", async () => {
    const empty = (await failure(await serve("empty:1"))) as OpenAI.Chat.ChatCompletion;
    expect(empty.choices).toHaveLength(1);
    expect(empty.choices[0]!.message.content).toBe("");
    expect(empty.choices[0]!.message.tool_calls).toBeUndefined();
    const none = (await failure(await serve("nochoices:1"))) as OpenAI.Chat.ChatCompletion;
    expect(none.choices).toEqual([]);
    expect(none.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it("badargs: a tool call whose arguments are not JSON", async () => {
    const res = (await failure(await serve("badargs:1"), "tools")) as OpenAI.Chat.ChatCompletion;
    const call = res.choices[0]!.message.tool_calls![0]!;
    expect(res.choices[0]!.finish_reason).toBe("tool_calls");
    expect(call.type === "function" && (() => JSON.parse(call.function.arguments))).toThrow();
  });

  it("a faulted request moves no episode: the retry is the episode's first sample", async () => {
    const s = await serve("500:0.5", { errorRate: 0 });
    const req = await firstRequest(config, tasks[2]!, "text");
    const c = client(s.url);
    const samples: (number | null)[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await c.chat.completions.create(chatBody(req)).catch((e: unknown) => e);
      if (!(res instanceof APIError)) samples.push((res as unknown as { ehrgym_stand_in: { sample: number } }).ehrgym_stand_in.sample);
    }
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.length).toBeLessThan(12);
    expect(samples).toEqual(samples.map((_, i) => i));
  });

  it("episodes still finish through the client's own retries of 500s and resets", async () => {
    const s = await serve("500:0.15,reset:0.1", { errorRate: 0 });
    const c = client(s.url, { maxRetries: 8 });
    const env = environment(config, "tools");
    const results = await Promise.all(tasks.slice(0, 8).map((t) => env.rollout(c, MODEL, t)));
    expect(results.map((r) => r.state.status)).toEqual(results.map(() => "completed"));
  });

  it("rejects fault specs that do not parse, naming the problem", () => {
    expect(parseFaults("429:0.05, 500:0.02,reset:0.01")).toEqual({ 429: 0.05, 500: 0.02, reset: 0.01 });
    expect(() => parseFaults("503:0.1")).toThrow(/unknown fault kind "503"/);
    expect(() => parseFaults("429:2")).toThrow(/429: probability/);
    expect(() => parseFaults("429")).toThrow(/kind:probability/);
    expect(() => parseFaults("429:0.6,500:0.6")).toThrow(/more than 1/);
    expect(() => parseFaults("429:0.1,429:0.2")).toThrow(/twice/);
  });
});

describe("teacher serve --latency-ms with --latency-jitter-ms", () => {
  it("spreads reply delays over latency +- jitter, the same for the same seed, never below 0", () => {
    const draws = (latency: number, jitter: number, seed: number) => {
      const next = replyDelays(latency, jitter, seed);
      return Array.from({ length: 2000 }, () => next());
    };
    const a = draws(300, 150, 1);
    expect(draws(300, 150, 1)).toEqual(a);
    expect(draws(300, 150, 2)).not.toEqual(a);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(150);
    expect(Math.max(...a)).toBeLessThanOrEqual(450);
    // uniform: each quarter of the range gets about a quarter of the draws, and the mean stays the latency
    for (let q = 0; q < 4; q++) expect(a.filter((d) => d >= 150 + 75 * q && d < 225 + 75 * q).length).toBeGreaterThan(400);
    expect(a.reduce((s, d) => s + d, 0) / a.length).toBeCloseTo(300, -1);
    expect(draws(300, 0, 1).every((d) => d === 300)).toBe(true);
    expect(Math.min(...draws(10, 50, 3))).toBe(0);
  });
});
