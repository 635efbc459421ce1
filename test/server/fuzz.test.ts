// The whole public surface under generated input (fast-check, fixed seeds): HTTP /v1, OpenEnv's
// HTTP routes, /ws messages and raw /ws frames, JSON and MessagePack; over 10,000 requests and
// frames a run. Every answer must be a documented status with a JSON (or MessagePack) error body,
// never a 500; the server stays up; and no episode changes but the one a request names: episodes
// opened beside the fuzzing (over /v1, OpenEnv HTTP and /ws), whose ids no request carries, are
// checked after every request.
import fc from "fast-check";
import msgpack from "msgpack-lite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRewardServer, type RewardServer } from "../../env/server/index.ts";
import { fixtureBackend, fixtureTasks } from "./fixture-backend.ts";
import { frame, rawExchange, textFrame, type ServerFrame } from "./raw-socket.ts";
import { wsSession } from "./ws-session.ts";

const MAX_BODY = 4096;
let server: RewardServer;
let url: string;
beforeAll(async () => {
  // Room for every episode the fuzzing opens, so the bystanders' checks never meet a full server.
  server = createRewardServer({ backend: fixtureBackend(), maxEpisodes: 100_000, maxBodyBytes: MAX_BODY, replicaId: "fz" });
  url = await server.listen(0);
});
afterAll(() => server.close());

const KNOWN_STATUS = new Set([200, 201, 400, 404, 405, 409, 413, 415, 503]);
const OPENENV_CODES = new Set(["INVALID_JSON", "UNKNOWN_TYPE", "VALIDATION_ERROR", "EXECUTION_ERROR", "CAPACITY_REACHED"]);
const taskIds = fixtureTasks.map((t) => t.id);

const jsonValue = fc.jsonValue({ maxDepth: 3 });
const turnText = fc.oneof(
  fc.string(),
  fc.constantFrom("GET ", "POST ", "FINISH(", "```tool_code\nGET x\n```", "FINISH([])", `FINISH(${JSON.stringify(fixtureTasks[0]!.sol)})`),
  fc.tuple(fc.constantFrom("GET ", "POST http://x\n", "FINISH("), fc.string()).map(([a, b]) => a + b),
);
const message = fc.record(
  {
    role: fc.constantFrom("assistant", "user", "tool", "system", "robot"),
    content: fc.oneof(fc.string(), fc.constant(null)),
    tool_calls: fc.array(fc.record({ id: fc.string(), type: fc.constant("function"), function: fc.record({ name: fc.string(), arguments: fc.string() }) }), { maxLength: 2 }),
  },
  { requiredKeys: ["role"] },
);
/** Ids a request may carry: the fuzzing's own target, made-up ones; never a bystander's. */
const someId = (target: () => string) => fc.oneof(fc.constant(null).map(() => target()), fc.string({ maxLength: 20 }), fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/), fc.constantFrom("fz-00000000-0000-0000-0000-000000000000", "r9-11111111-2222-3333-4444-555555555555"));
const resetBody = (target: () => string) =>
  fc.record(
    {
      task_id: fc.oneof(fc.constantFrom(...taskIds), fc.string()),
      seed: fc.oneof(fc.nat(), fc.integer({ min: -3, max: 3 }), fc.double()),
      protocol: fc.oneof(fc.constantFrom("text", "tools"), fc.string()),
      max_rounds: fc.oneof(fc.integer({ min: -2, max: 12 }), fc.double()),
      episode_id: fc.oneof(someId(target), jsonValue),
    },
    { requiredKeys: [] },
  );
const body = (target: () => string) =>
  fc.oneof(
    jsonValue,
    resetBody(target),
    fc.record({ action: fc.oneof(turnText, jsonValue) }, { requiredKeys: [] }),
    fc.record({ message }),
    fc.record({ messages: fc.array(message, { maxLength: 4 }), task_id: fc.constantFrom(...taskIds) }),
    fc.record({ action: fc.oneof(turnText, message, fc.record({ content: fc.string() })), episode_id: fc.option(someId(target)) }),
  );
const wire = (target: () => string) =>
  fc.oneof(
    body(target).map((b) => ({ contentType: "application/json", bytes: Buffer.from(JSON.stringify(b) ?? "null") })),
    body(target).map((b) => ({ contentType: "application/msgpack", bytes: msgpack.encode(b) })),
    fc.uint8Array({ maxLength: 64 }).map((u) => ({ contentType: "application/msgpack", bytes: Buffer.from(u) })),
    fc.string().map((s) => ({ contentType: "application/json", bytes: Buffer.from(s) })),
    fc.constantFrom("text/plain", "application/xml", "image/png", "").map((t) => ({ contentType: t, bytes: Buffer.from("{}") })),
    fc.integer({ min: 1, max: 400 }).map((n) => ({ contentType: "application/json", bytes: Buffer.from("[".repeat(n * 50) + "]".repeat(n * 50)) })),
    fc.integer({ min: MAX_BODY + 1, max: 20000 }).map((n) => ({ contentType: "application/json", bytes: Buffer.from(JSON.stringify({ pad: "x".repeat(n) })) })),
  );

