// OpenEnv's contract on the reward server: the HTTP routes openenv validate reads, the server-wide
// /reset /step /state session, and /ws (one episode per connection), through the `ws` client.
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createRewardServer, type RewardServer, type RewardServerOptions } from "../../env/server/index.ts";
import { fixtureBackend, fixtureTasks } from "./fixture-backend.ts";

let running: RewardServer[] = [];
afterEach(async () => {
  await Promise.all(running.map((s) => s.close()));
  running = [];
});

async function start(options: Partial<RewardServerOptions> = {}) {
  const server = createRewardServer({ backend: fixtureBackend(), ...options });
  running.push(server);
  return { server, url: await server.listen(0) };
}

async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, { method, headers: body === undefined ? headers : { "Content-Type": "application/json", ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as any };
}

/** A /ws connection whose replies are read in order. */
async function socket(url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url.replace("http://", "ws://") + "/ws", { headers });
  const replies: any[] = [];
  const waiting: ((v: any) => void)[] = [];
  ws.on("message", (data) => {
    const msg = JSON.parse(data.toString());
    const w = waiting.shift();
    if (w) w(msg);
    else replies.push(msg);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const ask = (msg: unknown) => {
    ws.send(JSON.stringify(msg));
    return new Promise<any>((resolve) => (replies.length ? resolve(replies.shift()) : waiting.push(resolve)));
  };
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  return { ws, ask, closed };
}

const finish = (sol: unknown) => ({ content: `FINISH(${JSON.stringify(sol)})` });

describe("OpenEnv HTTP routes", () => {
  it("serves what openenv validate reads, without the token", async () => {
    const { url } = await start({ token: "t" });
    expect((await call(url, "GET", "/health")).json).toEqual({ status: "healthy" });
    expect((await call(url, "GET", "/metadata")).json).toMatchObject({ name: "ehrgym", description: expect.any(String) });
    const schema = (await call(url, "GET", "/schema")).json;
    expect(schema.action.properties).toHaveProperty("tool_calls");
    expect(schema.observation.required).toEqual(expect.arrayContaining(["episode_id", "messages"]));
    expect(schema.state.properties).toHaveProperty("step_count");
    const openapi = (await call(url, "GET", "/openapi.json")).json;
    expect(openapi.info.version).toEqual(expect.any(String));
    expect(Object.keys(openapi.paths)).toEqual(expect.arrayContaining(["/reset", "/step", "/state", "/v1/episodes/{id}/step"]));
    expect((await call(url, "POST", "/mcp", {})).json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    expect((await call(url, "POST", "/reset", {})).status).toBe(401);
  });

  it("plays the server-wide session: /reset picks by seed, /step and /state follow it", async () => {
    const { url } = await start();
    const task = fixtureTasks[4]!;
    const reset = await call(url, "POST", "/reset", { seed: 4 });
    expect(reset.json).toMatchObject({ reward: null, done: false, observation: { task_id: task.id, episode_id: expect.stringMatching(/^r0-/) } });
    expect(reset.json.observation.messages.at(-1).role).toBe("user");
    const step = await call(url, "POST", "/step", { action: { content: "GET x" } });
    expect(step.json).toMatchObject({ done: false, observation: { episode_id: reset.json.observation.episode_id } });
    expect((await call(url, "GET", "/state")).json).toMatchObject({ episode_id: reset.json.observation.episode_id, step_count: 1, done: false });
    const fin = await call(url, "POST", "/step", { action: finish(task.sol) });
    expect(fin.json).toMatchObject({ done: true, reward: 1 });
    const bad = await call(url, "POST", "/step", { action: { content: 3 } });
    expect(bad).toMatchObject({ status: 400, json: { field: "action.content" } });
  });
});

describe("OpenEnv /ws session", () => {
  it("one episode per connection: reset, step, state, close deletes it", async () => {
    const { server, url } = await start({ token: "t" });
    const { ws, ask, closed } = await socket(url, { Authorization: "Bearer t" });
    const task = fixtureTasks[0]!;
    const reset = await ask({ type: "reset", data: { task_id: task.id } });
    expect(reset).toMatchObject({ type: "observation", data: { reward: null, done: false, observation: { task_id: task.id } } });
    const again = await ask({ type: "reset", data: { task_id: task.id } });
    expect(server.registry.open).toBe(1); // the second reset replaced the first episode
    const state = await ask({ type: "state" });
    expect(state).toMatchObject({ type: "state", data: { episode_id: again.data.observation.episode_id, step_count: 0 } });
    expect(await ask({ type: "step", data: finish(task.sol) })).toMatchObject({ type: "observation", data: { done: true, reward: 1 } });
    expect(await ask({ type: "step", data: finish(task.sol) })).toMatchObject({ type: "error", data: { status: 409 } });
    expect(await ask({ type: "dance" })).toMatchObject({ type: "error", data: { code: "UNKNOWN_TYPE" } });
    expect(await ask({ type: "step", data: { content: 1 } })).toMatchObject({ type: "error", data: { code: "VALIDATION_ERROR", field: "content" } });
    ws.send(JSON.stringify({ type: "close" }));
    expect(await closed).toBe(1000);
    await expect.poll(() => server.registry.open).toBe(0);
  });

  it("deletes the episode when the connection drops, and refuses a wrong token", async () => {
    const { server, url } = await start({ token: "t" });
    const { ws, ask } = await socket(url, { Authorization: "Bearer t" });
    await ask({ type: "reset", data: { seed: 1 } });
    expect(server.registry.open).toBe(1);
    ws.terminate();
    await expect.poll(() => server.registry.open).toBe(0);
    await expect(socket(url, { Authorization: "Bearer nope" })).rejects.toThrow(/401/);
  });
});
