// A small client for any FHIR R4 server over HTTP (the official HAPI image, ehrgym's own server, ...).
//
//   const fhir = new RemoteFhir("http://localhost:8080/fhir/");
//   const r = await fhir.request({ method: "GET", path: "Observation?code=A1C&patient=S6500497" });
//   for await (const page of fhir.pages("Observation?patient=S6500497&_count=500")) { ... }
//   for await (const resource of fhir.searchAll("Patient", "_count=1000")) { ... }
//
// `request` speaks the same FhirRequest/FhirResponse shapes as the embedded FhirService, so a
// remote server and the embedded one are interchangeable behind one interface. It never throws
// for an HTTP error status (the reply is returned as is); only transport failures throw
// (RemoteFhirError with status 0). The JSON helpers (`json`, `pages`, `searchAll`) throw
// RemoteFhirError on non-2xx replies. Connections are kept alive (undici's global fetch pool).
import { parseLossless } from "./lossless.ts";
import type { FhirRequest, FhirResource, FhirResponse } from "./types.ts";

export interface RemoteFhirOptions {
  /** Extra headers on every request (e.g. Authorization). */
  headers?: Record<string, string>;
  /** Per-request timeout in ms (default 60 s). */
  timeoutMs?: number;
  /** Retries for transport errors and 5xx/429 replies on idempotent requests (default 2). */
  retries?: number;
}

export class RemoteFhirError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly text = "",
  ) {
    super(message);
    this.name = "RemoteFhirError";
  }
}

export interface BundleLink {
  relation: string;
  url: string;
}

export interface Bundle extends FhirResource {
  resourceType: "Bundle";
  total?: number;
  link?: BundleLink[];
  entry?: { fullUrl?: string; resource?: FhirResource; search?: { mode?: string } }[];
}

const RETRY_STATUSES = new Set([429, 502, 503, 504]);

export class RemoteFhir {
  /** Base URL, always ending with "/". */
  readonly baseUrl: string;
  private readonly basePathname: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly retries: number;

  constructor(baseUrl: string, options: RemoteFhirOptions = {}) {
    let parsed: URL;
    try {
      parsed = new URL(baseUrl);
    } catch {
      throw new RemoteFhirError(0, `not a valid FHIR base URL: ${JSON.stringify(baseUrl)}`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new RemoteFhirError(0, `FHIR base URL must be http(s): ${JSON.stringify(baseUrl)}`);
    }
    parsed.search = "";
    parsed.hash = "";
    if (!parsed.pathname.endsWith("/")) parsed.pathname += "/";
    this.baseUrl = parsed.toString();
    this.basePathname = parsed.pathname;
    this.headers = { Accept: "application/fhir+json", ...options.headers };
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retries = options.retries ?? 2;
  }

  /** One interaction; `path` is relative to the base ("Patient/S1", "Observation?code=K"). */
  async request(req: FhirRequest): Promise<FhirResponse> {
    const url = this.baseUrl + req.path.replace(/^\/+/, "");
    const headers: Record<string, string> = { ...this.headers };
    if (req.body !== undefined) headers["Content-Type"] = "application/fhir+json;charset=utf-8";
    const idempotent = req.method !== "POST";
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(url, { method: req.method, headers, body: req.body, signal: AbortSignal.timeout(this.timeoutMs) });
      } catch (err) {
        if (idempotent && attempt < this.retries) {
          await sleep(100 * 2 ** attempt);
          continue;
        }
        const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
        throw new RemoteFhirError(0, `${req.method} ${url} failed: ${cause}`);
      }
      const text = await res.text();
      if (idempotent && attempt < this.retries && RETRY_STATUSES.has(res.status)) {
        await sleep(100 * 2 ** attempt);
        continue;
      }
      const out: Record<string, string> = {};
      res.headers.forEach((value, key) => {
        out[canonicalHeader(key)] = value;
      });
      return { status: res.status, headers: out, text };
    }
  }

  /** GET `path` and parse the JSON reply (decimal lexemes kept); throws RemoteFhirError unless 2xx. */
  async json<T = FhirResource>(path: string): Promise<T> {
    const res = await this.request({ method: "GET", path });
    if (res.status < 200 || res.status > 299) {
      throw new RemoteFhirError(res.status, `GET ${this.baseUrl}${path} -> ${res.status}: ${diagnosticsOf(res.text)}`, res.text);
    }
    try {
      return parseLossless(res.text) as T;
    } catch (err) {
      throw new RemoteFhirError(res.status, `GET ${this.baseUrl}${path}: reply is not JSON (${(err as Error).message})`, res.text);
    }
  }

  /** The server's CapabilityStatement (`GET metadata`). */
  capabilities(): Promise<FhirResource> {
    return this.json("metadata");
  }

  /** Resource types the server declares in its CapabilityStatement (rest[].resource[].type). */
  async resourceTypes(): Promise<string[]> {
    const cap = (await this.capabilities()) as { rest?: { resource?: { type?: string }[] }[] };
    const types = new Set<string>();
    for (const rest of cap.rest ?? []) for (const r of rest.resource ?? []) if (r.type) types.add(r.type);
    return [...types];
  }

  /** Every page of a search, starting at `path` and following `next` links until there is none. */
  async *pages(path: string): AsyncGenerator<Bundle> {
    let next: string | undefined = path;
    while (next !== undefined) {
      const bundle: Bundle = await this.json<Bundle>(next);
      if (bundle.resourceType !== "Bundle") throw new RemoteFhirError(200, `GET ${next}: expected a Bundle, got ${bundle.resourceType}`);
      yield bundle;
      const link = nextLink(bundle);
      next = link === undefined ? undefined : this.relativize(link);
    }
  }

  /** Every resource matched by `Type?query`, across all pages (entries with search.mode "match" or no mode). */
  async *searchAll(type: string, query = ""): AsyncGenerator<FhirResource> {
    for await (const page of this.pages(query ? `${type}?${query}` : type)) {
      for (const e of page.entry ?? []) {
        if (e.resource && (e.search?.mode === undefined || e.search.mode === "match")) yield e.resource;
      }
    }
  }

  /** A link the server returned (absolute, possibly naming another host, e.g. HAPI behind a proxy
   *  or Docker port mapping) as a path relative to this client's base. */
  relativize(link: string): string {
    if (link.startsWith(this.baseUrl)) return link.slice(this.baseUrl.length);
    let u: URL;
    try {
      u = new URL(link, this.baseUrl);
    } catch {
      return link;
    }
    // HAPI writes paging links as "{base without slash}?_getpages=...".
    const path =
      `${u.pathname}/` === this.basePathname
        ? ""
        : u.pathname.startsWith(this.basePathname)
          ? u.pathname.slice(this.basePathname.length)
          : u.pathname.replace(/^\/+/, "");
    return path + u.search;
  }
}

/** The `next` link of a search Bundle, if any. */
export function nextLink(bundle: Bundle): string | undefined {
  return bundle.link?.find((l) => l.relation === "next")?.url;
}

function diagnosticsOf(text: string): string {
  try {
    const o = JSON.parse(text) as { issue?: { diagnostics?: string }[] };
    const d = o.issue?.map((i) => i.diagnostics).filter(Boolean).join("; ");
    if (d) return d;
  } catch {
    /* not JSON */
  }
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

function canonicalHeader(key: string): string {
  return key.replace(/(^|-)([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase());
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
