// `ehrgym teacher serve`: an OpenAI-compatible stand-in model server on node:http (two routes need no framework).
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { Task } from "../../env/tasks/index.ts";
import { Completions, type Again, type ChatCompletion, type Conversation } from "./completions.ts";
import { loadTokenIds } from "./tokens.ts";
import { loadTokenizer } from "./usage.ts";
import { firstIssue, httpStatusOf, Rng } from "../../env/util/index.ts";
import { textDigest } from "./digest.ts";
import { FaultPicker, FaultRatesSchema, parseFaults, type FaultKind } from "./faults.ts";
import { ApiError, invalidRequest } from "./request.ts";
import { TeacherReasoning } from "./reasoning.ts";
import { completionEvents } from "./stream.ts";

export const DEFAULT_MODEL = "ehrgym-stand-in";
export const OWNED_BY = "ehrgym stand-in (a scripted expert with seeded mistakes; not a model)";

export const TeacherServerOptions = z.object({
  tasks: z.array(Task).min(1, "the stand-in needs at least one task"),
  port: z.number().int().min(0).max(65_535).default(0),
  host: z.string().min(1).default("127.0.0.1"),
  models: z.array(z.string().min(1)).min(1).default([DEFAULT_MODEL]),
  errorRate: z.number().min(0).max(1).default(0.35),
  seed: z.number().int().min(0).max(2 ** 32 - 1).default(0),
  /** Time from a request's arrival to its reply, the stand-in's own work included (what a client
   *  measures of an endpoint). */
  latencyMs: z.number().min(0).max(600_000).default(0),
  /** Each reply's delay is latencyMs plus a seeded uniform draw in [-jitter, +jitter]: a real endpoint's
   *  latency varies, and a fixed one keeps concurrent episodes in lockstep waves. */
  latencyJitterMs: z.number().min(0).max(600_000).default(0),
  /** "429:0.05,500:0.02,reset:0.01" or {429: 0.05, ...}. */
  faults: z.union([z.string(), FaultRatesSchema]).default({}),
  /** How long a `slow` fault holds its reply (longer than the client's timeout, to exercise it). */
  slowMs: z.number().min(0).max(3_600_000).default(30_000),
  /** When set, requests need `Authorization: Bearer <apiKey>`. */
  apiKey: z.string().min(1).optional(),
  /** The round limit the expert plans for (the environment's --max-rounds). */
  maxRounds: z.number().int().min(1).max(1000).default(8),
  maxBodyBytes: z.number().int().min(1024).default(64 * 1024 * 1024),
  /** Think before each turn, returning the thought inline (`think`) or in the `reasoning` field (`field`), as vLLM does. */
  reasoning: TeacherReasoning.optional(),
});
export type TeacherServerInput = z.input<typeof TeacherServerOptions>;

/** Reply delays: `latencyMs` plus a seeded uniform draw in [-jitterMs, +jitterMs], never below 0. */
export function replyDelays(latencyMs: number, jitterMs: number, seed: number): () => number {
  if (jitterMs <= 0) return () => latencyMs;
  const rng = Rng.derive(seed, "latency");
  return () => Math.max(0, latencyMs + (2 * rng.float() - 1) * jitterMs);
}

/** `raw`: the body as bytes are sent (a broken reply, server-sent events), instead of the JSON of `body`. */
type Send = { status: number; body: unknown; headers?: Record<string, string>; raw?: string };

