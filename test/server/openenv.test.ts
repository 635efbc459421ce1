// OpenEnv's contract on the reward server: the HTTP routes openenv validate reads, /reset /step
// /state without a session (an episode only when the request names it), and /ws (one episode per connection), through the `ws` client.
import { afterEach, describe, expect, it } from "vitest";
import { createRewardServer, type RewardServer, type RewardServerOptions } from "../../env/server/index.ts";
import { fixtureBackend, fixtureTasks } from "./fixture-backend.ts";
import { wsSession } from "./ws-session.ts";

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

const socket = wsSession;

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

  it("/reset without an episode id keeps nothing; with one, /step and /state reach that episode only", async () => {
    const { server, url } = await start();
    const task = fixtureTasks[4]!;
    const preview = await call(url, "POST", "/reset", { seed: 4 });
    expect(preview.json).toMatchObject({ reward: null, done: false, observation: { task_id: task.id, episode_id: null } });
    expect(preview.json.observation.messages.at(-1).role).toBe("user");
    expect(server.registry.size).toBe(0);
    expect((await call(url, "GET", "/state")).json).toEqual({ episode_id: null, step_count: 0, task_id: null, protocol: null, done: false, info: {} });
    expect(await call(url, "POST", "/step", { action: { content: "GET x" } })).toMatchObject({ status: 400, json: { field: "episode_id" } });

    const reset = await call(url, "POST", "/reset", { seed: 4, episode_id: "mine-1" });
    expect(reset.json).toMatchObject({ observation: { task_id: task.id, episode_id: "mine-1" } });
    const step = await call(url, "POST", "/step", { action: { content: "GET x" }, episode_id: "mine-1" });
    expect(step.json).toMatchObject({ done: false, observation: { episode_id: "mine-1" } });
    expect((await call(url, "GET", "/state?episode_id=mine-1")).json).toMatchObject({ episode_id: "mine-1", step_count: 1, done: false });
    const header = { "X-Episode-Id": "mine-1" };
    expect((await call(url, "GET", "/state", undefined, header)).json).toMatchObject({ episode_id: "mine-1", step_count: 1 });
    const fin = await call(url, "POST", "/step", { action: finish(task.sol) }, header);
    expect(fin.json).toMatchObject({ done: true, reward: 1 });
    expect(await call(url, "POST", "/step", { action: { content: 3 }, episode_id: "mine-1" })).toMatchObject({ status: 400, json: { field: "action.content" } });
    expect(await call(url, "GET", "/state?episode_id=nobody")).toMatchObject({ status: 404, json: { code: "unknown_episode" } });
    expect(await call(url, "POST", "/reset", { seed: 1, episode_id: "mine-1" })).toMatchObject({ status: 409, json: { code: "episode_exists" } });
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
    // /metrics counts each message by type and outcome, and the open sessions.
    const metrics = await (await fetch(url + "/metrics", { headers: { Authorization: "Bearer t" } })).text();
    for (const line of [
      'ehrgym_ws_messages_total{type="reset",outcome="ok"} 2',
      'ehrgym_ws_messages_total{type="state",outcome="ok"} 1',
      'ehrgym_ws_messages_total{type="step",outcome="ok"} 1',
      'ehrgym_ws_messages_total{type="step",outcome="EXECUTION_ERROR"} 1',
      'ehrgym_ws_messages_total{type="invalid",outcome="UNKNOWN_TYPE"} 1',
      'ehrgym_ws_messages_total{type="step",outcome="VALIDATION_ERROR"} 1',
      'ehrgym_ws_messages_total{type="close",outcome="ok"} 1',
      'ehrgym_ws_message_duration_seconds_count{type="reset"} 2',
      "ehrgym_ws_sessions_open 0",
    ]) expect(metrics).toContain(line);
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
