// FHIR REST over node:http: a thin, allocation-light mapping of HTTP requests onto a FhirService
// (or anything with the same `handle`), so the embedded store can stand in for the official
// MedAgentBench HAPI Docker image at http://HOST:PORT/fhir/.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { nestedDeeperThan, nestingMessage } from "../util/index.ts";
import { FhirError, type FhirRequest, type FhirResponse, type Overlay } from "./types.ts";
import { httpStatusOf } from "../util/index.ts";

export const FHIR_CONTENT_TYPE = "application/fhir+json;charset=utf-8";

/** What the HTTP layer needs from a request handler: FhirService, or a peer adapter (may be async). */
export interface FhirHandler {
  handle(req: FhirRequest, overlay?: Overlay): FhirResponse | Promise<FhirResponse>;
}

export interface FhirHttpServerOptions {
  /** The handler, or a factory called once with the served base URL (needed when port is 0:
   *  links in replies must name the address actually listened on). */
  service: FhirHandler | ((baseUrl: string) => FhirHandler | Promise<FhirHandler>);
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** URL path prefix of the FHIR base, with leading and trailing slash. Default "/fhir/". */
  basePath?: string;
  /** Writes over HTTP go to this overlay (e.g. one per server, so the base store stays untouched). */
  overlay?: Overlay;
  /** Request bodies larger than this get 413. Default 16 MiB. */
  maxBodyBytes?: number;
}

export interface FhirHttpServer {
  /** The FHIR base URL, e.g. http://127.0.0.1:8080/fhir/ */
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  close(): Promise<void>;
}

const METHODS = new Set(["GET", "POST", "PUT", "DELETE"]);
/** Beyond this many bytes of an oversized body we stop draining and drop the connection. */
const DRAIN_LIMIT_FACTOR = 4;

/** HAPI-style pretty OperationOutcome text. */
export function operationOutcomeText(diagnostics: string, code = "processing", severity = "error"): string {
  return (
    `{\n  "resourceType": "OperationOutcome",\n  "issue": [ {\n    "severity": ${JSON.stringify(severity)},\n` +
    `    "code": ${JSON.stringify(code)},\n    "diagnostics": ${JSON.stringify(diagnostics)}\n  } ]\n}`
  );
}

function outcome(status: number, diagnostics: string, code?: string): FhirResponse {
  return { status, headers: {}, text: operationOutcomeText(diagnostics, code) };
}

function normalizeBasePath(basePath: string): string {
  let p = basePath.startsWith("/") ? basePath : `/${basePath}`;
  if (!p.endsWith("/")) p += "/";
  return p;
}

