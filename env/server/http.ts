// The HTTP layer (node:http, no framework, for throughput): routing, auth, body limits, codecs, errors.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import { decodeBody, encodeBody, replyEncoding, requestEncoding, type Encoding } from "./codec.ts";
import { asHttpError, badRequest, errorBody, HttpError } from "./errors.ts";

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
  /** Sent with every reply (e.g. the replica's name). */
  headers?: Record<string, string>;
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

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function pathSegments(path: string): string[] {
  const out: string[] = [];
  for (const s of path.split("/")) if (s.length > 0) out.push(decodeSegment(s));
  return out;
}

/** One request's state. A class, not closures made per request: the handler runs thousands of times a second. */
class Exchange {
  readonly started = performance.now();
  readonly method: string;
  readonly url: string;
  readonly q: number;
  readonly path: string;
  readonly segments: string[];
  routeName = "unmatched";
  route: Route | undefined;
  params: Record<string, string> | undefined;
  pathMatched = false;
  reply: Encoding;

  constructor(
    private readonly options: HttpOptions,
    private readonly tokenDigest: Buffer | undefined,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
  ) {
    this.url = req.url ?? "/";
    this.q = this.url.indexOf("?");
    this.path = this.q === -1 ? this.url : this.url.slice(0, this.q);
    this.segments = pathSegments(this.path);
    this.method = req.method ?? "GET";
    this.reply = replyEncoding(req.headers.accept, "json");
    for (const r of options.routes) {
      const p = match(r, this.segments);
      if (!p) continue;
      this.pathMatched = true;
      if (r.method === this.method) {
        this.route = r;
        this.params = p;
        this.routeName = r.name;
        break;
      }
    }
  }

  private authorized(): boolean {
    if (!this.tokenDigest) return true;
    const header = this.req.headers.authorization ?? "";
    const m = /^Bearer\s+(.+)$/i.exec(header);
    return m !== null && timingSafeEqual(digest(m[1]!.trim()), this.tokenDigest);
  }

  finish(status: number, body: Buffer | string, contentType: string, headers?: Record<string, string>): void {
    send(this.res, status, body, contentType, this.options.headers ? { ...this.options.headers, ...headers } : headers);
    this.options.onRequest?.(this.routeName, status, (performance.now() - this.started) / 1000);
  }

  fail(err: unknown): void {
    const e = asHttpError(err);
    const { body, contentType } = encodeBody(errorBody(e), this.reply);
    const headers = { ...e.headers };
    if (e.status === 401) headers["WWW-Authenticate"] = 'Bearer realm="ehrgym"';
    this.finish(e.status, body, contentType, headers);
    // An unread body would otherwise be parsed as the next request on this connection.
    if (!this.req.complete) this.req.resume();
  }

  async run(): Promise<void> {
    const { route, method, req } = this;
    if (!route) {
      const allowed = this.options.routes.filter((r) => match(r, this.segments)).map((r) => r.method);
      if (this.pathMatched) throw new HttpError(405, `method ${method} not allowed on ${this.path} (allowed: ${allowed.join(", ")})`, undefined, { Allow: allowed.join(", ") });
      throw new HttpError(404, `no route ${method} ${this.path}`);
    }
    if (!route.public && !this.authorized()) throw new HttpError(401, "missing or wrong bearer token (Authorization: Bearer <token>)", "Authorization");
    let body: unknown = {};
    if (method === "POST" || method === "PUT" || method === "PATCH") {
      const encoding = requestEncoding(req.headers["content-type"]);
      this.reply = replyEncoding(req.headers.accept, encoding);
      body = decodeBody(await readBody(req, this.options.maxBodyBytes), encoding);
    }
    const query = new URLSearchParams(this.q === -1 ? "" : this.url.slice(this.q + 1));
    const out = await route.handle({ method, segments: this.segments, query, body, headers: req.headers }, this.params!);
    if ("text" in out) {
      this.finish(out.status ?? 200, out.text, out.contentType);
    } else {
      const { body: encoded, contentType } = encodeBody(out.value, this.reply);
      this.finish(out.status ?? 200, encoded, contentType, out.headers);
    }
  }
}

export function createHandler(options: HttpOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const tokenDigest = options.token ? digest(options.token) : undefined;
  return (req, res) => {
    const exchange = new Exchange(options, tokenDigest, req, res);
    exchange.run().catch((err: unknown) => exchange.fail(err));
  };
}
