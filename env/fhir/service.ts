// FhirService: one REST interaction in, the exact HAPI-style reply out. No HTTP here (see http-server.ts).
import { EntryTexts } from "./entries.ts";
import { renderBundle, renderOperationOutcome, type BundleLink, type BundleParts } from "./bundle.ts";
import { capabilityStatement } from "./capability.ts";
import { scanSort, topHits, type Engine, type Hit, type OverlayRecord } from "./engine.ts";
import { nestedDeeperThan, nestingMessage } from "../util/index.ts";
import { parseLossless } from "./lossless.ts";
import { OverlayImpl } from "./overlay.ts";
import { compactJson, prettyJson, reindent } from "./pretty.ts";
import { parseQueryString, parseSearch, type SortKey } from "./query.ts";
import { R4_RESOURCE_TYPES } from "./resource-types.ts";
import { runIncremental, runSync, type Scan } from "./scan.ts";
import { LIVE_STAMPS, REPRODUCIBLE_TIME, reproducibleStamps, type Stamps } from "./stamps.ts";
import { BaseStore } from "./store.ts";
import { ENTRY_INDENT, type TypeTable } from "./table.ts";
import { FhirError, type FhirRequest, type FhirResponse, type FhirStore, type Overlay } from "./types.ts";

export interface FhirServiceOptions {
  /** Server base URL used in fullUrl, links and Location (default http://localhost:8080/fhir/). */
  baseUrl?: string;
  /** Page size without _count (default 20). */
  defaultCount?: number;
  /** Largest _count (default: the store's, 5000). */
  maxCount?: number;
  /** How many searches keep their result list for _getpages (default 2000, oldest dropped first). */
  pageCacheSize?: number;
  /**
   * Replies that are the same bytes for the same requests in the same episode, in any process
   * (default false: random ids and the clock, as HAPI). Bundle and paging ids derive from the
   * episode's requests in order, every time is REPRODUCIBLE_TIME (or the instant given), created
   * resources are numbered per episode, and meta.source derives from the resource.
   */
  reproducible?: boolean | { time: string };
}

export const CONTENT_TYPE = "application/fhir+json;charset=utf-8";

interface PagedSearch {
  engine: Engine;
  table: TypeTable | undefined;
  type: string;
  /**
   * In id order until a later page is asked for, then sorted by `sort` (and `sort` emptied).
   * Base rows only (the usual case) are kept packed: a typed array's storage is outside the JS
   * heap, so the thousands of remembered lists are not copied by every young-generation GC.
   */
  hits: Hit[] | Int32Array;
  sort: SortKey[];
}

/** The hits as an Int32Array when all are base rows, else undefined. */
function packRows(hits: Hit[]): Int32Array | undefined {
  const out = new Int32Array(hits.length);
  for (let i = 0; i < hits.length; i++) {
    const h = hits[i]!;
    if (typeof h !== "number") return undefined;
    out[i] = h;
  }
  return out;
}

const PLAIN_PARAM = /^[A-Za-z0-9._*-]*$/;