function hostForUrl(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** Start listening; resolves once the socket is bound and the handler is ready. */
export async function startFhirHttpServer(options: FhirHttpServerOptions): Promise<FhirHttpServer> {
  const host = options.host ?? "127.0.0.1";
  const basePath = normalizeBasePath(options.basePath ?? "/fhir/");
  const baseNoSlash = basePath.slice(0, -1);
  const maxBody = options.maxBodyBytes ?? 16 * 1024 * 1024;
  const overlay = options.overlay;
  let handler: FhirHandler | undefined = typeof options.service === "function" ? undefined : options.service;

  const send = (res: ServerResponse, r: FhirResponse, method: string, baseUrl: string): void => {
    const headers: Record<string, string | number> = { "Content-Type": FHIR_CONTENT_TYPE };
    for (const k in r.headers) headers[k] = r.headers[k]!;
    const loc = r.headers["Location"] ?? r.headers["location"];
    if (loc !== undefined && !/^[a-z][a-z0-9+.-]*:/i.test(loc)) headers["Location"] = baseUrl + loc.replace(/^\/+/, "");
    headers["Content-Length"] = Buffer.byteLength(r.text);
    res.writeHead(r.status, headers);
    res.end(method === "HEAD" ? undefined : r.text);
  };

  const dispatch = (res: ServerResponse, method: string, freq: FhirRequest, baseUrl: string): void => {
    let result: FhirResponse | Promise<FhirResponse>;
    try {
      result = handler!.handle(freq, overlay);
    } catch (err) {
      send(res, errorResponse(err), method, baseUrl);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (r) => send(res, r, method, baseUrl),
        (err: unknown) => send(res, errorResponse(err), method, baseUrl),
      );
    } else {
      send(res, result, method, baseUrl);
    }
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse, baseUrl: string): void => {
    const rawMethod = req.method ?? "GET";
    const method = rawMethod === "HEAD" ? "GET" : rawMethod;
    const target = relativeTarget(req.url ?? "/", basePath, baseNoSlash);
    if (typeof target !== "string") {
      req.resume();
      send(res, target, rawMethod, baseUrl);
      return;
    }
    if (!METHODS.has(method)) {
      req.resume();
      send(res, { ...outcome(405, `Method ${rawMethod} is not supported; use GET, POST, PUT or DELETE`), headers: { Allow: "GET, POST, PUT, DELETE, HEAD" } }, rawMethod, baseUrl);
      return;
    }
    if (method === "GET" || method === "DELETE") {
      // A GET/DELETE body carries no meaning; drain it so the connection stays usable.
      if (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0") req.resume();
      else if (req.headers["transfer-encoding"] !== undefined) req.resume();
      dispatch(res, rawMethod, { method: method as FhirRequest["method"], path: target }, baseUrl);
      return;
    }
    readBody(req, maxBody, (body) => {
      if (typeof body !== "string") {
        send(res, body, rawMethod, baseUrl);
        return;
      }
      const bad = checkJsonBody(body);
      if (bad) {
        send(res, bad, rawMethod, baseUrl);
        return;
      }
      dispatch(res, rawMethod, { method: method as FhirRequest["method"], path: target, body }, baseUrl);
    }, () => {
      res.shouldKeepAlive = false;
      send(res, outcome(413, `Request body exceeds the limit of ${maxBody} bytes`, "too-costly"), rawMethod, baseUrl);
    });
  };

  let baseUrl = "";
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    try {
      onRequest(req, res, baseUrl);
    } catch (err) {
      // Never let one request take the server down.
      if (!res.headersSent) send(res, errorResponse(err), req.method ?? "GET", baseUrl);
      else res.destroy();
    }
  });
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : 400;
    const text = operationOutcomeText(`Malformed HTTP request: ${err.code ?? err.message}`);
    socket.end(
      `HTTP/1.1 ${status} ${status === 431 ? "Request Header Fields Too Large" : "Bad Request"}\r\n` +
        `Content-Type: ${FHIR_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://${hostForUrl(host)}:${port}${basePath}`;
  if (typeof options.service === "function") {
    try {
      handler = await options.service(baseUrl);
    } catch (err) {
      server.close();
      throw err;
    }
  }

  return {
    url: baseUrl,
    port,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The request target relative to the FHIR base ("Patient?x=1"), or an error reply. */
function relativeTarget(url: string, basePath: string, baseNoSlash: string): string | FhirResponse {
  let path = url;
  if (!path.startsWith("/")) {
    // absolute-form (proxy style): http://host:port/fhir/...
    const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(path);
    if (!m) return outcome(400, `Malformed URL: ${JSON.stringify(url)}`);
    path = path.slice(m[0].length) || "/";
  }
  if (path.includes("%")) {
    try {
      decodeURIComponent(path);
    } catch {
      return outcome(400, `Malformed URL: invalid percent-encoding in ${JSON.stringify(url)}`);
    }
  }
  const hash = path.indexOf("#");
  if (hash >= 0) path = path.slice(0, hash);
  if (path.startsWith(basePath)) return path.slice(basePath.length);
  if (path === baseNoSlash || path.startsWith(`${baseNoSlash}?`)) return path.slice(baseNoSlash.length);
  return outcome(404, `Unknown path ${JSON.stringify(path.split("?")[0])}: the FHIR base is ${basePath}`, "not-found");
}

function readBody(req: IncomingMessage, max: number, done: (body: string | FhirResponse) => void, tooLarge: () => void): void {
  const declared = Number(req.headers["content-length"]);
  let size = 0;
  let over = Number.isFinite(declared) && declared > max;
  let answered = false;
  const chunks: Buffer[] = [];
  const reject = (): void => {
    if (answered) return;
    answered = true;
    tooLarge();
  };
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (over || size > max) {
      over = true;
      chunks.length = 0;
      // Drain a moderately oversized body so the client can read the 413; give up on a huge one.
      if (size > max * DRAIN_LIMIT_FACTOR) {
        req.pause();
        reject();
      }
      return;
    }
    chunks.push(chunk);
  });
  req.on("end", () => {
    if (over) return reject();
    if (answered) return;
    answered = true;
    const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const text = buf.toString("utf8");
    if (text.includes("\uFFFD") && !Buffer.from(text, "utf8").equals(buf)) {
      return done(outcome(400, "Request body is not valid UTF-8"));
    }
    done(text);
  });
  req.on("error", () => {
    /* client went away; nothing to answer */
  });
}

function checkJsonBody(body: string): FhirResponse | undefined {
  if (body.trim() === "") return outcome(400, "Request body is empty: expected a FHIR resource as JSON");
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    return outcome(400, `Failed to parse request body as JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    return outcome(400, "Request body must be a JSON object (a FHIR resource)");
  }
  if (nestedDeeperThan(parsed)) return outcome(400, `Request body is ${nestingMessage()}`);
  return undefined;
}

function errorResponse(err: unknown): FhirResponse {
  if (err instanceof FhirError) return outcome(err.status, err.diagnostics);
  const status = httpStatusOf(err);
  if (status !== undefined) return outcome(status, (err as Error).message);
  const msg = err instanceof Error ? err.message : String(err);
  return outcome(500, `Internal server error: ${msg}`, "exception");
}
