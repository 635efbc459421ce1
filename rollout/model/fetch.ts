// The `fetch` the model policy hands the openai client: undici's request API on a keep-alive Agent.
// The global fetch copies every request body through web streams (cloneAsUint8Array), and a turn's
// body is the whole conversation (~100 KB of FHIR bundles), resent each turn; undici.request writes
// it to the socket as it is. Bodies are read whole: the policy never streams.
import { Agent, request } from "undici";

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A fetch whose in-flight requests can all be ended at once (a run's Ctrl-C), without a signal per request. */
export interface AbortableFetch extends Fetch {
  /** Fails every request in flight (as a dropped connection); later requests go out on fresh connections. */
  abortAll(): void;
}

const agent = () =>
  new Agent({
    // No cap on connections per origin (undici's default, spelled out): every in-flight request gets a
    // socket of its own, so 256 concurrent turns never queue behind one another.
    connections: null,
    // The openai client's `timeout` is the one timeout (it aborts the signal); undici's own 300 s
    // limits would cut a longer --timeout short.
    headersTimeout: 0,
    bodyTimeout: 0,
  });

export function createFetch(): AbortableFetch {
  let dispatcher = agent();
  const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (input instanceof Request) throw new TypeError("createFetch(): pass a URL and RequestInit, not a Request");
    const body = init.body ?? undefined;
    if (body !== undefined && typeof body !== "string" && !(body instanceof Uint8Array)) throw new TypeError("createFetch(): the request body must be a string or bytes");
    const signal = init.signal ?? undefined;
    try {
      const res = await request(input, {
        dispatcher,
        method: (init.method ?? "GET") as "GET",
        headers: init.headers instanceof Headers ? init.headers : new Headers(init.headers),
        ...(body !== undefined ? { body } : {}),
        ...(signal ? { signal } : {}),
      });
      const bytes = await res.body.arrayBuffer();
      if (res.statusCode >= 200 && res.statusCode < 300 && !NULL_BODY_STATUS.has(res.statusCode)) return new Reply(String(input), res.statusCode, res.headers, bytes) as unknown as Response;
      const headers = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (Array.isArray(value)) for (const v of value) headers.append(name, v);
        else if (value !== undefined) headers.append(name, value);
      }
      return new Response(NULL_BODY_STATUS.has(res.statusCode) ? null : bytes, { status: res.statusCode, headers });
    } catch (err) {
      // What the global fetch rejects with: the signal's reason once aborted, else TypeError("fetch failed")
      // with the network error as its cause (the client and errors.ts read both).
      if (signal?.aborted) throw signal.reason;
      throw new TypeError("fetch failed", { cause: err });
    }
  };
  return Object.assign(fetch, {
    abortAll(): void {
      const old = dispatcher;
      dispatcher = agent();
      old.destroy(new Error("the run was interrupted")).catch(() => {});
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
 * without building undici's Response: its Headers (each name and value checked as appended) and its
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
