// The `fetch` the model policy hands the openai client: undici's request API on a keep-alive Agent.
// The global fetch copies every request body through web streams (cloneAsUint8Array), and a turn's
// body is the whole conversation (~100 KB of FHIR bundles), resent each turn; undici.request writes
// it to the socket as it is. Bodies are read whole: the policy never streams.
import { Agent, request } from "undici";

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export function createFetch(): Fetch {
  const dispatcher = new Agent({
    // No cap on connections per origin (undici's default, spelled out): every in-flight request gets a
    // socket of its own, so 256 concurrent turns never queue behind one another.
    connections: null,
    // The openai client's `timeout` is the one timeout (it aborts the signal); undici's own 300 s
    // limits would cut a longer --timeout short.
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  return async (input, init = {}) => {
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
}