/** Java URLEncoder-style escaping, as in HAPI's links. */
function escapeParam(v: string): string {
  if (PLAIN_PARAM.test(v)) return v;
  return encodeURIComponent(v)
    .replace(/[!'()~]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/%20/g, "+");
}

export class FhirService {
  readonly baseUrl: string;
  readonly defaultCount: number;
  readonly maxCount: number;
  private readonly base: BaseStore;
  private readonly serverOverlay: OverlayImpl;
  private readonly pages = new Map<string, PagedSearch>();
  /** Page ids in the order remembered, as a ring: the oldest is dropped when it is full. */
  private readonly pageRing: (string | undefined)[];
  private pageRingNext = 0;
  private readonly pageCacheSize: number;
  private readonly knownTypes: Set<string>;
  private metadataText: string | undefined;
  private readonly entryTexts: EntryTexts;
  private readonly stamps: Stamps;
  /** A number per engine (episode overlay): paged searches are keyed by it, as their ids may repeat across episodes. */
  private readonly engineNumbers = new WeakMap<Engine, number>();
  private engineCount = 0;

  constructor(store: FhirStore, options: FhirServiceOptions = {}) {
    if (!(store instanceof BaseStore)) throw new Error("FhirService needs a store from createStoreBuilder().build()");
    this.base = store;
    this.baseUrl = options.baseUrl ?? "http://localhost:8080/fhir/";
    if (!this.baseUrl.endsWith("/")) this.baseUrl += "/";
    this.entryTexts = new EntryTexts(this.baseUrl);
    this.maxCount = options.maxCount ?? store.maxCount;
    this.defaultCount = Math.min(options.defaultCount ?? 20, this.maxCount);
    this.pageCacheSize = options.pageCacheSize ?? 2000;
    this.pageRing = new Array<string | undefined>(Math.max(1, this.pageCacheSize));
    // Requests without an overlay share one: the standalone server's own writes.
    this.serverOverlay = store.newOverlay() as OverlayImpl;
    this.knownTypes = new Set([...R4_RESOURCE_TYPES, ...store.types()]);
    const r = options.reproducible;
    this.stamps = r ? reproducibleStamps(r === true ? REPRODUCIBLE_TIME : r.time) : LIVE_STAMPS;
  }

  get store(): FhirStore {
    return this.base;
  }

  /** The one time reproducible stamps carry (the calculator's today()/now() read it too); undefined when live. */
  get fixedTime(): string | undefined {
    return this.stamps === LIVE_STAMPS ? undefined : this.stamps.now();
  }

  /**
   * Answer one interaction; `overlay` is the episode's (default: the server's shared one). A search
   * that needs more than one slice of work answers with a Promise and scans between other requests.
   */
  handle(req: FhirRequest, overlay?: Overlay): FhirResponse | Promise<FhirResponse> {
    return runIncremental(this.dispatch(req, overlay));
  }

  /** `handle`, with any scan run to its end at once. */
  handleSync(req: FhirRequest, overlay?: Overlay): FhirResponse {
    return runSync(this.dispatch(req, overlay));
  }

  private *dispatch(req: FhirRequest, overlay: Overlay | undefined): Scan<FhirResponse> {
    let pretty = true;
    try {
      const engine = this.engineFor(overlay);
      let path = req.path;
      if (path.startsWith(this.baseUrl)) path = path.slice(this.baseUrl.length);
      while (path.startsWith("/")) path = path.slice(1);
      const qi = path.indexOf("?");
      const query = qi < 0 ? "" : path.slice(qi + 1);
      const route = (qi < 0 ? path : path.slice(0, qi)).replace(/\/+$/, "");
      pretty = !/(^|&)_pretty=false(&|$)/.test(query);
      const segments = route === "" ? [] : route.split("/");
      const [type, id, hist, vid] = segments;
      if (type === undefined) {
        if (req.method === "GET" && /(^|&)_getpages=/.test(query)) return yield* this.page(query, engine, pretty);
        throw new FhirError(400, `This is the base URL of a FHIR server. Unable to handle this request, as it does not contain a resource type or operation name.`);
      }
      if (type === "metadata" && segments.length === 1 && req.method === "GET") return this.metadata();
      if (!/^[A-Z][A-Za-z]+$/.test(type) || !this.knownTypes.has(type))
        throw new FhirError(404, `Unknown resource type '${type}' - Server knows how to handle: [${[...this.knownTypes].sort().join(", ")}]`);
      if (segments.length === 1) {
        if (req.method === "GET") return yield* this.search(type, query, engine);
        if (req.method === "POST") return this.create(type, req.body, engine, pretty);
      } else if (segments.length === 2 && id === "_search" && req.method === "POST") {
        return yield* this.search(type, [query, req.body ?? ""].filter(Boolean).join("&"), engine);
      } else if (segments.length === 2) {
        if (req.method === "GET") return this.read(type, id!, undefined, engine, pretty);
        if (req.method === "PUT") return this.update(type, id!, req.body, engine, pretty);
        if (req.method === "DELETE") return this.delete(type, id!, engine, pretty);
      } else if (segments.length === 4 && hist === "_history" && req.method === "GET") {
        return this.read(type, id!, vid, engine, pretty);
      }
      throw new FhirError(400, `Invalid request: The FHIR endpoint on this server does not know how to handle ${req.method} operation[${route}] with parameters [[${query}]]`);
    } catch (e) {
      return this.error(e, pretty);
    }
  }

  private engineFor(overlay: Overlay | undefined): OverlayImpl {
    if (overlay === undefined) return this.serverOverlay;
    if (!(overlay instanceof OverlayImpl)) throw new Error("overlay must come from store.newOverlay()");
    return overlay;
  }

  private reply(status: number, text: string, headers: Record<string, string> = {}): FhirResponse {
    return { status, headers: { "Content-Type": CONTENT_TYPE, ...headers }, text };
  }

  private bundleReply(parts: BundleParts, pretty: boolean): FhirResponse {
    return { status: 200, headers: { "Content-Type": CONTENT_TYPE }, text: renderBundle(parts, pretty) };
  }

  private error(e: unknown, pretty: boolean): FhirResponse {
    if (e instanceof FhirError) return this.reply(e.status, renderOperationOutcome("error", e.code, e.diagnostics, pretty));
    const message = e instanceof Error ? e.message : String(e);
    return this.reply(500, renderOperationOutcome("error", "exception", `Internal error: ${message}`, pretty));
  }

  private metadata(): FhirResponse {
    this.metadataText ??= capabilityStatement(this.base.types(), this.baseUrl);
    return this.reply(200, this.metadataText);
  }

  private selfLink(type: string, params: [string, string][]): string {
    if (params.length === 0) return this.baseUrl + type;
    const format = params.filter(([n]) => n === "_format");
    const rest = params.filter(([n]) => n !== "_format").sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return `${this.baseUrl}${type}?${[...format, ...rest].map(([n, v]) => `${n}=${escapeParam(v)}`).join("&")}`;
  }

  private pageLink(id: string, offset: number, count: number, pretty: boolean): string {
    return `${this.baseUrl}?_getpages=${id}&_getpagesoffset=${offset}&_count=${count}&_pretty=${pretty}&_bundletype=searchset`;
  }

  private pageKey(engine: Engine, id: string): string {
    let n = this.engineNumbers.get(engine);
    if (n === undefined) this.engineNumbers.set(engine, (n = this.engineCount++));
    return `${n} ${id}`;
  }

  private remember(p: PagedSearch, request: string): string {
    if (Array.isArray(p.hits)) p.hits = packRows(p.hits) ?? p.hits;
    const id = this.stamps.id(p.engine, `pages ${request}`);
    const key = this.pageKey(p.engine, id);
    const oldest = this.pageRing[this.pageRingNext];
    if (oldest !== undefined) this.pages.delete(oldest);
    this.pageRing[this.pageRingNext] = key;
    this.pageRingNext = (this.pageRingNext + 1) % this.pageRing.length;
    this.pages.set(key, p);
    return id;
  }

  private *search(type: string, query: string, engine: Engine): Scan<FhirResponse> {
    const parsed = parseSearch(type, query, { maxCount: this.maxCount });
    const matched = yield* engine.scanHits(parsed);
    const table = engine.table(type);
    const count = parsed.summaryCount ? 0 : (parsed.count ?? this.defaultCount);
    const shown = Math.min(count, matched.length);
    // A small first page is selected; otherwise sort once, for this page and the later ones.
    const selected = topHits(table, matched, parsed.sort, shown);
    const hits = selected ? matched : yield* scanSort(table, matched, parsed.sort, engine.scanLimit);
    const first = selected ?? hits;
    const links: BundleLink[] = [{ relation: "self", url: this.selfLink(type, parsed.params) }];
    if (shown < hits.length && count > 0) {
      const id = this.remember({ engine, table, type, hits, sort: selected ? parsed.sort : [] }, `${type}?${query}`);
      links.push({ relation: "next", url: this.pageLink(id, count, count, parsed.pretty) });
    }
    return this.bundleReply(
      {
        id: this.stamps.id(engine, `${type}?${query}`),
        lastUpdated: this.stamps.now(),
        total: parsed.total === "none" ? undefined : hits.length,
        links,
        entries: this.entryTexts.page(table, type, first, 0, shown),
      },
      parsed.pretty,
    );
  }

  private *page(query: string, engine: Engine, pretty: boolean): Scan<FhirResponse> {
    const params = new Map(parseQueryString(query));
    const id = params.get("_getpages")!;
    const p = this.pages.get(this.pageKey(engine, id));
    if (!p) throw new FhirError(410, `Search ID "${id}" does not exist and may have expired`);
    const int = (name: string, dflt: number) => {
      const raw = params.get(name);
      if (raw === undefined) return dflt;
      if (!/^\d+$/.test(raw)) throw new FhirError(400, `Invalid ${name} value "${raw}": expected a non-negative integer`);
      return Number(raw);
    };
    const offset = int("_getpagesoffset", 0);
    const count = int("_count", this.defaultCount);
    if (count > this.maxCount) throw new FhirError(400, `Invalid _count value "${count}": must be an integer from 0 to ${this.maxCount}`);
    if (p.sort.length) {
      const sorted = yield* scanSort(p.table, Array.isArray(p.hits) ? p.hits : Array.from(p.hits), p.sort, engine.scanLimit);
      p.hits = packRows(sorted) ?? sorted;
      p.sort = [];
    }
    const end = Math.min(p.hits.length, offset + count);
    const links: BundleLink[] = [{ relation: "self", url: `${this.baseUrl}?${query}` }];
    if (end < p.hits.length && count > 0) links.push({ relation: "next", url: this.pageLink(id, end, count, pretty) });
    if (offset > 0) links.push({ relation: "previous", url: this.pageLink(id, Math.max(0, offset - count), count, pretty) });
    const from = Math.min(offset, end);
    return this.bundleReply(
      { id: this.stamps.id(engine, `?${query}`), lastUpdated: this.stamps.now(), total: p.hits.length, links, entries: this.entryTexts.page(p.table, p.type, p.hits, from, end) },
      pretty,
    );
  }

  private resourceReply(status: number, table: TypeTable | undefined, h: Hit, pretty: boolean, extra: Record<string, string> = {}): FhirResponse {
    let text: string;
    let version: string;
    if (typeof h === "number") {
      text = pretty ? reindent(table!.entryText(h), ENTRY_INDENT, 0) : compactJson(table!.text(h));
      version = versionOf(table!, h);
    } else {
      text = pretty ? prettyJson(h.text) : h.text;
      version = String(h.version);
    }
    return this.reply(status, text, { ETag: `W/"${version}"`, ...extra });
  }

  private read(type: string, id: string, version: string | undefined, engine: Engine, pretty: boolean): FhirResponse {
    const h = engine.lookup(type, id);
    if (h === "deleted") throw new FhirError(410, `Resource was deleted at ${this.stamps.now()}`);
    if (h === undefined) throw new FhirError(404, `Resource ${type}/${id} is not known`);
    const table = engine.table(type);
    if (version !== undefined) {
      const current = typeof h === "number" ? versionOf(table!, h) : String(h.version);
      if (version !== current) throw new FhirError(404, `Version "${version}" is not known for resource ${type}/${id}`);
    }
    return this.resourceReply(200, table, h, pretty);
  }

  private parseBody(type: string, body: string | undefined): unknown {
    if (body === undefined || body.trim() === "") throw new FhirError(400, `No ${type} resource in the request body`);
    let plain: unknown;
    try {
      plain = JSON.parse(body);
    } catch (e) {
      throw new FhirError(400, `Failed to parse request body as JSON resource. Error was: ${(e as Error).message}`);
    }
    // The lossless parser recurses: a body nested thousands deep would overflow the stack.
    if (nestedDeeperThan(plain)) throw new FhirError(400, `Request body is ${nestingMessage()}`);
    return parseLossless(body);
  }

  private writeReply(status: number, engine: OverlayImpl, rec: OverlayRecord, pretty: boolean): FhirResponse {
    const location = `${this.baseUrl}${rec.type}/${rec.id}/_history/${rec.version}`;
    return this.resourceReply(status, engine.table(rec.type), rec, pretty, { Location: location, "Content-Location": location });
  }

  private create(type: string, body: string | undefined, engine: Engine, pretty: boolean): FhirResponse {
    const overlay = engine as OverlayImpl;
    const resource = this.parseBody(type, body);
    const rt = resource !== null && typeof resource === "object" ? (resource as Record<string, unknown>).resourceType : undefined;
    if (rt !== type) throw new FhirError(400, `Incorrect resource type found, expected "${type}" but found "${typeof rt === "string" ? rt : String(rt)}"`);
    return this.writeReply(201, overlay, overlay.createRecord(resource, this.stamps), pretty);
  }

  private update(type: string, id: string, body: string | undefined, engine: Engine, pretty: boolean): FhirResponse {
    const overlay = engine as OverlayImpl;
    const { rec, created } = overlay.updateRecord(type, id, this.parseBody(type, body), this.stamps);
    return this.writeReply(created ? 201 : 200, overlay, rec, pretty);
  }

  private delete(type: string, id: string, engine: Engine, pretty: boolean): FhirResponse {
    if (!(engine as OverlayImpl).delete(type, id)) throw new FhirError(404, `Resource ${type}/${id} is not known`);
    return this.reply(200, renderOperationOutcome("information", "informational", `Successfully deleted 1 resource(s)`, pretty));
  }
}

function versionOf(table: TypeTable, row: number): string {
  return /"versionId":\s*"([^"]*)"/.exec(table.text(row))?.[1] ?? "1";
}

export function createFhirService(store: FhirStore, options?: FhirServiceOptions): FhirService {
  return new FhirService(store, options);
}
