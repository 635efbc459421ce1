// The HTTP layer (node:http, no framework, for throughput): routing, auth, body limits, codecs, errors.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import { decodeBody, encodeBody, replyEncoding, requestEncoding, type Encoding } from "./codec.ts";
import { badRequest, HttpError } from "./errors.ts";

export interface Request {
  method: string;
  /** Path segments after the leading slash, e.g. ["v1", "episodes", "<id>", "step"]. */
  segments: string[];
  query: URLSearchParams;
  /** Decoded body ({} when empty). */
  body: unknown;
  headers: IncomingMessage["headers"];
}

/** A reply: a value to encode, or raw text (metrics). */
export type Reply = { status?: number; value: unknown; headers?: Record<string, string> } | { status?: number; text: string; contentType: string };

export interface Route {
  method: string;
  /** Segments; ":id" matches any single segment. */
  pattern: string[];
  name: string;
  /** Requests without a bearer token are allowed (health checks). */
  public?: boolean;
  handle(req: Request, params: Record<string, string>): Reply | Promise<Reply>;
}

export interface HttpOptions {
  routes: Route[];
  maxBodyBytes: number;
  token?: string;
  onRequest?: (route: string, status: number, seconds: number) => void;
}

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body);
  if (!result.success) throw badRequest(result.error, body);
  return result.data;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

function match(route: Route, segments: string[]): Record<string, string> | undefined {
  if (route.pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const p = route.pattern[i]!;
    if (p.startsWith(":")) params[p.slice(1)] = segments[i]!;
    else if (p !== segments[i]) return undefined;
  }
  return params;
}

/** Reads the body up to the limit; past it, drains (so the client can read the 413) or cuts a runaway. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => new HttpError(413, `body: larger than the limit of ${limit} bytes (--max-body)`, "body", { Connection: "close" });
    const declared = Number(req.headers["content-length"] ?? NaN);
    const drainCap = Math.max(limit * 8, 64 * 1024 * 1024);
    if (declared > drainCap) {
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = declared > limit;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      if (!over) chunks.push(chunk);
      else if (size > drainCap) {
        req.destroy();
        reject(tooLarge());
      }
    });
    req.on("end", () => (over ? reject(tooLarge()) : resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, status: number, body: Buffer | string, contentType: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { "Content-Type": contentType, "Content-Length": Buffer.byteLength(body), ...headers });
  res.end(body);
}

export function createHandler(options: HttpOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const tokenDigest = options.token ? digest(options.token) : undefined;

  const authorized = (req: IncomingMessage): boolean => {
    if (!tokenDigest) return true;
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    return match !== null && timingSafeEqual(digest(match[1]!.trim()), tokenDigest);
  };

  return (req, res) => {
    const started = performance.now();
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    const segments = path.split("/").filter((s) => s.length > 0).map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
    const method = req.method ?? "GET";

    let routeName = "unmatched";
    let route: Route | undefined;
    let params: Record<string, string> | undefined;
    let pathMatched = false;
    for (const r of options.routes) {
      const p = match(r, segments);
      if (!p) continue;
      pathMatched = true;
      if (r.method === method) {
        route = r;
        params = p;
        routeName = r.name;
        break;
      }
    }

    let encoding: Encoding = "json";
    let reply: Encoding = replyEncoding(req.headers.accept, "json");

    const finish = (status: number, body: Buffer | string, contentType: string, headers?: Record<string, string>) => {
      send(res, status, body, contentType, headers);
      options.onRequest?.(routeName, status, (performance.now() - started) / 1000);
    };
    const fail = (err: unknown) => {
      const e = err instanceof HttpError ? err : new HttpError(500, `internal error: ${err instanceof Error ? err.message : String(err)}`);
      const { body, contentType } = encodeBody(e.field ? { error: e.message, field: e.field } : { error: e.message }, reply);
      const headers = { ...e.headers };
      if (e.status === 401) headers["WWW-Authenticate"] = 'Bearer realm="ehrgym"';
      finish(e.status, body, contentType, headers);
      // An unread body would otherwise be parsed as the next request on this connection.
      if (!req.complete) req.resume();
    };

    const run = async () => {
      if (!route) {
        const allowed = options.routes.filter((r) => match(r, segments)).map((r) => r.method);
        if (pathMatched) throw new HttpError(405, `method ${method} not allowed on ${path} (allowed: ${allowed.join(", ")})`, undefined, { Allow: allowed.join(", ") });
        throw new HttpError(404, `no route ${method} ${path}`);
      }
      if (!route.public && !authorized(req)) throw new HttpError(401, "missing or wrong bearer token (Authorization: Bearer <token>)", "Authorization");
      let body: unknown = {};
      if (method === "POST" || method === "PUT" || method === "PATCH") {
        encoding = requestEncoding(req.headers["content-type"]);
        reply = replyEncoding(req.headers.accept, encoding);
        body = decodeBody(await readBody(req, options.maxBodyBytes), encoding);
      }
      const out = await route.handle({ method, segments, query: new URLSearchParams(q === -1 ? "" : url.slice(q + 1)), body, headers: req.headers }, params!);
      if ("text" in out) {
        finish(out.status ?? 200, out.text, out.contentType);
      } else {
        const { body: encoded, contentType } = encodeBody(out.value, reply);
        finish(out.status ?? 200, encoded, contentType, out.headers);
      }
    };
    run().catch(fail);
  };
}
