// One episode's writes over the immutable base: a map of changed records per type.
// Reads and searches merge base hits (minus changed ids) with matching overlay records.
import { CREATED_ORDER_BASE, ID_RE, hitResource, orderOf, sortHits, type Engine, type Hit, type OverlayRecord } from "./engine.ts";
import { stringifyCompact } from "./json.ts";
import { singlePatient } from "./execute.ts";
import { matchesAll } from "./matcher.ts";
import { parseSearch, type ParsedSearch } from "./query.ts";
import { runSync, type Scan } from "./scan.ts";
import { searchParams } from "./search-params.ts";
import { LIVE_STAMPS, type Stamps } from "./stamps.ts";
import type { BaseStore } from "./store.ts";
import { FhirError, type FhirResource, type Overlay, type SearchHits } from "./types.ts";
import { validateWrite } from "./validate.ts";

type R = Record<string, unknown>;

const NO_RECORDS: ReadonlySet<OverlayRecord> = new Set();

/** An overlay's writes; made on its first write (most episodes only read, and a server keeps thousands open). */
interface Changes {
  records: Map<string, Map<string, OverlayRecord>>;
  /** type -> "Patient/id" -> live (not deleted) records of that patient: patient searches check only these. */
  byPatientRef: Map<string, Map<string, Set<OverlayRecord>>>;
  /** type -> base rows this overlay updated or deleted (created records never reuse a base id). */
  changedRows: Map<string, Set<number>>;
}

export class OverlayImpl implements Overlay, Engine {
  private changes: Changes | undefined;
  private created = 0;
  writes = 0;

  constructor(private readonly base: BaseStore) {}

  get maxCount(): number {
    return this.base.maxCount;
  }

  get scanLimit(): number {
    return this.base.scanLimit;
  }

  table(type: string) {
    return this.base.table(type);
  }

  lookup(type: string, id: string): Hit | "deleted" | undefined {
    const rec = this.changes?.records.get(type)?.get(id);
    if (rec) return rec.deleted ? "deleted" : rec;
    return this.base.lookup(type, id);
  }

  findHits(parsed: ParsedSearch): Hit[] {
    return sortHits(this.base.table(parsed.type), runSync(this.scanHits(parsed)), parsed.sort);
  }

  *scanHits(parsed: ParsedSearch): Scan<Hit[]> {
    const rows = yield* this.base.scanRows(parsed);
    const changed = this.changes?.records.get(parsed.type);
    if (!changed || changed.size === 0) return rows;
    const patient = singlePatient(parsed.criteria);
    const candidates = patient === undefined ? changed.values() : (this.changes!.byPatientRef.get(parsed.type)?.get(patient) ?? NO_RECORDS).values();
    const mine: OverlayRecord[] = [];
    for (const rec of candidates) if (!rec.deleted && matchesAll(rec.resource, parsed.criteria)) mine.push(rec);
    const changedRows = this.changes!.changedRows.get(parsed.type);
    if (mine.length === 0 && !changedRows?.size) return rows;
    mine.sort((a, b) => a.order - b.order);
    const merged: Hit[] = [];
    let j = 0;
    for (const row of rows) {
      if (changedRows?.has(row)) continue;
      while (j < mine.length && mine[j]!.order < row) merged.push(mine[j++]!);
      merged.push(row);
    }
    while (j < mine.length) merged.push(mine[j++]!);
    return merged;
  }

  read(type: string, id: string): FhirResource | undefined {
    const h = this.lookup(type, id);
    if (h === undefined || h === "deleted") return undefined;
    return hitResource(this.base.table(type), h) as FhirResource;
  }

  byPatient(type: string, patientId: string): FhirResource[] {
    const def = searchParams(type).get("patient");
    if (!def || def.type !== "reference") return [];
    const parsed: ParsedSearch = {
      type,
      criteria: [{ def, modifier: "", values: [`Patient/${patientId}`] }],
      count: undefined,
      sort: [],
      summaryCount: false,
      total: undefined,
      pretty: true,
      params: [],
    };
    const table = this.base.table(type);
    return this.findHits(parsed).map((h) => hitResource(table, h) as FhirResource);
  }

  search(type: string, query: string): SearchHits {
    const parsed = parseSearch(type, query, this);
    const hits = this.findHits(parsed);
    const table = this.base.table(type);
    const n = Math.min(hits.length, parsed.count ?? this.maxCount);
    const resources: FhirResource[] = [];
    for (let i = 0; i < n; i++) resources.push(hitResource(table, hits[i]!) as FhirResource);
    return { total: hits.length, resources };
  }