/** Starts the stand-in; `url` is the base URL for an OpenAI client, ending in /v1. */
export async function startTeacherServer(input: TeacherServerInput) {
  const parsed = TeacherServerOptions.safeParse(input);
  if (!parsed.success) throw new Error(`startTeacherServer: ${firstIssue(parsed.error, "(options)")}`);
  const o = parsed.data;
  await loadTokenizer();
  await loadTokenIds();
  const completions = new Completions({ tasks: o.tasks, seed: o.seed, errorRate: o.errorRate, maxRounds: o.maxRounds, reasoning: o.reasoning });
  const delay = replyDelays(o.latencyMs, o.latencyJitterMs, o.seed);
  const faults = new FaultPicker(typeof o.faults === "string" ? parseFaults(o.faults) : o.faults, o.seed);
  const created = Math.floor(Date.now() / 1000);
  const timers = new Set<NodeJS.Timeout>();
  let requests = 0;

  let closed = false;
  const later = (ms: number, f: () => void) => {
    if (closed) return;
    if (ms <= 0) return f();
    const t = setTimeout(() => {
      timers.delete(t);
      f();
    }, ms);
    timers.add(t);
  };

  /** Sends `s` at `due` (performance.now() time; at once when that has passed). */
  const send = (res: ServerResponse, requestId: string, s: Send, due: number) => {
    const text = s.raw ?? JSON.stringify(s.body);
    later(due - performance.now(), () => {
      if (res.destroyed) return;
      res.writeHead(s.status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "x-request-id": requestId, ...s.headers });
      res.end(text);
    });
  };

  const models = () => ({ object: "list", data: o.models.map((id) => ({ id, object: "model", created, owned_by: OWNED_BY })) });

  const authorise = (req: IncomingMessage) => {
    if (o.apiKey === undefined) return;
    const given = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1]?.trim();
    if (given !== o.apiKey) {
      const message = given
        ? `Incorrect API key provided to the ehrgym stand-in (it expects the key in the variable named by --api-key-env).`
        : "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'.";
      throw new ApiError(401, message, "invalid_request_error", "invalid_api_key");
    }
  };

  const chat = (req: IncomingMessage, raw: Buffer, res: ServerResponse, requestId: string, arrived: number) => {
    const idempotency = req.headers["idempotency-key"];
    const again: Again = { retry: Number(req.headers["x-stainless-retry-count"] ?? 0) > 0, ...(typeof idempotency === "string" && idempotency ? { key: idempotency } : {}) };
    const body = completions.read(raw);
    const request = body.request;
    if (request.n !== undefined && request.n !== null && request.n !== 1) throw invalidRequest(`n: the ehrgym stand-in returns one choice (got n=${request.n})`, "n", "unsupported_value");
    if (!o.models.includes(request.model)) {
      throw new ApiError(404, `The model \`${request.model}\` does not exist: this ehrgym stand-in serves ${o.models.map((m) => `\`${m}\``).join(", ")}`, "invalid_request_error", "model_not_found", "model");
    }
    const conversation = completions.conversation(body);
    const fault = faults.next();
    if (fault === "reset") {
      req.socket.destroy();
      return;
    }
    const reply = fault ? injected(fault, conversation, again) : { status: 200, body: completions.complete(conversation, again) };
    const due = arrived + delay() + (fault === "slow" ? o.slowMs : 0);
    if (request.stream && reply.status === 200) {
      const includeUsage = (request as { stream_options?: { include_usage?: boolean } }).stream_options?.include_usage === true;
      return send(res, requestId, { status: 200, body: null, raw: completionEvents(reply.body as ChatCompletion, includeUsage), headers: { "content-type": "text/event-stream" } }, due);
    }
    send(res, requestId, reply, due);
  };

  const injected = (fault: Exclude<FaultKind, "reset">, c: Conversation, again: Again): Send => {
    const about = { sample: null, turn: `fault:${fault}` };
    switch (fault) {
      case "slow":
        return { status: 200, body: completions.complete(c, again) };
      case "429":
        return {
          status: 429,
          headers: { "retry-after": "1" },
          body: new ApiError(429, `Rate limit reached for ${c.request.model} (injected by the ehrgym stand-in). Please try again in 1s.`, "requests", "rate_limit_exceeded").body(),
        };
      case "500":
        return { status: 500, body: new ApiError(500, "The server had an error while processing your request (injected by the ehrgym stand-in).", "server_error", null).body() };
      case "context": {
        const n = completions.promptTokens(c);
        return {
          status: 400,
          body: invalidRequest(
            `This model's maximum context length is ${Math.max(1, n - 1)} tokens. However, your messages resulted in ${n} tokens. Please reduce the length of the messages. (injected by the ehrgym stand-in)`,
            "messages",
            "context_length_exceeded",
          ).body(),
        };
      }
      case "empty":
        return { status: 200, body: completions.shape(c, { role: "assistant", content: "" }, about) };
      case "nochoices":
        return { status: 200, body: completions.shape(c, { role: "assistant", content: "" }, about, false) };
      case "truncated": {
        const whole = JSON.stringify(completions.shape(c, { role: "assistant", content: "" }, about));
        return { status: 200, body: null, raw: whole.slice(0, Math.floor(whole.length / 2)) };
      }
      case "html":
        return { status: 200, body: null, headers: { "content-type": "text/html" }, raw: "<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n<body><h1>Please sign in</h1>\n<p>(a proxy's page, injected by the ehrgym stand-in)</p></body></html>\n" };
      case "badargs": {
        const name = (c.request.tools?.[0]?.function.name as string | undefined) ?? "finish";
        const call = { id: `call_${textDigest(`${c.key}:badargs`).slice(0, 24)}`, type: "function" as const, function: { name, arguments: '{"patient": "S' } };
        return { status: 200, body: completions.shape(c, { role: "assistant", content: null, tool_calls: [call] }, about) };
      }
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer | null, arrived: number) => {
    const requestId = `req_${textDigest(`${o.seed}:${requests++}`).slice(0, 24)}`;
    try {
      if (raw === null) throw new ApiError(413, `request body larger than ${o.maxBodyBytes} bytes`, "invalid_request_error", "request_too_large");
      const path = (req.url ?? "/").split("?")[0]!.replace(/\/+$/, "");
      if (path === "/v1/models" || path.startsWith("/v1/models/")) {
        if (req.method !== "GET") throw new ApiError(405, `${req.method} ${path}: use GET`, "invalid_request_error", "method_not_allowed");
        authorise(req);
        if (path === "/v1/models") return send(res, requestId, { status: 200, body: models() }, arrived);
        const id = decodeURIComponent(path.slice("/v1/models/".length));
        const model = models().data.find((m) => m.id === id);
        if (!model) throw new ApiError(404, `The model \`${id}\` does not exist: this ehrgym stand-in serves ${o.models.join(", ")}`, "invalid_request_error", "model_not_found", "model");
        return send(res, requestId, { status: 200, body: model }, arrived);
      }
      if (path === "/v1/chat/completions") {
        if (req.method !== "POST") throw new ApiError(405, `${req.method} ${path}: use POST`, "invalid_request_error", "method_not_allowed");
        authorise(req);
        return chat(req, raw, res, requestId, arrived);
      }
      throw new ApiError(404, `no route ${req.method} ${path}: the ehrgym stand-in serves GET /v1/models and POST /v1/chat/completions`, "invalid_request_error", "not_found");
    } catch (e) {
      const status = httpStatusOf(e);
      const err =
        e instanceof ApiError ? e
        : status !== undefined ? new ApiError(status, (e as Error).message, "invalid_request_error", null)
        : new ApiError(500, `ehrgym stand-in internal error: ${e instanceof Error ? e.message : String(e)}`, "server_error", null);
      send(res, requestId, { status: err.status, body: err.body(), headers: err.headers }, arrived + delay());
    }
  };

  const server = createServer((req, res) => {
    const arrived = performance.now();
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > o.maxBodyBytes) tooBig = true;
      else chunks.push(chunk);
    });
    req.on("end", () => closed || handle(req, res, tooBig ? null : Buffer.concat(chunks), arrived));
    req.on("error", () => res.destroy());
  });
  server.keepAliveTimeout = 30_000;
  await once(server.listen(o.port, o.host), "listening");
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(":") ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}/v1`,
    port,
    models: o.models,
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export type TeacherServer = Awaited<ReturnType<typeof startTeacherServer>>;
export type { ChatCompletion };
