// OpenEnv's /ws session: one episode per WebSocket connection. Messages are JSON
// {type: "reset" | "step" | "state" | "close", data?}; replies {type: "observation" | "state" |
// "error", data}. The episode is deleted when the connection closes. `ws` (the Node WebSocket
// server most servers use: no native code, RFC 6455 complete, handles the upgrade on our own
// node:http server, so /ws shares the port, the token and the episode registry with the HTTP API).
//
// Nothing a client sends ends more than its own connection: a frame that breaks RFC 6455 (unmasked,
// unknown opcode, bad UTF-8, over the body limit) is closed by `ws` with its status code (1002,
// 1007, 1009) and, here, a reason that is the JSON error body of the HTTP routes; a message that is
// not a valid request gets an error reply and the connection goes on.
import { createHash, timingSafeEqual } from "node:crypto";
import { STATUS_CODES, type IncomingMessage, type Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import { checkNesting, decodeValue } from "./codec.ts";
import { asHttpError, errorBody, HttpError } from "./errors.ts";
import type { InFlight } from "./inflight.ts";
import type { ServerMetrics } from "./metrics.ts";
import { OpenEnvSession } from "./openenv.ts";
import type { EpisodeService } from "./service.ts";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Answers an upgrade that is not served with an HTTP status and the JSON error body. */
function reject(socket: Duplex, status: number, message: string, field?: string): void {
  const body = JSON.stringify(errorBody(new HttpError(status, message, field)));
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** The close codes `ws` ends a connection with when a client breaks the protocol (RFC 6455 7.4.1). */
const PROTOCOL_CLOSE = new Set([1002, 1007, 1009]);
/** A close frame's reason holds at most 123 bytes. */
const MAX_REASON = 123;

function closeReason(code: number, err: Error | undefined, maxPayload: number): string {
  const message = code === 1009 ? `frame: larger than the limit of ${maxPayload} bytes (--max-body)` : `frame: ${err?.message ?? STATUS_CODES[400]}`;
  const body = (text: string) => JSON.stringify(errorBody(new HttpError(400, text, "frame")));
  let text = message;
  while (Buffer.byteLength(body(text)) > MAX_REASON) text = `${text.slice(0, -4)}...`.replace(/\.{4,}$/, "...");
  return body(text);
}

/**
 * `ws` closes a connection that broke the protocol before it emits the error that says why, with
 * the code only; this socket holds that close until the error is known and sends it as the reason.
 */
function socketClass(maxPayload: number): typeof WebSocket {
  return class SessionSocket extends WebSocket {
    private protocolError: Error | undefined;
    private closing = false;
    // Also the listener without which an 'error' event would throw and end the process.
    private readonly noteErrors = this.on("error", (err: Error) => (this.protocolError = err));

    override close(code?: number, data?: string | Buffer): void {
      if (code === undefined || data !== undefined || !PROTOCOL_CLOSE.has(code) || this.closing) return super.close(code, data);
      this.closing = true;
      // `ws` emits the error right after this call returns.
      queueMicrotask(() => super.close(code, closeReason(code, this.protocolError, maxPayload)));
    }
  };
}

/** Serves /ws on `server`; returns a function that closes every open session. */
export function attachOpenEnvSocket(server: Server, service: EpisodeService, options: { token?: string | undefined; maxBodyBytes: number; inFlight: InFlight }): () => void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxBodyBytes, WebSocket: socketClass(options.maxBodyBytes) });
  // Emitted only for errors of a server `ws` listens on itself (not ours); a listener keeps one from being thrown.
  wss.on("error", () => undefined);
  // A bad handshake (no key, wrong version, not GET) gets the JSON error body, not ws's HTML.
  wss.on("wsClientError", (err: Error, socket: Duplex, req: IncomingMessage) => reject(socket, req.method === "GET" ? 400 : 405, `WebSocket handshake: ${err.message}`));
  const tokenDigest = options.token ? digest(options.token) : undefined;
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // node:http hands the socket over without its error listener: a reset during the handshake must not throw.
    socket.on("error", () => socket.destroy());
    const path = (req.url ?? "/").split("?")[0]!.replace(/\/+$/, "");
    if (path !== "/ws") return reject(socket, 404, `no WebSocket route ${path} (OpenEnv's session is /ws)`);
    if (tokenDigest) {
      const given = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1]?.trim();
      if (!given || !timingSafeEqual(digest(given), tokenDigest)) return reject(socket, 401, "missing or wrong bearer token (Authorization: Bearer <token>)", "Authorization");
    }
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, new OpenEnvSession(service), options.inFlight, service.metrics));
  });
  return () => {
    for (const ws of wss.clients) ws.terminate();
    wss.close();
  };
}

