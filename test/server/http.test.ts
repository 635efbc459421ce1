import msgpack from "msgpack-lite";
import { afterEach, describe, expect, it } from "vitest";
import { createRewardServer, type RewardServer, type RewardServerOptions } from "../../env/server/index.ts";
import { fixtureBackend, fixtureTasks } from "./fixture-backend.ts";

let running: RewardServer[] = [];
afterEach(async () => {
  await Promise.all(running.map((s) => s.close()));
  running = [];
});

async function start(options: Partial<RewardServerOptions> = {}) {
  const backend = fixtureBackend();
  const server = createRewardServer({ backend, ...options });
  running.push(server);
  const url = await server.listen(0);
  return { server, url, backend };
}

async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, {
    method,
    headers: body === undefined ? headers : { "Content-Type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

describe("reward server: episodes over JSON", () => {
  it("opens an episode, steps it to FINISH with reward 1, then refuses further steps with 409", async () => {
    const { url } = await start();
    const task = fixtureTasks[0]!;
    const created = await call(url, "POST", "/v1/episodes", { task_id: task.id });
    expect(created.status).toBe(201);
    expect(created.json.episode_id).toMatch(/^r0-/);
    expect(created.json.observation).toEqual([{ role: "user", content: `Question: ${task.instruction}` }]);
    expect(created.json.info).toMatchObject({ taskId: task.id, status: "running" });
    const id = created.json.episode_id;

    const get = await call(url, "POST", `/v1/episodes/${id}/step`, { action: "GET http://x/fhir/Patient?name=a" });
    expect(get.status).toBe(200);
    expect(get.json).toMatchObject({ reward: 0, terminated: false, truncated: false });
    expect(get.json.observation[0].content).toContain("Here is the response from the GET request");

    const fin = await call(url, "POST", `/v1/episodes/${id}/step`, { action: `FINISH(${JSON.stringify(task.sol)})` });
    expect(fin.json).toMatchObject({ reward: 1, terminated: true, truncated: false, info: { status: "completed", rounds: 2 } });

    const again = await call(url, "POST", `/v1/episodes/${id}/step`, { action: "FINISH([])" });
    expect(again.status).toBe(409);
    expect(again.json.error).toContain("finished");

    const state = await call(url, "GET", `/v1/episodes/${id}?messages=1`);
    expect(state.json).toMatchObject({ episode_id: id, task_id: task.id, steps: 2, done: true, protocol: "text" });
    expect(state.json.messages).toHaveLength(4);

    expect((await call(url, "DELETE", `/v1/episodes/${id}`)).json).toEqual({ episode_id: id, deleted: true });
    expect((await call(url, "GET", `/v1/episodes/${id}`)).status).toBe(404);
    expect((await call(url, "DELETE", `/v1/episodes/${id}`)).status).toBe(404);
  });

  it("accepts an inline task and the tool protocol with an assistant message", async () => {
    const { url } = await start();
    const task = { id: "inline-1", suite: "mab-v2", type: "task2", instruction: "Inline?", sol: [7] };
    const created = await call(url, "POST", "/v1/episodes", { task, protocol: "tools", max_rounds: 3 });
    expect(created.status).toBe(201);
    expect(created.json.tools).toHaveLength(1);
    const message = {
      role: "assistant",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "fhir_patient_search", arguments: "{}" } },
        { id: "c2", type: "function", function: { name: "finish", arguments: '{"value":[7]}' } },
      ],
    };
    const r = await call(url, "POST", `/v1/episodes/${created.json.episode_id}/step`, { message });
    expect(r.status).toBe(200);
    expect(r.json.observation).toEqual([{ role: "tool", tool_call_id: "c1", content: '{"called":"fhir_patient_search"}' }]);
    expect(r.json).toMatchObject({ reward: 1, terminated: true });
  });

  it("answers a body nested 5,000 deep with 400 naming the nesting limit (JSON and MessagePack)", async () => {
    const { url } = await start();
    const deep = `{"task_id":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    const json = await call(url, "POST", "/v1/episodes", deep);
    expect(json.status).toBe(400);
    expect(json.text).toContain("nested deeper than 100 levels of objects and arrays (the limit)");
    let value: unknown = [];
    for (let i = 0; i < 500; i++) value = [value]; // the encoder itself recurses
    const packed = await fetch(url + "/v1/episodes", { method: "POST", headers: { "Content-Type": "application/msgpack", Accept: "application/json" }, body: new Uint8Array(msgpack.encode({ task_id: value })) });
    expect(packed.status).toBe(400);
    expect((await call(url, "GET", "/healthz")).status).toBe(200);
  });

  it("truncates at max_rounds", async () => {
    const { url } = await start();
    const id = (await call(url, "POST", "/v1/episodes", { task_id: fixtureTasks[1]!.id, max_rounds: 2 })).json.episode_id;
    await call(url, "POST", `/v1/episodes/${id}/step`, { action: "GET a" });
    const last = await call(url, "POST", `/v1/episodes/${id}/step`, { action: "GET b" });
    expect(last.json).toMatchObject({ terminated: false, truncated: true, info: { status: "limit_reached" } });
    expect((await call(url, "POST", `/v1/episodes/${id}/step`, { action: "GET c" })).status).toBe(409);
  });

  it("runs concurrent steps of one episode one after another", async () => {
    const { url } = await start();
    const id = (await call(url, "POST", "/v1/episodes", { task_id: fixtureTasks[0]!.id, max_rounds: 50 })).json.episode_id;
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => call(url, "POST", `/v1/episodes/${id}/step`, { action: `GET n${i}` })));
    expect(replies.map((r) => r.status)).toEqual(new Array(20).fill(200));
    expect(replies.map((r) => r.json.info.rounds).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it("replays and grades a transcript with /v1/score", async () => {
    const { url, server } = await start();
    const task = fixtureTasks[2]!;
    const messages = [
      { role: "user", content: "prompt (ignored: the server renders its own)" },
      { role: "assistant", content: "GET http://x/fhir/Observation?code=A" },
      { role: "user", content: "whatever the trainer saw" },
      { role: "assistant", content: `FINISH(${JSON.stringify(task.sol)})` },
      { role: "assistant", content: "FINISH([\"late\"])" },
    ];
    const r = await call(url, "POST", "/v1/score", { task_id: task.id, messages, return_messages: true });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ reward: 1, terminated: true, replayed_turns: 2, ignored_turns: 1, info: { status: "completed" } });
    expect(r.json.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const wrong = await call(url, "POST", "/v1/score", { task_id: task.id, messages: [{ role: "assistant", content: "FINISH([1])" }] });
    expect(wrong.json.reward).toBe(0);
    expect(server.registry.size).toBe(0);
  });

  it("lists tasks with filters and paging, and publishes the API JSON Schema", async () => {
    const { url } = await start();
    const all = await call(url, "GET", "/v1/tasks");
    expect(all.json.total).toBe(fixtureTasks.length);
    const v2 = await call(url, "GET", "/v1/tasks?suite=mab-v2&limit=2&offset=1");
    expect(v2.json.total).toBe(3);
    expect(v2.json.tasks.map((t: { id: string }) => t.id)).toEqual([fixtureTasks[4]!.id, fixtureTasks[5]!.id]);
    expect((await call(url, "GET", "/v1/tasks?limit=zero")).status).toBe(400);
    const schema = await call(url, "GET", "/v1/schema");
    expect(schema.json.CreateEpisodeRequest.properties).toHaveProperty("task_id");
    expect(schema.json.StepRequest.properties).toHaveProperty("action");
    expect(schema.json.StepResponse.required).toEqual(expect.arrayContaining(["observation", "reward", "terminated", "truncated", "info"]));
  });
});

describe("reward server: MessagePack", () => {
  it("decodes MessagePack bodies and answers in MessagePack when asked", async () => {
    const { url } = await start();
    const res = await fetch(`${url}/v1/episodes`, {
      method: "POST",
      headers: { "Content-Type": "application/msgpack", Accept: "application/msgpack" },
      body: new Uint8Array(msgpack.encode({ task_id: fixtureTasks[0]!.id })),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/msgpack");
    const created = msgpack.decode(Buffer.from(await res.arrayBuffer()));
    expect(created.episode_id).toMatch(/^r0-/);
    expect("tools" in created).toBe(false);
    const step = await fetch(`${url}/v1/episodes/${created.episode_id}/step`, {
      method: "POST",
      headers: { "Content-Type": "application/x-msgpack" },
      body: new Uint8Array(msgpack.encode({ action: `FINISH(${JSON.stringify(fixtureTasks[0]!.sol)})` })),
    });
    expect(step.headers.get("content-type")).toBe("application/msgpack");
    expect(msgpack.decode(Buffer.from(await step.arrayBuffer()))).toMatchObject({ reward: 1, terminated: true });
  });

  it("answers undecodable MessagePack with 400", async () => {
    const { url } = await start();
    for (const bytes of [[0xc1], [0x92, 0x01], [0x81, 0xa1, 0x61, 0x01, 0x05]]) {
      const res = await fetch(`${url}/v1/episodes`, { method: "POST", headers: { "Content-Type": "application/msgpack", Accept: "application/json" }, body: new Uint8Array(bytes) });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toContain("not valid MessagePack");
    }
  });
});

describe("reward server: bad input and limits", () => {
  it("names the bad field in 400s", async () => {
    const { url } = await start();
    const cases: Array<[unknown, string]> = [
      [{}, "task_id"],
      [{ task_id: fixtureTasks[0]!.id, protocol: "smoke" }, "protocol"],
      [{ task_id: fixtureTasks[0]!.id, max_rounds: 0 }, "max_rounds"],
      [{ task_id: fixtureTasks[0]!.id, max_round: 3 }, "max_round"],
      [{ task_id: "nope" }, "task_id"],
      [{ task: { id: "x", suite: "mab-v9", type: "task1", instruction: "" } }, "task.suite"],
      [[1, 2], "body"],
    ];
    for (const [body, field] of cases) {
      const r = await call(url, "POST", "/v1/episodes", body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.field, JSON.stringify(body)).toBe(field);
      expect(r.json.error).toContain(field === "body" ? "body" : field);
    }
    expect((await call(url, "POST", "/v1/episodes", "{not json")).json.error).toContain("not valid JSON");
    const id = (await call(url, "POST", "/v1/episodes", { task_id: fixtureTasks[0]!.id })).json.episode_id;
    expect((await call(url, "POST", `/v1/episodes/${id}/step`, { action: 5 })).json.field).toBe("action");
    expect((await call(url, "POST", `/v1/episodes/${id}/step`, { message: { role: "user", content: "hi" } })).json.field).toBe("message.role");
    expect((await call(url, "POST", `/v1/episodes/${id}/step`, { action: "x", message: { role: "assistant" } })).status).toBe(400);
    expect((await call(url, "POST", "/v1/score", { task_id: fixtureTasks[0]!.id, messages: [{ role: "user", content: "x" }] })).json.field).toBe("messages");
    expect((await call(url, "POST", "/v1/episodes", "<xml/>", { "Content-Type": "text/xml" })).status).toBe(415);
  });

  it("answers unknown episodes and routes with 404, other replicas' ids by name, wrong methods with 405", async () => {
    const { url } = await start({ replicaId: "east1" });
    expect((await call(url, "POST", "/v1/episodes/east1-nope/step", { action: "x" })).status).toBe(404);
    const foreign = await call(url, "GET", "/v1/episodes/west2-0f8e2c1a-9b7d-4e3f-a1b2-c3d4e5f60718");
    expect(foreign.status).toBe(404);
    expect(foreign.json.error).toContain('replica "west2"');
    expect((await call(url, "GET", "/v2/nothing")).status).toBe(404);
    const wrong = await call(url, "PUT", "/v1/episodes", {});
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
    expect((await call(url, "GET", "/state?episode_id=east1-nope")).status).toBe(404);
  });

  it("rejects oversized bodies with 413 and keeps serving", async () => {
    const { url } = await start({ maxBodyBytes: 1024 });
    const big = await call(url, "POST", "/v1/episodes", { task_id: fixtureTasks[0]!.id, pad: "x".repeat(5000) });
    expect(big.status).toBe(413);
    expect(big.json.error).toContain("1024");
    expect((await call(url, "POST", "/v1/episodes", { task_id: fixtureTasks[0]!.id })).status).toBe(201);
  });

  it("requires the bearer token except on /healthz", async () => {
    const { url } = await start({ token: "s3cret" });
    expect((await call(url, "GET", "/healthz")).status).toBe(200);
    const none = await call(url, "GET", "/v1/tasks");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect((await call(url, "GET", "/v1/tasks", undefined, { Authorization: "Bearer wrong" })).status).toBe(401);
    expect((await call(url, "GET", "/metrics", undefined, { Authorization: "Bearer s3cret" })).status).toBe(200);
    expect((await call(url, "POST", "/v1/episodes", { task_id: fixtureTasks[0]!.id }, { Authorization: "bearer s3cret" })).status).toBe(201);
  });

  it("limits open episodes: evicts finished ones first, then answers 503", async () => {
    const { url, backend } = await start({ maxEpisodes: 2 });
    const open = async () => call(url, "POST", "/v1/episodes", { task_id: fixtureTasks[0]!.id });
    const a = (await open()).json.episode_id;
    await open();
    const full = await open();
    expect(full.status).toBe(503);
    expect(full.headers.get("retry-after")).toBe("1");
    await call(url, "POST", `/v1/episodes/${a}/step`, { action: "FINISH([])" });
    expect((await open()).status).toBe(201);
    expect((await call(url, "GET", `/v1/episodes/${a}`)).status).toBe(404);
    await new Promise((r) => setImmediate(r));
    expect(backend.closed).toBe(1);
  });

  it("evicts idle episodes after the TTL and closes their env", async () => {
    const { url, server, backend } = await start({ idleTtlMs: 40 });
    const id = (await call(url, "POST", "/v1/episodes", { task_id: fixtureTasks[0]!.id })).json.episode_id;
    await new Promise((r) => setTimeout(r, 150));
    server.registry.sweep();
    expect((await call(url, "POST", `/v1/episodes/${id}/step`, { action: "GET x" })).status).toBe(404);
    expect(server.metrics.episodesEvicted).toBe(1);
    expect(backend.closed).toBe(1);
  });

  it("drops finished episodes after the finished TTL while running ones stay", async () => {
    const { url, server } = await start({ finishedTtlMs: 40, idleTtlMs: 0 });
    const done = (await call(url, "POST", "/v1/episodes", { task_id: fixtureTasks[0]!.id })).json.episode_id;
    const running = (await call(url, "POST", "/v1/episodes", { task_id: fixtureTasks[0]!.id })).json.episode_id;
    await call(url, "POST", `/v1/episodes/${done}/step`, { action: "FINISH([])" });
    await new Promise((r) => setTimeout(r, 150));
    server.registry.sweep();
    expect((await call(url, "GET", `/v1/episodes/${done}`)).status).toBe(404);
    expect((await call(url, "GET", `/v1/episodes/${running}`)).status).toBe(200);
  });

  it("answers 500 when the env throws, closes that episode, and stays up", async () => {
    const { url } = await start();
    const id = (await call(url, "POST", "/v1/episodes", { task_id: fixtureTasks[0]!.id })).json.episode_id;
    const boom = await call(url, "POST", `/v1/episodes/${id}/step`, { action: "EXPLODE" });
    expect(boom.status).toBe(500);
    expect(boom.json.error).toContain("the fixture exploded");
    expect((await call(url, "POST", `/v1/episodes/${id}/step`, { action: "GET x" })).status).toBe(409);
    const refused = await call(url, "POST", "/v1/episodes", { task: { id: "r", suite: "mab-v1", type: "task1", instruction: "REFUSE" } });
    expect(refused.status).toBe(400);
    expect(refused.json.field).toBe("task");
    expect((await call(url, "GET", "/healthz")).json.ok).toBe(true);
  });
});

describe("reward server: metrics", () => {
  it("exports episodes, steps, rewards and a latency histogram in Prometheus text", async () => {
    const { url } = await start();
    const task = fixtureTasks[0]!;
    const id = (await call(url, "POST", "/v1/episodes", { task_id: task.id })).json.episode_id;
    await call(url, "POST", "/v1/episodes", { task_id: task.id });
    await call(url, "POST", `/v1/episodes/${id}/step`, { action: "GET x" });
    await call(url, "POST", `/v1/episodes/${id}/step`, { action: `FINISH(${JSON.stringify(task.sol)})` });
    const m = await call(url, "GET", "/metrics");
    expect(m.headers.get("content-type")).toContain("text/plain");
    const value = (line: string) => Number(m.text.split("\n").find((l) => l.startsWith(`${line} `))?.slice(line.length + 1));
    expect(value("ehrgym_episodes_open")).toBe(1);
    expect(value("ehrgym_episodes_retained")).toBe(1);
    expect(value("ehrgym_episodes_started_total")).toBe(2);
    expect(value("ehrgym_steps_total")).toBe(2);
    expect(value('ehrgym_rewards_total{reward="1"}')).toBe(1);
    expect(value('ehrgym_episodes_finished_total{status="completed"}')).toBe(1);
    expect(value('ehrgym_step_latency_seconds_bucket{le="+Inf"}')).toBe(2);
    expect(value("ehrgym_step_latency_seconds_count")).toBe(2);
    expect(value('ehrgym_http_requests_total{route="POST /v1/episodes/:id/step",status="200"}')).toBe(2);
    expect(m.text).toContain("# TYPE ehrgym_step_latency_seconds histogram");
  });
});
