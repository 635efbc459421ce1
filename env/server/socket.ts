// OpenEnv's /ws session: one episode per WebSocket connection. Messages are JSON
// {type: "reset" | "step" | "state" | "close", data?}; replies {type: "observation" | "state" |
// "error", data}. The episode is deleted when the connection closes. `ws` (the Node WebSocket
// server most servers use: no native code, RFC 6455 complete, handles the upgrade on our own
// node:http server, so /ws shares the port, the token and the episode registry with the HTTP API).
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { HttpError } from "./errors.ts";
import { OpenEnvSession } from "./openenv.ts";
import type { EpisodeService } from "./service.ts";

const digest = (s: string) => createHash("sha256").update(s).digest();

function reject(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ error: message });
  socket.end(`HTTP/1.1 ${status} ${status === 401 ? "Unauthorized" : "Not Found"}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** Serves /ws on `server`; returns a function that closes every open session. */
export function attachOpenEnvSocket(server: Server, service: EpisodeService, options: { token?: string | undefined; maxBodyBytes: number }): () => void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxBodyBytes });
  const tokenDigest = options.token ? digest(options.token) : undefined;
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? "/").split("?")[0]!.replace(/\/+$/, "");
    if (path !== "/ws") return reject(socket, 404, `no WebSocket route ${path} (OpenEnv's session is /ws)`);
    if (tokenDigest) {
      const given = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1]?.trim();
      if (!given || !timingSafeEqual(digest(given), tokenDigest)) return reject(socket, 401, "missing or wrong bearer token (Authorization: Bearer <token>)");
    }
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, new OpenEnvSession(service, true)));
  });
  return () => {
    for (const ws of wss.clients) ws.terminate();
    wss.close();
  };
}

function serve(ws: WebSocket, session: OpenEnvSession): void {
  // Messages are handled one at a time, in order (a step must not overtake its reset).
  let queue = Promise.resolve();
  ws.on("message", (raw, isBinary) => {
    queue = queue.then(() => handle(ws, session, isBinary ? null : raw.toString()));
  });
  ws.on("close", () => {
    queue = queue.then(() => session.close());
  });
}

async function handle(ws: WebSocket, session: OpenEnvSession, text: string | null): Promise<void> {
  const send = (type: string, data: unknown) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type, data }));
  };
  let msg: { type?: unknown; data?: unknown };
  try {
    if (text === null) throw new Error("binary frames are not accepted; send JSON text");
    msg = JSON.parse(text) as typeof msg;
    if (msg === null || typeof msg !== "object") throw new Error("expected a JSON object");
  } catch (e) {
    return send("error", { message: `Invalid JSON: ${(e as Error).message}`, code: "INVALID_JSON" });
  }
  try {
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
        return send("error", { message: `Unknown message type: ${JSON.stringify(msg.type)} (reset, step, state, close)`, code: "UNKNOWN_TYPE" });
    }
  } catch (e) {
    const err = e instanceof HttpError ? e : undefined;
    send("error", {
      message: err ? err.message : `internal error: ${(e as Error).message}`,
      code: err?.status === 400 ? "VALIDATION_ERROR" : "EXECUTION_ERROR",
      ...(err?.field ? { field: err.field } : {}),
      ...(err ? { status: err.status } : {}),
    });
  }
}