function serve(ws: WebSocket, session: OpenEnvSession, inFlight: InFlight, metrics: ServerMetrics): void {
  metrics.wsSessions++;
  // Messages are handled one at a time, in order (a step must not overtake its reset).
  let queue = Promise.resolve();
  ws.on("message", (raw: Buffer, isBinary) => {
    inFlight.begin();
    queue = queue
      .then(async () => {
        const started = performance.now();
        const { type, outcome } = await handle(ws, session, isBinary ? null : raw);
        metrics.wsMessage(type, outcome, (performance.now() - started) / 1000);
      })
      .finally(() => inFlight.end());
  });
  ws.on("close", () => {
    metrics.wsSessions--;
    queue = queue.then(() => session.close());
  });
}

const MESSAGE_TYPES = new Set(["reset", "step", "state", "close"]);

/** OpenEnv's error codes (WSErrorCode) for this server's errors; `stage`: how far the message got. */
function openEnvCode(e: HttpError, stage: "frame" | "type" | "request"): string {
  if (stage === "frame") return "INVALID_JSON";
  if (stage === "type") return "UNKNOWN_TYPE";
  if (e.status === 400 || e.status === 413 || e.status === 415) return "VALIDATION_ERROR";
  if (e.status === 503 && e.code !== "draining") return "CAPACITY_REACHED";
  return "EXECUTION_ERROR";
}

/** Answers one message; returns what /metrics counts of it. */
async function handle(ws: WebSocket, session: OpenEnvSession, raw: Buffer | null): Promise<{ type: string; outcome: string }> {
  const send = (type: string, data: unknown) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type, data }));
  };
  let stage: "frame" | "type" | "request" = "frame";
  let type = "invalid";
  try {
    await answer();
    return { type, outcome: "ok" };
  } catch (err) {
    const e = asHttpError(err);
    // OpenEnv's clients read `message` and `code`; `error`, `field` and `status` are what the HTTP
    // routes answer, and `error_code` their `code` (unknown_episode, episode_exists, draining).
    const { code: errorCode, ...body } = errorBody(e);
    const code = openEnvCode(e, stage);
    send("error", { ...body, message: e.message, code, status: e.status, ...(errorCode ? { error_code: errorCode } : {}) });
    return { type, outcome: code };
  }

  async function answer(): Promise<void> {
    if (raw === null) throw new HttpError(400, "frame: binary frames are not accepted; send JSON text", "frame");
    const msg = decodeValue(raw, "json") as { type?: unknown; data?: unknown } | null;
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) throw new HttpError(400, "body: expected a JSON object {type, data?}", "body");
    stage = "request";
    checkNesting(msg);
    if (typeof msg.type === "string" && MESSAGE_TYPES.has(msg.type)) type = msg.type;
    switch (msg.type) {
      case "reset":
        return send("observation", await session.reset(msg.data));
      case "step":
        return send("observation", await session.step(msg.data));
      case "state":
        return send("state", session.state());
      case "close":
        session.close();
        ws.close(1000);
        return;
      default:
        stage = "type";
        throw new HttpError(400, `type: unknown message type ${JSON.stringify(msg.type ?? null).slice(0, 80)} (reset, step, state, close)`, "type");
    }
  }
}