  private record(type: string, id: string, order: number, version: number, body: R, stamps: Stamps): OverlayRecord {
    const { resourceType: _t, id: _i, meta, ...rest } = body;
    const oldMeta = meta !== null && typeof meta === "object" ? (meta as R) : {};
    const { versionId: _v, lastUpdated: _l, source, ...otherMeta } = oldMeta;
    const resource: R = {
      resourceType: type,
      id,
      meta: { versionId: String(version), lastUpdated: stamps.now(), ...otherMeta, source: typeof source === "string" ? source : stamps.source(type, id, version) },
      ...rest,
    };
    const patientDef = searchParams(type).get("patient");
    const patients = patientDef?.type === "reference" ? patientDef.refs(resource) : [];
    const rec: OverlayRecord = { type, id, order, version, deleted: false, resource, text: stringifyCompact(resource), patients };
    this.put(rec);
    return rec;
  }

  /** Store a record (or tombstone), replacing the previous one in the patient index. */
  private put(rec: OverlayRecord): void {
    const changes = (this.changes ??= { records: new Map(), byPatientRef: new Map(), changedRows: new Map() });
    let m = changes.records.get(rec.type);
    if (!m) changes.records.set(rec.type, (m = new Map()));
    let index = changes.byPatientRef.get(rec.type);
    if (!index) changes.byPatientRef.set(rec.type, (index = new Map()));
    const prev = m.get(rec.id);
    if (prev) for (const p of prev.patients) index.get(p)?.delete(prev);
    if (!rec.deleted) {
      for (const p of rec.patients) {
        let set = index.get(p);
        if (!set) index.set(p, (set = new Set()));
        set.add(rec);
      }
    }
    m.set(rec.id, rec);
    if (rec.order < CREATED_ORDER_BASE) {
      let rows = changes.changedRows.get(rec.type);
      if (!rows) changes.changedRows.set(rec.type, (rows = new Set()));
      rows.add(rec.order);
    }
    this.writes++;
  }

  private plain(rec: OverlayRecord): FhirResource {
    return JSON.parse(rec.text) as FhirResource;
  }

  /** Create with a new numeric id; returns the stored resource. Throws FhirError on invalid input. */
  createRecord(resource: unknown, stamps: Stamps = LIVE_STAMPS): OverlayRecord {
    const type = resource !== null && typeof resource === "object" ? (resource as R).resourceType : undefined;
    validateWrite(typeof type === "string" ? type : "Resource", resource);
    const id = stamps.newId(this.base.firstFreeId, this.created, () => this.base.allocateId());
    return this.record(resource.resourceType, id, CREATED_ORDER_BASE + this.created++, 1, resource, stamps);
  }

  create(resource: FhirResource): FhirResource {
    return this.plain(this.createRecord(resource));
  }

  updateRecord(type: string, id: string, resource: unknown, stamps: Stamps = LIVE_STAMPS): { rec: OverlayRecord; created: boolean } {
    if (!ID_RE.test(id)) throw new FhirError(400, `Invalid resource id "${id}"`);
    validateWrite(type, resource);
    if (resource.id !== undefined && resource.id !== id)
      throw new FhirError(400, `Resource body ID of "${String(resource.id)}" does not match URL ID of "${id}"`);
    const prev = this.changes?.records.get(type)?.get(id);
    if (prev) {
      const rec = this.record(type, id, prev.order, prev.version + 1, resource, stamps);
      return { rec, created: prev.deleted };
    }
    const row = this.base.lookup(type, id);
    if (row !== undefined) {
      const meta = this.base.read(type, id)?.meta;
      const version = Number(meta?.versionId ?? "1");
      return { rec: this.record(type, id, row, (Number.isFinite(version) ? version : 1) + 1, resource, stamps), created: false };
    }
    return { rec: this.record(type, id, CREATED_ORDER_BASE + this.created++, 1, resource, stamps), created: true };
  }

  update(type: string, id: string, resource: FhirResource): { resource: FhirResource; created: boolean } {
    const { rec, created } = this.updateRecord(type, id, resource);
    return { resource: this.plain(rec), created };
  }

  delete(type: string, id: string): boolean {
    const h = this.lookup(type, id);
    if (h === undefined || h === "deleted") return false;
    const order = orderOf(h);
    const version = typeof h === "number" ? 1 : h.version;
    this.put({ type, id, order, version: version + 1, deleted: true, resource: {}, text: "{}", patients: [] });
    return true;
  }
}
