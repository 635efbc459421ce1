// Episodes a load balancer can route: client-chosen ids, X-Episode-Id, unknown_episode, the replica header.
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createRewardServer, type RewardServer } from "../../env/server/index.ts";
import { fixtureBackend, fixtureTasks } from "./fixture-backend.ts";

let running: RewardServer[] = [];
afterEach(async () => {
  await Promise.all(running.map((s) => s.close()));
  running = [];
});

async function start(replicaId: string) {
  const backend = fixtureBackend();
  const server = createRewardServer({ backend, replicaId });
  running.push(server);
  return { server, backend, url: await server.listen(0) };
}

async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, {
    method,
    headers: body === undefined ? headers : { "Content-Type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any, replica: res.headers.get("x-ehrgym-replica") };
}

const task = fixtureTasks[0]!;

describe("routable episodes", () => {
  it("opens an episode under the client's id (body or X-Episode-Id), steps it by header, and says 409 for a held id", async () => {
    const { url } = await start("east1");
    const created = await call(url, "POST", "/v1/episodes", { task_id: task.id, episode_id: "job7:ep-0001" });
    expect(created).toMatchObject({ status: 201, replica: "east1", json: { episode_id: "job7:ep-0001" } });

    const byHeader = await call(url, "POST", "/v1/episodes", { task_id: task.id }, { "X-Episode-Id": "from.header_1" });
    expect(byHeader.json.episode_id).toBe("from.header_1");

    const dup = await call(url, "POST", "/v1/episodes", { task_id: task.id, episode_id: "job7:ep-0001" });
    expect(dup).toMatchObject({ status: 409, json: { code: "episode_exists", field: "episode_id" } });

    const step = await call(url, "POST", "/v1/episodes/job7:ep-0001/step", { action: `FINISH(${JSON.stringify(task.sol)})` }, { "X-Episode-Id": "job7:ep-0001" });
    expect(step).toMatchObject({ status: 200, replica: "east1", json: { reward: 1, terminated: true } });

    // Header and path naming different episodes: the proxy routed by one, the server would act on the other.
    const mismatch = await call(url, "GET", "/v1/episodes/job7:ep-0001", undefined, { "X-Episode-Id": "from.header_1" });
    expect(mismatch).toMatchObject({ status: 400, json: { field: "X-Episode-Id" } });

    // Server-made ids stay as they were.
    const made = await call(url, "POST", "/v1/episodes", { task_id: task.id });
    expect(made.json.episode_id).toMatch(/^east1-[0-9a-f-]{36}$/);
  });

  it("rejects bad chosen ids naming the field, in the body and in the header", async () => {
    const { url, backend } = await start("r0");
    for (const bad of ["", "-lead", "has space", "x".repeat(129), "slash/id", "é"]) {
      const r = await call(url, "POST", "/v1/episodes", { task_id: task.id, episode_id: bad });
      expect(r.status, bad).toBe(400);
      expect(r.json.field).toBe("episode_id");
    }
    const h = await call(url, "POST", "/v1/episodes", { task_id: task.id }, { "X-Episode-Id": "no/slash" });
    expect(h).toMatchObject({ status: 400, json: { field: "X-Episode-Id" } });
    expect(backend.created).toBe(0);
  });

  it("answers 404 unknown_episode on a replica that does not hold the episode and never starts one", async () => {
    const a = await start("a");
    const b = await start("b");
    await call(a.url, "POST", "/v1/episodes", { task_id: task.id, episode_id: "ep-1" });
    const created = b.backend.created;
    for (const [method, path, body] of [
      ["POST", "/v1/episodes/ep-1/step", { action: "FINISH([])" }],
      ["GET", "/v1/episodes/ep-1", undefined],
      ["DELETE", "/v1/episodes/ep-1", undefined],
      ["POST", "/step", { action: { content: "FINISH([])" } }],
      ["GET", "/state", undefined],
    ] as const) {
      const r = await call(b.url, method, path, body, { "X-Episode-Id": "ep-1" });
      expect(r, `${method} ${path}`).toMatchObject({ status: 404, replica: "b", json: { code: "unknown_episode" } });
    }
    expect(b.backend.created).toBe(created);
    expect(b.server.registry.size).toBe(0);
    // The holder still has it, untouched.
    expect((await call(a.url, "GET", "/v1/episodes/ep-1")).json).toMatchObject({ episode_id: "ep-1", steps: 0 });
  });

  it("OpenEnv /reset takes episode_id and /step, /state find it by body, query or header", async () => {
    const { url } = await start("r0");
    const reset = await call(url, "POST", "/reset", { task_id: task.id, episode_id: "oe-1" });
    expect(reset.json.observation.episode_id).toBe("oe-1");
    await call(url, "POST", "/reset", { task_id: task.id, episode_id: "oe-2" });
    // The header picks oe-1 although oe-2 is the "current" one.
    const step = await call(url, "POST", "/step", { action: { content: `FINISH(${JSON.stringify(task.sol)})` } }, { "X-Episode-Id": "oe-1" });
    expect(step.json).toMatchObject({ observation: { episode_id: "oe-1" }, reward: 1, done: true });
    expect((await call(url, "GET", "/state?episode_id=oe-2")).json).toMatchObject({ episode_id: "oe-2", step_count: 0 });
    expect((await call(url, "POST", "/reset", { task_id: task.id, episode_id: "oe-2" })).status).toBe(409);
  });

  it("drains on shutdown: refuses new episodes and turns /healthz 503, waits for requests in flight, not for idle open episodes", async () => {
    const { url, server } = await start("r0");
    await call(url, "POST", "/v1/episodes", { task_id: task.id, episode_id: "open-1" });
    // A step whose body is still arriving is a request in flight.
    const body = JSON.stringify({ action: `FINISH(${JSON.stringify(task.sol)})` });
    const { port } = new URL(url);
    const slow = connect(Number(port), "127.0.0.1");
    const reply = new Promise<string>((resolve) => {
      let text = "";
      slow.on("data", (d: Buffer) => (text += d.toString()));
      slow.on("close", () => resolve(text));
    });
    slow.write(`POST /v1/episodes/open-1/step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`);
    await expect.poll(() => server.inFlight.size).toBe(1);
    let drained: boolean | undefined;
    const draining = server.drain(60_000).then((all) => (drained = all));
    expect((await call(url, "GET", "/healthz")).status).toBe(503);
    expect(await call(url, "POST", "/v1/episodes", { task_id: task.id })).toMatchObject({ status: 503, json: { code: "draining" } });
    expect(drained).toBeUndefined();
    slow.write(body.slice(5));
    expect(await reply).toMatch(/^HTTP\/1\.1 200[\s\S]*"reward":1/);
    await draining;
    expect(drained).toBe(true);
    // An idle open episode holds no drain.
    const other = await start("r1");
    await call(other.url, "POST", "/v1/episodes", { task_id: task.id });
    expect(await other.server.drain(60_000)).toBe(true);
    expect(other.server.registry.open).toBe(1);
  });

  it("bounds the drain by its timeout, and close() ends a pending drain", async () => {
    const { url, server } = await start("r2");
    const { port } = new URL(url);
    const slow = connect(Number(port), "127.0.0.1");
    slow.on("error", () => undefined);
    slow.write("POST /v1/episodes HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{");
    await expect.poll(() => server.inFlight.size).toBe(1);
    expect(await server.drain(200)).toBe(false);
    const pending = server.drain(60_000);
    await server.close();
    expect(await pending).toBe(false);
  });
});
