// Dump every resource of a live FHIR server into one NDJSON file per type, resumably.
//
// Layout of the output folder while running:
//   .snapshot-state.json   what is done: per type the lines and bytes written and the next page link
//   Observation.ndjson.part  the type being fetched (appended page by page)
//   Patient.ndjson         finished types (renamed from .part when their last page is in)
// Killing the process at any point loses at most the page in flight: a re-run truncates the .part
// file to the last recorded length and continues from the recorded `next` link (or, when the
// server has forgotten that paging session, re-runs the search and skips what is already written).
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { stringifyCompact } from "./json.ts";
import { RemoteFhir, RemoteFhirError, nextLink, type Bundle } from "./remote.ts";
import { writeFileAtomic, UserError } from "../util/index.ts";

export const SNAPSHOT_STATE_FILE = ".snapshot-state.json";

export interface SnapshotOptions {
  /** FHIR base URL of the live server. */
  from: string;
  /** Output folder (created if missing). */
  out: string;
  /** Resource types to dump; default: every type in the server's CapabilityStatement. */
  types?: string[];
  /** Page size requested with `_count` (default 1000). */
  count?: number;
  /** Called after every page (and once per type when it starts). */
  onProgress?: (p: SnapshotProgress) => void;
  /** Stop after the page in flight; the state file then lets a later run resume. */
  signal?: AbortSignal;
  client?: RemoteFhir;
}

export interface SnapshotProgress {
  type: string;
  /** Resources written so far, all types (including ones from a previous interrupted run). */
  written: number;
  /** Sum of the servers' totals over all types, when the server reports them. */
  total: number | undefined;
  /** Resources written in this run (excludes what a previous run wrote): for rates/ETA. */
  writtenThisRun: number;
}

export interface SnapshotResult {
  counts: Record<string, number>;
  /** True when this run continued a previous one. */
  resumed: boolean;
  /** True when the signal stopped the run before the end. */
  interrupted: boolean;
  files: string[];
}

const TypeState = z.object({
  status: z.enum(["pending", "partial", "done"]),
  written: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  next: z.string().optional(),
  total: z.number().int().nonnegative().optional(),
});
const State = z.object({
  version: z.literal(1),
  from: z.string(),
  count: z.number().int().positive(),
  types: z.array(z.string()),
  progress: z.record(z.string(), TypeState),
});
type State = z.infer<typeof State>;
type TypeState = z.infer<typeof TypeState>;

export class SnapshotError extends UserError {}

const TYPE_NAME = /^[A-Z][A-Za-z]*$/;

