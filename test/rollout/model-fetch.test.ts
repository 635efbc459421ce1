// The fetch the model policy gives the openai client, over real HTTP on loopback: every request of a
// high concurrency in flight at once, abort of an in-flight request, and errors the client classifies
// as it did with the global fetch (the same expectations run against it).
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { describe as describeError, isRetryable, retryAfterMs } from "../../rollout/model/errors.ts";
import { createFetch } from "../../rollout/model/fetch.ts";

const COMPLETION = { id: "c1", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "hi", refusal: null }, finish_reason: "stop", logprobs: null }] };

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  if (server?.listening) await new Promise((r) => server!.close(r));
  server = undefined;
});

async function serve(handle: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => handle(req, body, res));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const ask = { model: "m", messages: [{ role: "user" as const, content: "hello" }] };

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

describe.each([
  ["createFetch()", createFetch],
  ["the global fetch", () => globalThis.fetch],
])("the openai client on %s", (_name, makeFetch) => {
  const client = (baseURL: string, timeout = 30_000) => new OpenAI({ baseURL, apiKey: "k", maxRetries: 0, timeout, fetch: makeFetch() });

  it("keeps 300 requests in flight at once (no queueing behind busy connections)", async () => {
    const n = 300;
    const waiting: ServerResponse[] = [];
    const url = await serve((_req, _body, res) => {
      waiting.push(res);
      // Nobody is answered until every request has arrived: queueing anywhere would hang here.
      if (waiting.length === n) for (const r of waiting) json(r, 200, COMPLETION);
    });
    const c = client(url);
    const replies = await Promise.all(Array.from({ length: n }, () => c.chat.completions.create(ask)));
    expect(replies.map((r) => r.choices[0]!.message.content)).toEqual(Array(n).fill("hi"));
  });

  it("sends the body, the key and the headers given, and returns the request id", async () => {
    let seen: { body: unknown; auth?: string; key?: string; type?: string } | undefined;
    const url = await serve((req, body, res) => {
      seen = { body: JSON.parse(body), auth: req.headers.authorization, key: req.headers["idempotency-key"] as string, type: req.headers["content-type"] };
      json(res, 200, COMPLETION, { "x-request-id": "req_42" });
    });
    const { data, request_id } = await client(url).chat.completions.create(ask, { headers: { "Idempotency-Key": "s/t/0/1" } }).withResponse();
    expect(data.choices[0]!.message.content).toBe("hi");
    expect(request_id).toBe("req_42");
    expect(seen).toEqual({ body: ask, auth: "Bearer k", key: "s/t/0/1", type: "application/json" });
  });

  it("aborts an in-flight request when the caller's signal aborts", async () => {
    let arrived!: () => void;
    const inFlight = new Promise<void>((r) => (arrived = r));
    let closed = false;
    const url = await serve((req, _body, res) => {
      res.on("close", () => (closed = true));
      arrived(); // never answered
    });
    const controller = new AbortController();
    const pending = client(url).chat.completions.create(ask, { signal: controller.signal });
    await inFlight;
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
    await expect.poll(() => closed).toBe(true);
  });

  it("a request past the client's timeout is a retryable timeout", async () => {
    const url = await serve(() => undefined); // never answered
    const err = await client(url, 200).chat.completions.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(isRetryable(err)).toBe(true);
  });

  it("HTTP errors keep their status, message and Retry-After", async () => {
    const url = await serve((_req, _body, res) => json(res, 429, { error: { message: "slow down", type: "rate_limit", code: "rate_limited" } }, { "retry-after": "2" }));
    const err = await client(url).chat.completions.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(describeError(err)).toBe("HTTP 429 rate_limited: 429 slow down");
    expect(retryAfterMs(err)).toBe(2000);
    expect(isRetryable(err)).toBe(true);
  });

  it("a refused connection is a retryable connection error naming the cause", async () => {
    const url = await serve(() => undefined);
    server!.close();
    await once(server!, "close");
    const err = await client(url).chat.completions.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(err).not.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(describeError(err)).toMatch(/^connection failed \(ECONNREFUSED\)/);
    expect(isRetryable(err)).toBe(true);
  });

  it("a connection dropped mid-request is a connection error", async () => {
    const url = await serve((req) => req.socket.destroy());
    const err = await client(url).chat.completions.create(ask).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(isRetryable(err)).toBe(true);
  });
});

describe("createFetch()'s successful replies", () => {
  it("read as the global fetch's Response does: status, headers, body once as JSON, text or bytes", async () => {
    const url = await serve((_req, _body, res) => {
      res.setHeader("Set-Cookie", ["a=1", "b=2"]);
      res.setHeader("X-Multi", ["x", "y"]);
      res.setHeader("Date", "Wed, 25 Nov 2026 07:00:00 GMT");
      json(res, 201, COMPLETION, { "X-Request-Id": "req_123", "Content-Type": "application/json; charset=utf-8" });
    });
    const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ask) };
    const [ours, theirs] = await Promise.all([createFetch()(`${url}/chat/completions`, init), fetch(`${url}/chat/completions`, init)]);
    for (const r of [ours, theirs]) {
      expect([r.ok, r.status, r.url, r.bodyUsed]).toEqual([true, 201, `${url}/chat/completions`, false]);
      expect(r.headers.get("x-request-id")).toBe("req_123");
      expect(r.headers.get("X-REQUEST-ID")).toBe("req_123");
      expect(r.headers.get("x-multi")).toBe("x, y");
      expect(r.headers.get("absent")).toBeNull();
    }
    expect([...ours.headers.entries()].filter(([n]) => n !== "set-cookie")).toEqual([...theirs.headers.entries()].filter(([n]) => n !== "set-cookie"));
    expect(await ours.clone().text()).toBe(JSON.stringify(COMPLETION));
    expect(new Uint8Array(await ours.clone().arrayBuffer())).toEqual(new TextEncoder().encode(JSON.stringify(COMPLETION)));
    expect(await ours.json()).toEqual(await theirs.json());
    expect(ours.bodyUsed).toBe(true);
    await expect(ours.text()).rejects.toThrow(TypeError);
    await expect(theirs.text()).rejects.toThrow(TypeError);
  });
});

describe("createFetch() on a dropped reply", () => {
  it("a connection closed mid-reply fails the request as a dropped connection", async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      res.write('{"id":"c1",');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const err = await createFetch()(`${url}/chat/completions`, { method: "POST", body: JSON.stringify(ask) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe("fetch failed");
  });
});

describe("createFetch().abortAll()", () => {
  it("fails every request in flight as a dropped connection; later requests go out as before", async () => {
    let hold = true;
    let arrived = 0;
    const url = await serve((_req, _body, res) => {
      arrived++;
      if (!hold) json(res, 200, COMPLETION);
    });
    const f = createFetch();
    const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ask) };
    const inFlight = Array.from({ length: 3 }, () => f(`${url}/chat/completions`, init).catch((e: unknown) => e));
    await expect.poll(() => arrived).toBe(3);
    f.abortAll();
    for (const err of await Promise.all(inFlight)) {
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toBe("fetch failed");
    }
    hold = false;
    const reply = await f(`${url}/chat/completions`, init);
    expect(await reply.json()).toEqual(COMPLETION);
  });
});
