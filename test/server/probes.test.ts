// The probes of issue 37, kept as regression tests: frames that killed the whole server (and every
// open episode with it), deep JSON over /ws answered as an internal error, and OpenEnv's HTTP routes
// sharing one "current episode" between clients. The crash probes run against a child process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startChildServer, type ChildServer } from "./child-server.ts";
import { fixtureTasks } from "./fixture-backend.ts";
import { frame, rawExchange, textFrame } from "./raw-socket.ts";
import { wsSession } from "./ws-session.ts";

const MAX_BODY = 1024 * 1024;
let server: ChildServer;
beforeAll(async () => {
  server = await startChildServer({ maxBodyBytes: MAX_BODY, replicaId: "pr" });
});
afterAll(() => server?.stop());

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, { method, headers: { "Content-Type": "application/json", ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as any };
}

const session = () => wsSession(server.url);

/** Episodes open elsewhere (one over /ws, one over /v1) that a probe must leave running. */
async function bystanders() {
  const s = await session();
  const opened = await s.ask({ type: "reset", data: { task_id: fixtureTasks[0]!.id, max_rounds: 50 } });
  expect(opened.type).toBe("observation");
  const v1 = await call("POST", "/v1/episodes", { task_id: fixtureTasks[1]!.id, max_rounds: 50 });
  expect(v1.status).toBe(201);
  return {
    async stillRunning() {
      expect(server.alive(), server.stderr()).toBe(true);
      expect(await s.ask({ type: "step", data: { content: "GET x" } })).toMatchObject({ type: "observation", data: { done: false } });
      expect(await s.ask({ type: "state" })).toMatchObject({ data: { episode_id: opened.data.observation.episode_id, step_count: 1 } });
      const step = await call("POST", `/v1/episodes/${v1.json.episode_id}/step`, { action: "GET x" });
      expect(step).toMatchObject({ status: 200, json: { terminated: false, info: { rounds: 1 } } });
      s.ws.close();
    },
  };
}

/** The close frame's reason is the JSON error body the HTTP routes give. */
function expectClosed(exchange: Awaited<ReturnType<typeof rawExchange>>, code: number, text: RegExp) {
  expect(exchange.close?.code).toBe(code);
  const reason = JSON.parse(exchange.close!.reason) as { error: string; field?: string };
  expect(reason.error).toMatch(text);
  expect(reason.field).toBe("frame");
}

describe("issue 37 probes: /ws cannot be crashed", () => {
  it("a client frame without the mask bit (7 bytes) ends only that connection, with 1002", async () => {
    const others = await bystanders();
    const probe = frame({ opcode: 1, payload: Buffer.from("hello"), masked: false });
    expect(probe).toHaveLength(7);
    expectClosed(await rawExchange(server.url, probe), 1002, /mask/i);
    await others.stillRunning();
  });

  it("a frame declaring 9 MiB (over the body limit) is closed with 1009 and a reason naming the limit", async () => {
    const others = await bystanders();
    const probe = frame({ opcode: 1, payload: Buffer.from("{}"), declared: 9 * 1024 * 1024 });
    expectClosed(await rawExchange(server.url, probe), 1009, new RegExp(`${MAX_BODY} bytes`));
    await others.stillRunning();
  });

  it("bad UTF-8, an unknown opcode and an abrupt disconnect end only their connection", async () => {
    const others = await bystanders();
    expectClosed(await rawExchange(server.url, frame({ opcode: 1, payload: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) })), 1007, /UTF-8/);
    expectClosed(await rawExchange(server.url, frame({ opcode: 5, payload: Buffer.from("x") })), 1002, /opcode/i);
    await rawExchange(server.url, textFrame(JSON.stringify({ type: "reset", data: {} })).subarray(0, 5), { abrupt: true });
    await others.stillRunning();
  });

  it("a refused handshake answers the JSON error body, as the HTTP routes do", async () => {
    for (const [headers, status] of [
      [{ "Sec-WebSocket-Version": "99" }, 400],
      [{ "Sec-WebSocket-Key": "short" }, 400],
    ] as const) {
      const refused = await rawExchange(server.url, Buffer.alloc(0), { headers });
      expect(refused.status).toContain(` ${status} `);
      expect(JSON.parse(refused.refusal!).error).toMatch(/^WebSocket handshake: /);
    }
    expect(server.alive()).toBe(true);
  });

  it("100k-deep JSON over /ws is a validation error (400, naming the nesting limit), not an internal error", async () => {
    const others = await bystanders();
    const { ws, ask } = await session();
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const reply = await ask(`{"type":"reset","data":${deep}}`);
    expect(reply).toMatchObject({ type: "error", data: { code: "VALIDATION_ERROR", status: 400, field: "body" } });
    expect(reply.data.error).toMatch(/nested deeper than/);
    expect(reply.data.message).toBe(reply.data.error);
    // The connection goes on: the next message is served.
    expect(await ask({ type: "reset", data: { seed: 2 } })).toMatchObject({ type: "observation", data: { observation: { task_id: fixtureTasks[2]!.id } } });
    ws.close();
    await others.stillRunning();
  });
});

describe("issue 37 probes: OpenEnv's HTTP routes share nothing between clients", () => {
  it("A's /step without an id never steps B's episode", async () => {
    const a = await call("POST", "/reset", { seed: 0, episode_id: "probe-a" });
    const b = await call("POST", "/reset", { seed: 1 });
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    const step = await call("POST", "/step", { action: { content: "GET x" } });
    expect(step).toMatchObject({ status: 400, json: { field: "episode_id" } });
    expect((await call("GET", "/state?episode_id=probe-a")).json).toMatchObject({ episode_id: "probe-a", step_count: 0 });
  });

  it("GET /state without an id reveals no episode", async () => {
    const b = await call("POST", "/reset", { seed: 1, episode_id: "probe-b" });
    expect(b.status).toBe(200);
    const state = await call("GET", "/state");
    expect(state).toMatchObject({ status: 200, json: { episode_id: null, step_count: 0, task_id: null } });
    expect(JSON.stringify(state.json)).not.toContain("probe-b");
  });
});