export async function snapshotFhirServer(opts: SnapshotOptions): Promise<SnapshotResult> {
  const client = opts.client ?? new RemoteFhir(opts.from);
  const count = opts.count ?? 1000;
  mkdirSync(opts.out, { recursive: true });
  const statePath = join(opts.out, SNAPSHOT_STATE_FILE);

  let state: State;
  let resumed = false;
  if (existsSync(statePath)) {
    const parsed = State.safeParse(JSON.parse(readFileSync(statePath, "utf8")));
    if (!parsed.success) throw new SnapshotError(`${statePath} is not a snapshot state file: ${parsed.error.issues[0]?.message}`);
    state = parsed.data;
    if (normalizeBase(state.from) !== client.baseUrl) {
      throw new SnapshotError(`${opts.out} holds a snapshot of ${state.from}, not ${client.baseUrl}: use another output folder`);
    }
    if (opts.types && opts.types.join(",") !== state.types.join(",")) {
      throw new SnapshotError(`${opts.out} holds a snapshot of types [${state.types.join(", ")}]; resume with the same types or use another folder`);
    }
    resumed = true;
  } else {
    const types = opts.types ?? (await client.resourceTypes());
    for (const t of types) if (!TYPE_NAME.test(t)) throw new SnapshotError(`not a FHIR resource type: ${JSON.stringify(t)}`);
    if (types.length === 0) throw new SnapshotError(`${client.baseUrl}metadata lists no resource types; pass the types explicitly`);
    state = { version: 1, from: client.baseUrl, count, types, progress: {} };
    for (const t of types) state.progress[t] = { status: "pending", written: 0, bytes: 0 };
    saveState(statePath, state);
  }

  // Totals up front so the progress bar has an ETA (servers without _summary=count just lack it).
  let grandTotal: number | undefined = 0;
  for (const t of state.types) {
    const ts = state.progress[t]!;
    if (ts.total === undefined && ts.status !== "done") ts.total = await countOf(client, t);
    const known = ts.status === "done" ? ts.written : ts.total;
    grandTotal = known === undefined || grandTotal === undefined ? undefined : grandTotal + known;
  }
  saveState(statePath, state);

  let written = state.types.reduce((n, t) => n + state.progress[t]!.written, 0);
  let writtenThisRun = 0;
  const report = (type: string): void => opts.onProgress?.({ type, written, total: grandTotal, writtenThisRun });

  for (const type of state.types) {
    const ts = state.progress[type]!;
    if (ts.status === "done") continue;
    if (opts.signal?.aborted) break;
    report(type);
    const partPath = join(opts.out, `${type}.ndjson.part`);
    const fd = openSync(partPath, existsSync(partPath) ? "r+" : "w+");
    try {
      // Drop whatever a killed run appended after its last recorded page.
      if (statSync(partPath).size !== ts.bytes) ftruncateSync(fd, ts.bytes);
      let position = ts.bytes;
      let skip = 0;
      let researched = false;
      let path: string | undefined = ts.status === "partial" ? ts.next : `${type}?_count=${count}`;
      if (ts.status === "partial" && ts.next === undefined) path = undefined;
      while (path !== undefined) {
        if (opts.signal?.aborted) break;
        let bundle: Bundle;
        try {
          bundle = await client.json<Bundle>(path);
        } catch (err) {
          // A paging session the server no longer knows: search again and skip what we have.
          if (err instanceof RemoteFhirError && err.status >= 400 && err.status < 500 && !researched) {
            researched = true;
            path = `${type}?_count=${count}`;
            skip = ts.written;
            continue;
          }
          throw err;
        }
        if (bundle.resourceType !== "Bundle") throw new SnapshotError(`GET ${path}: expected a Bundle, got ${bundle.resourceType}`);
        let chunk = "";
        let lines = 0;
        for (const e of bundle.entry ?? []) {
          if (!e.resource || (e.search?.mode !== undefined && e.search.mode !== "match")) continue;
          if (skip > 0) {
            skip--;
            continue;
          }
          chunk += `${stringifyCompact(e.resource)}\n`;
          lines++;
        }
        if (chunk) position += writeSync(fd, chunk, position, "utf8");
        const link = nextLink(bundle);
        path = link === undefined ? undefined : client.relativize(link);
        ts.status = "partial";
        ts.written += lines;
        ts.bytes = position;
        ts.next = path;
        written += lines;
        writtenThisRun += lines;
        saveState(statePath, state);
        report(type);
      }
      if (path !== undefined) break; // interrupted
    } finally {
      closeSync(fd);
    }
    if (ts.written > 0) renameSync(partPath, join(opts.out, `${type}.ndjson`));
    else unlinkSync(partPath); // types without resources get no file, like an export
    ts.status = "done";
    delete ts.next;
    saveState(statePath, state);
  }

  const interrupted = state.types.some((t) => state.progress[t]!.status !== "done");
  const counts: Record<string, number> = {};
  const files: string[] = [];
  for (const t of state.types) {
    counts[t] = state.progress[t]!.written;
    if (state.progress[t]!.status === "done" && state.progress[t]!.written > 0) files.push(join(opts.out, `${t}.ndjson`));
  }
  return { counts, resumed, interrupted, files };
}

async function countOf(client: RemoteFhir, type: string): Promise<number | undefined> {
  try {
    const b = await client.json<Bundle>(`${type}?_summary=count`);
    return typeof b.total === "number" ? b.total : undefined;
  } catch {
    return undefined;
  }
}

function saveState(path: string, state: State): void {
  writeFileAtomic(path, `${JSON.stringify(state, null, 2)}\n`);
}

function normalizeBase(url: string): string {
  return new RemoteFhir(url).baseUrl;
}
