// Episodes against any FHIR R4 server (e.g. the official HAPI image). Reads pass through. Writes are
// either not sent at all (MedAgentEnv writes "record", the official behaviour) or sent and rolled back
// when the episode ends by deleting what it created, journaled on disk so that a killed process leaves
// nothing behind: RemoteBackend.create() replays the journal before the first episode.
import { randomUUID } from "node:crypto";
import { createStoreBuilder, RemoteFhir, stringifyCompact, type FhirReader, type FhirRequest, type FhirResponse, type FhirStore, type RemoteFhirOptions } from "../fhir/index.ts";
import type { Task } from "../tasks/index.ts";
import type { Backend, EpisodeConnection } from "./backend.ts";
import { Journal, readJournal, type JournalEntry } from "./journal.ts";

export interface RemoteBackendOptions {
  /** FHIR base URL of the server. */
  url: string;
  /** The api_base agents see (default: `url`). */
  apiBase?: string;
  /** Journal file for executed writes; without it, POSTs that reach the backend are refused. */
  journal?: string;
  /** What graders read. Default: fetched from the server per task (all patients, the task patient's
   *  chart), leaving out resources created by this backend's episodes. */
  gradingReader?: FhirReader;
  /** Types fetched for the task patient when building the grading reader. */
  gradingTypes?: string[];
  fhir?: RemoteFhirOptions;
}

export interface ReplayReport {
  deleted: number;
  failed: { type: string; id: string; status: number }[];
  unresolvedIntents: number;
}

const DEFAULT_GRADING_TYPES = ["Observation", "Condition", "MedicationRequest", "Procedure", "ServiceRequest"];

export class RemoteBackend implements Backend {
  readonly apiBase: string;
  readonly fhir: RemoteFhir;
  /** Every resource created by a live episode of this backend ("Type/id"). */
  private readonly live = new Set<string>();
  private patients: Promise<string[]> | undefined;

  private constructor(
    private readonly options: RemoteBackendOptions,
    private readonly journal: Journal | undefined,
  ) {
    this.fhir = new RemoteFhir(options.url, options.fhir);
    this.apiBase = options.apiBase ?? this.fhir.baseUrl;
  }

  /** Opens the backend; first deletes whatever a previous (crashed) process left in the journal. */
  static async create(options: RemoteBackendOptions): Promise<RemoteBackend & { replay: ReplayReport }> {
    const journal = options.journal ? new Journal(options.journal) : undefined;
    const backend = new RemoteBackend(options, journal) as RemoteBackend & { replay: ReplayReport };
    backend.replay = journal ? await backend.replayJournal(journal) : { deleted: 0, failed: [], unresolvedIntents: 0 };
    return backend;
  }

  private async replayJournal(journal: Journal): Promise<ReplayReport> {
    const pending = readJournal(journal.path);
    const report: ReplayReport = { deleted: 0, failed: [], unresolvedIntents: pending.unresolvedIntents };
    const left: JournalEntry[] = [];
    for (const c of pending.created.reverse()) {
      const res = await this.deleteQuietly(c.type, c.id);
      if (res.ok) report.deleted++;
      else {
        report.failed.push({ type: c.type, id: c.id, status: res.status });
        left.push({ op: "created", ...c });
      }
    }
    journal.rewrite(left);
    return report;
  }

  private async deleteQuietly(type: string, id: string): Promise<{ ok: boolean; status: number }> {
    try {
      const res = await this.fhir.request({ method: "DELETE", path: `${type}/${id}` });
      // Already gone counts as rolled back.
      return { ok: res.status < 300 || res.status === 404 || res.status === 410, status: res.status };
    } catch {
      return { ok: false, status: 0 };
    }
  }

  open(): EpisodeConnection {
    return new RemoteConnection(this, randomUUID());
  }

  /** @internal The create, journaled; `created` names what it made. */
  async createFor(episode: string, req: FhirRequest): Promise<{ res: FhirResponse; created?: { type: string; id: string } }> {
    if (!this.journal) {
      return { res: { status: 405, headers: {}, text: "RemoteBackend without a journal does not execute writes (use writes=record)" } };
    }
    const type = req.path.split(/[/?]/)[0]!;
    this.journal.append({ op: "intent", episode, type });
    const res = await this.fhir.request(req);
    const id = res.status < 300 ? createdId(res, type) : undefined;
    if (!id) return { res };
    this.journal.append({ op: "created", episode, type, id });
    this.live.add(`${type}/${id}`);
    return { res, created: { type, id } };
  }

  /** @internal Deletes what an episode created, newest first; what fails stays journaled for the next replay. */
  async rollback(episode: string, created: { type: string; id: string }[]): Promise<void> {
    for (const c of [...created].reverse()) {
      const res = await this.deleteQuietly(c.type, c.id);
      if (res.ok) {
        this.journal?.append({ op: "deleted", episode, type: c.type, id: c.id });
        this.live.delete(`${c.type}/${c.id}`);
      }
    }
  }

  async gradingReader(task: Task): Promise<FhirReader> {
    return this.options.gradingReader ?? this.fetchBase(task);
  }

  /** The patients plus the task patient's chart, as a small local store, without this backend's writes. */
  private async fetchBase(task: Task): Promise<FhirStore> {
    const builder = createStoreBuilder();
    this.patients ??= this.collect("Patient", "_count=1000");
    for (const text of await this.patients) builder.addText(text);
    if (task.eval_MRN) {
      for (const type of this.options.gradingTypes ?? DEFAULT_GRADING_TYPES) {
        for (const text of await this.collect(type, `patient=${encodeURIComponent(task.eval_MRN)}&_count=1000`)) builder.addText(text);
      }
    }
    return builder.build();
  }

  private async collect(type: string, query: string): Promise<string[]> {
    const out: string[] = [];
    for await (const r of this.fhir.searchAll(type, query)) {
      if (this.live.has(`${r.resourceType}/${r.id}`)) continue;
      out.push(stringifyCompact(r));
    }
    return out;
  }

  close(): void {
    this.journal?.close();
  }
}

function createdId(res: FhirResponse, type: string): string | undefined {
  try {
    const id = (JSON.parse(res.text) as { id?: unknown }).id;
    if (typeof id === "string" && id) return id;
  } catch {
    // fall back to the Location header
  }
  const loc = res.headers["Location"] ?? res.headers["location"] ?? res.headers["Content-Location"];
  const m = loc ? new RegExp(`${type}/([^/]+)`).exec(loc) : null;
  return m?.[1];
}

class RemoteConnection implements EpisodeConnection {
  private readonly created: { type: string; id: string }[] = [];
  private closed = false;

  constructor(
    private readonly backend: RemoteBackend,
    private readonly episode: string,
  ) {}

  async request(req: FhirRequest): Promise<FhirResponse> {
    if (this.closed) throw new Error("episode connection is closed");
    if (req.method === "GET") return this.backend.fhir.request(req);
    if (req.method !== "POST") return { status: 405, headers: {}, text: `RemoteBackend episodes only create (got ${req.method})` };
    const { res, created } = await this.backend.createFor(this.episode, req);
    if (created) this.created.push(created);
    return res;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.backend.rollback(this.episode, this.created);
  }
}
