// Random bodies, actions, paths and encodings: the server must stay up and answer every request
// with a well-formed reply (a known status, a decodable body, an `error` string on failures).
import fc from "fast-check";
import msgpack from "msgpack-lite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRewardServer, type RewardServer } from "../../env/server/index.ts";
import { fixtureBackend, fixtureTasks } from "./fixture-backend.ts";

let server: RewardServer;
let url: string;
beforeAll(async () => {
  server = createRewardServer({ backend: fixtureBackend(), maxEpisodes: 64, maxBodyBytes: 4096, replicaId: "fz" });
  url = await server.listen(0);
});
afterAll(() => server.close());

const KNOWN_STATUS = new Set([200, 201, 400, 404, 405, 409, 413, 415, 503]);

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
const body = fc.oneof(
  jsonValue,
  fc.record({ task_id: fc.oneof(fc.constantFrom(...fixtureTasks.map((t) => t.id)), fc.string()), protocol: fc.oneof(fc.constantFrom("text", "tools"), fc.string()), max_rounds: fc.oneof(fc.integer({ min: -2, max: 12 }), fc.double()) }, { requiredKeys: [] }),
  fc.record({ action: fc.oneof(turnText, jsonValue) }, { requiredKeys: [] }),
  fc.record({ message }),
  fc.record({ messages: fc.array(message, { maxLength: 4 }), task_id: fc.constantFrom(...fixtureTasks.map((t) => t.id)) }),
  fc.record({ action: fc.oneof(turnText, message, fc.record({ content: fc.string() })), episode_id: fc.option(fc.string()) }),
);
const wire = fc.oneof(
  body.map((b) => ({ contentType: "application/json", bytes: Buffer.from(JSON.stringify(b) ?? "null") })),
  body.map((b) => ({ contentType: "application/msgpack", bytes: msgpack.encode(b) })),
  fc.uint8Array({ maxLength: 64 }).map((u) => ({ contentType: "application/msgpack", bytes: Buffer.from(u) })),
  fc.string().map((s) => ({ contentType: "application/json", bytes: Buffer.from(s) })),
  fc.constantFrom("text/plain", "application/xml", "image/png", "").map((t) => ({ contentType: t, bytes: Buffer.from("{}") })),
  fc.integer({ min: 4097, max: 20000 }).map((n) => ({ contentType: "application/json", bytes: Buffer.from(JSON.stringify({ pad: "x".repeat(n) })) })),
);

async function openEpisode(): Promise<string> {
  const r = await fetch(`${url}/v1/episodes`, { method: "POST", body: JSON.stringify({ task_id: fixtureTasks[0]!.id, max_rounds: 50 }) });
  expect(r.status).toBe(201);
  return ((await r.json()) as { episode_id: string }).episode_id;
}

describe("reward server fuzz", () => {
  it("answers random requests with well-formed replies and stays up", async () => {
    const live = await openEpisode();
    const path = fc.oneof(
      fc.constantFrom("/v1/episodes", "/v1/score", "/reset", "/step", "/state", "/v1/tasks", "/healthz", "/v1/schema", `/v1/episodes/${live}/step`, `/v1/episodes/${live}`),
      fc.string().map((s) => `/v1/episodes/${encodeURIComponent(s)}/step`),
      fc.webPath(),
    );
    const method = fc.constantFrom("GET", "POST", "DELETE", "PUT");
    const accept = fc.constantFrom(undefined, "application/json", "application/msgpack", "*/*", "text/html");

    await fc.assert(
      fc.asyncProperty(method, path, wire, accept, async (m, p, w, a) => {
        const headers: Record<string, string> = {};
        if (w.contentType) headers["Content-Type"] = w.contentType;
        if (a) headers.Accept = a;
        const res = await fetch(url + p, { method: m, headers, body: m === "GET" ? undefined : new Uint8Array(w.bytes) });
        expect(KNOWN_STATUS.has(res.status), `${m} ${p} -> ${res.status}`).toBe(true);
        const bytes = Buffer.from(await res.arrayBuffer());
        const type = res.headers.get("content-type") ?? "";
        const value = type.startsWith("application/msgpack") ? msgpack.decode(bytes) : type.startsWith("application/json") ? JSON.parse(bytes.toString("utf8")) : bytes.toString("utf8");
        if (res.status >= 400) expect(typeof value.error, `${m} ${p} -> ${res.status}`).toBe("string");
        else expect(value).toBeTypeOf("object");
      }),
      { numRuns: 400, seed: 20261123 },
    );

    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { ok: boolean }).ok).toBe(true);
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
