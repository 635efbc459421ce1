// The `fetch` the model policy hands the openai client: node:http(s) requests on keep-alive agents.
// The global fetch copies every request body through web streams (cloneAsUint8Array), and a turn's
// body is the whole conversation (~100 KB of FHIR bundles), resent each turn; here it is written to
// the socket as it is. Not undici.request: since 7.2x it writes each request on a reused connection
// only after a turn of the event loop (to check the idle socket first), so every turn started while
// a burst of replies is handled waits for the whole burst, and requests go out in waves (~25 ms a
// turn at 256 episodes in flight). Bodies are read whole: the policy never streams.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A fetch whose in-flight requests can all be ended at once (a run's Ctrl-C), without a signal per request. */
export interface AbortableFetch extends Fetch {
  /** Fails every request in flight (as a dropped connection); later requests go out on fresh connections. */
  abortAll(): void;
}

// No cap on connections (node's default, spelled out): every in-flight request gets a socket of its
// own, so 256 concurrent turns never queue behind one another. No timeout: the openai client's
// `timeout` is the one timeout (it aborts the signal).
const agents = () => ({ http: new HttpAgent({ keepAlive: true, maxSockets: Infinity }), https: new HttpsAgent({ keepAlive: true, maxSockets: Infinity }) });

export function createFetch(): AbortableFetch {
  let pool = agents();
  const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (input instanceof Request) throw new TypeError("createFetch(): pass a URL and RequestInit, not a Request");
    const body = init.body ?? undefined;
    if (body !== undefined && typeof body !== "string" && !(body instanceof Uint8Array)) throw new TypeError("createFetch(): the request body must be a string or bytes");
    const signal = init.signal ?? undefined;
    if (signal?.aborted) throw signal.reason;
    const url = typeof input === "string" ? new URL(input) : input;
    const https = url.protocol === "https:";
    if (!https && url.protocol !== "http:") throw new TypeError(`fetch failed`, { cause: new Error(`createFetch(): unsupported protocol ${url.protocol}`) });
    const headers: Record<string, string> = {};
    // The openai client passes a Headers already (names lower-case, values checked): read, not copied.
    (init.headers instanceof Headers ? init.headers : new Headers(init.headers)).forEach((value, name) => (headers[name] = value));
    if (body !== undefined) headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
    try {
      const res = await new Promise<{ status: number; headers: IncomingMessage["headers"]; bytes: Buffer }>((resolve, reject) => {
        const req = (https ? httpsRequest : httpRequest)(url, { method: init.method ?? "GET", headers, agent: https ? pool.https : pool.http });
        const onAbort = () => req.destroy(signal!.reason instanceof Error ? signal!.reason : new Error("aborted"));
        signal?.addEventListener("abort", onAbort, { once: true });
        const settle = () => signal?.removeEventListener("abort", onAbort);
        req.on("error", (err) => {
          settle();
          reject(err);
        });
        req.on("response", (message) => {
          const chunks: Buffer[] = [];
          message.on("data", (chunk: Buffer) => chunks.push(chunk));
          message.on("end", () => {
            settle();
            resolve({ status: message.statusCode ?? 0, headers: message.headers, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
          });
          message.on("error", (err) => {
            settle();
            reject(err);
          });
          // A connection dropped mid-reply: whichever of error and close comes first settles it.
          message.on("close", () => {
            settle();
            if (!message.complete) reject(new Error("the connection closed before the reply was complete"));
          });
        });
        req.end(body);
      });
      const bytes = res.bytes.buffer.slice(res.bytes.byteOffset, res.bytes.byteOffset + res.bytes.byteLength) as ArrayBuffer;
      if (res.status >= 200 && res.status < 300 && !NULL_BODY_STATUS.has(res.status)) return new Reply(url.href, res.status, res.headers, bytes) as unknown as Response;
      const replyHeaders = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (Array.isArray(value)) for (const v of value) replyHeaders.append(name, v);
        else if (value !== undefined) replyHeaders.append(name, value);
      }
      return new Response(NULL_BODY_STATUS.has(res.status) ? null : bytes, { status: res.status, headers: replyHeaders });
    } catch (err) {
      // What the global fetch rejects with: the signal's reason once aborted, else TypeError("fetch failed")
      // with the network error as its cause (the client and errors.ts read both).
      if (signal?.aborted) throw signal.reason;
      throw new TypeError("fetch failed", { cause: err });
    }
  };
  return Object.assign(fetch, {
    abortAll(): void {
      const old = pool;
      pool = agents();
      old.http.destroy();
      old.https.destroy();
    },
  });
}

/** Read-only headers of a reply, as `Headers` gives them: names lower-case, in sorted order, repeats joined with ", ". */
class ReplyHeaders {
  private readonly map: Map<string, string>;
  constructor(raw: Record<string, string | string[] | undefined>) {
    const pairs: [string, string][] = [];
    for (const [name, value] of Object.entries(raw)) {
      if (value === undefined) continue;
      pairs.push([name.toLowerCase(), Array.isArray(value) ? value.join(", ") : value]);
    }
    this.map = new Map(pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
  get(name: string): string | null {
    return this.map.get(name.toLowerCase()) ?? null;
  }
  has(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }
  entries(): IterableIterator<[string, string]> {
    return this.map.entries();
  }
  keys(): IterableIterator<string> {
    return this.map.keys();
  }
  values(): IterableIterator<string> {
    return this.map.values();
  }
  forEach(fn: (value: string, name: string, headers: ReplyHeaders) => void): void {
    for (const [name, value] of this.map) fn(value, name, this);
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.map.entries();
  }
}

const utf8 = new TextDecoder();

/**
 * A successful reply as the openai client reads it (status, headers, the body as JSON or text),
 * without building a fetch Response: its Headers (each name and value checked as appended) and its
 * body stream cost ~30 us a turn, about as much as the rest of the reply's handling. Error replies
 * are real Responses (the client reads more of them, rarely).
 */
class Reply {
  readonly ok = true;
  readonly statusText = "";
  readonly redirected = false;
  readonly type = "basic";
  readonly headers: ReplyHeaders;
  private used = false;
  constructor(
    readonly url: string,
    readonly status: number,
    raw: Record<string, string | string[] | undefined>,
    private readonly bytes: ArrayBuffer,
  ) {
    this.headers = new ReplyHeaders(raw);
  }
  get bodyUsed(): boolean {
    return this.used;
  }
  /** The body as a stream, made on demand (the client reads it only when streaming, which the policy never asks for). */
  get body(): ReadableStream<Uint8Array> | null {
    return this.used ? null : new Response(this.bytes).body;
  }
  private take(): ArrayBuffer {
    if (this.used) throw new TypeError("Body is unusable: Body has already been read");
    this.used = true;
    return this.bytes;
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    return this.take();
  }
  async text(): Promise<string> {
    return utf8.decode(this.take());
  }
  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
  async blob(): Promise<Blob> {
    return new Blob([this.take()], { type: this.headers.get("content-type") ?? "" });
  }
  clone(): Reply {
    if (this.used) throw new TypeError("Response.clone: Body has already been consumed.");
    return new Reply(this.url, this.status, Object.fromEntries(this.headers.entries()), this.bytes);
  }
}