/** Whether the registry holds `id`, not finished. */
function held(id: string): boolean {
  try {
    return !server.registry.get(id).done;
  } catch {
    return false;
  }
}

async function openEpisode(): Promise<string> {
  const r = await fetch(`${url}/v1/episodes`, { method: "POST", body: JSON.stringify({ task_id: taskIds[0], max_rounds: 50 }) });
  expect(r.status).toBe(201);
  return ((await r.json()) as { episode_id: string }).episode_id;
}

/**
 * Episodes opened beside the fuzzing, one per surface; `unchanged()` asserts each is still held
 * with the steps and state it had (checked in the registry, after every request).
 */
let bystanderSets = 0;
async function bystanders() {
  const v1 = await openEpisode();
  const chosen = `bystander-${++bystanderSets}`;
  const reset = await fetch(`${url}/reset`, { method: "POST", body: JSON.stringify({ seed: 1, episode_id: chosen }) });
  expect(reset.status).toBe(200);
  const socket = await wsSession(url);
  const opened = await socket.ask(JSON.stringify({ type: "reset", data: { seed: 2 } }));
  const ids = [v1, chosen, opened.data.observation.episode_id as string];
  await fetch(`${url}/v1/episodes/${v1}/step`, { method: "POST", body: JSON.stringify({ action: "GET x" }) });
  const snapshot = () => ids.map((id) => {
    const e = server.registry.get(id);
    return { id, steps: e.steps, done: e.done, status: e.info.status, rounds: e.info.rounds };
  });
  const before = snapshot();
  return { ids, unchanged: () => expect(snapshot()).toEqual(before), close: () => socket.ws.close() };
}

function expectErrorBody(value: any, what: string) {
  expect(typeof value?.error, what).toBe("string");
  if (value.field !== undefined) expect(typeof value.field, what).toBe("string");
}

describe("reward server fuzz", () => {
  it("HTTP /v1, OpenEnv HTTP and MessagePack: documented statuses with error bodies, no 500, only the named episode changes", async () => {
    const others = await bystanders();
    let target = await openEpisode();
    const targetId = () => target;
    const path = fc.oneof(
      fc.constantFrom("/v1/episodes", "/v1/score", "/reset", "/step", "/state", "/v1/tasks", "/healthz", "/v1/schema", "/metrics", "/health", "/schema", "/mcp"),
      fc.constant(null).map(() => `/v1/episodes/${target}/step`),
      fc.constant(null).map(() => `/v1/episodes/${target}`),
      someId(targetId).map((id) => `/state?episode_id=${encodeURIComponent(id)}`),
      fc.string().map((s) => `/v1/episodes/${encodeURIComponent(s)}/step`),
      fc.webPath(),
    );
    const method = fc.constantFrom("GET", "POST", "DELETE", "PUT");
    const accept = fc.constantFrom(undefined, "application/json", "application/msgpack", "*/*", "text/html");
    const episodeHeader = fc.option(someId(targetId), { freq: 3 });

    await fc.assert(
      fc.asyncProperty(method, path, wire(targetId), accept, episodeHeader, async (m, p, w, a, h) => {
        const headers: Record<string, string> = {};
        if (w.contentType) headers["Content-Type"] = w.contentType;
        if (a) headers.Accept = a;
        if (h !== null && /^[\x21-\x7e]*$/.test(h)) headers["X-Episode-Id"] = h;
        const res = await fetch(url + p, { method: m, headers, body: m === "GET" ? undefined : new Uint8Array(w.bytes) });
        const what = `${m} ${p} -> ${res.status}`;
        expect(KNOWN_STATUS.has(res.status), what).toBe(true);
        const bytes = Buffer.from(await res.arrayBuffer());
        const type = res.headers.get("content-type") ?? "";
        const value = type.startsWith("application/msgpack") ? msgpack.decode(bytes) : type.startsWith("application/json") ? JSON.parse(bytes.toString("utf8")) : bytes.toString("utf8");
        if (res.status >= 400) expectErrorBody(value, what);
        else expect(value, what).toBeTypeOf(p === "/metrics" ? "string" : "object");
        others.unchanged();
        if (!held(target)) target = await openEpisode();
      }),
      { numRuns: 6000, seed: 20261123 },
    );
    others.close();
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
  });

  it("/ws messages: a reply of OpenEnv's kinds, errors with the HTTP error body, no 500, only the session's episode changes", async () => {
    const others = await bystanders();
    let session = await wsSession(url);
    const data = fc.oneof(resetBody(() => "fz-ws"), fc.record({ content: fc.oneof(turnText, jsonValue) }, { requiredKeys: [] }), message, jsonValue);
    const msg = fc.oneof(
      fc.record({ type: fc.constantFrom("reset", "step", "state", "close"), data }, { requiredKeys: ["type"] }).map((m) => ({ text: JSON.stringify(m), binary: false })),
      fc.record({ type: fc.oneof(fc.string(), jsonValue), data: jsonValue }, { requiredKeys: [] }).map((m) => ({ text: JSON.stringify(m), binary: false })),
      fc.oneof(fc.string(), jsonValue.map((v) => JSON.stringify(v))).map((text) => ({ text, binary: false })),
      fc.integer({ min: 1, max: 400 }).map((n) => ({ text: `{"type":"step","data":${"[".repeat(n * 50)}${"]".repeat(n * 50)}}`, binary: false })),
      fc.uint8Array({ maxLength: 32 }).map((u) => ({ text: Buffer.from(u).toString("latin1"), binary: true })),
    );
    await fc.assert(
      fc.asyncProperty(msg, async ({ text, binary }) => {
        if (session.isClosed()) session = await wsSession(url);
        const reply = await session.ask(binary ? Buffer.from(text, "latin1") : text, binary);
        const isClose = !binary && /^\{"type":"close"/.test(text);
        if ("closed" in reply) expect(isClose || Buffer.byteLength(text) > MAX_BODY, `${text.slice(0, 80)} -> closed ${reply.closed}`).toBe(true);
        else {
          expect(["observation", "state", "error"], text.slice(0, 80)).toContain(reply.type);
          if (reply.type === "error") {
            expectErrorBody(reply.data, text.slice(0, 80));
            expect(OPENENV_CODES.has(reply.data.code), reply.data.code).toBe(true);
            expect(KNOWN_STATUS.has(reply.data.status), `${text.slice(0, 80)} -> ${reply.data.status}`).toBe(true);
            expect(reply.data.message).toBe(reply.data.error);
          }
        }
        others.unchanged();
      }),
      { numRuns: 3000, seed: 37 },
    );
    session.ws.close();
    others.close();
  });

  it("raw /ws frames: a reply or a close with a JSON reason, never more than that connection", async () => {
    const others = await bystanders();
    const payload = fc.oneof(
      fc.uint8Array({ maxLength: 40 }).map((u) => Buffer.from(u)),
      fc.constantFrom('{"type":"state"}', '{"type":"reset","data":{"seed":3}}', '{"type":"step","data":{"content":"GET x"}}').map((t) => Buffer.from(t)),
    );
    const spec = fc.record({
      opcode: fc.oneof(fc.constantFrom(0, 1, 2, 8, 9, 10), fc.integer({ min: 0, max: 15 })),
      payload,
      fin: fc.boolean(),
      masked: fc.boolean(),
      rsv: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 7 })),
      oversized: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    });
    const STATE = textFrame('{"type":"state"}');
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { minLength: 1, maxLength: 3 }), fc.boolean(), async (specs, abrupt) => {
        const bytes = Buffer.concat([...specs.map((s) => frame({ ...s, ...(s.oversized ? { declared: MAX_BODY + 1 + s.payload.length } : {}) })), STATE]);
        // The trailing state message always gets an answer, unless a frame before it ended the connection.
        const stateReply = (f: ServerFrame) => f.opcode === 1 && f.payload.toString().startsWith('{"type":"state"');
        const exchange = await rawExchange(url, bytes, { abrupt, enough: (frames) => frames.some(stateReply) });
        expect(exchange.status).toContain(" 101 ");
        for (const f of exchange.frames) {
          if (f.opcode === 1) expect(["observation", "state", "error"]).toContain(JSON.parse(f.payload.toString()).type);
        }
        // A close frame the client sent (a fuzzed one, or 1000 once answered) is echoed with its own code
        // and reason; any other close is a protocol error's.
        if (exchange.close && exchange.close.code !== 1000 && !specs.some((s) => s.opcode === 8)) {
          expect([1002, 1007, 1009]).toContain(exchange.close.code);
          expectErrorBody(JSON.parse(exchange.close.reason), `close ${exchange.close.code}`);
        }
        others.unchanged();
      }),
      { numRuns: 1500, seed: 9 },
    );
    others.close();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it("keeps a fuzzed episode's state coherent: steps after the end get 409, rounds count every accepted step", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(turnText, { minLength: 1, maxLength: 10 }), async (turns) => {
        const id = await openEpisode();
        let done = false;
        let accepted = 0;
        for (const t of turns) {
          const r = await fetch(`${url}/v1/episodes/${id}/step`, { method: "POST", body: JSON.stringify({ action: t }) });
          const v = (await r.json()) as { terminated?: boolean; truncated?: boolean; info?: { rounds: number } };
          if (done) {
            expect(r.status).toBe(409);
            continue;
          }
          expect(r.status).toBe(200);
          accepted++;
          expect(v.info!.rounds).toBe(accepted);
          done = Boolean(v.terminated || v.truncated);
        }
        await fetch(`${url}/v1/episodes/${id}`, { method: "DELETE" });
      }),
      { numRuns: 60, seed: 7 },
    );
  });
});
