// The immutable base store and its builder.
import { ID_RE, sortHits, type Engine, type Hit } from "./engine.ts";
import { scanTable } from "./execute.ts";
import { stringifyCompact } from "./json.ts";
import { parseLossless } from "./lossless.ts";
import { OverlayImpl } from "./overlay.ts";
import { parseSearch, type ParsedSearch } from "./query.ts";
import { DEFAULT_SCAN_LIMIT, runSync, type Scan } from "./scan.ts";
import { NUMERIC_ID, TableBuilder, type TypeTable } from "./table.ts";
import type { FhirResource, FhirStore, FhirStoreBuilder, Overlay, SearchHits } from "./types.ts";

type R = Record<string, unknown>;

export interface StoreOptions {
  /** Largest `_count` accepted (default 5000); also the cap of FhirReader.search. */
  maxCount?: number;
  /** Render every resource's reply text at build instead of on first use (slower load, flat latency). */
  prerender?: boolean;
  /** Resources one search may read without an index before it is refused as too costly (default 50,000). */
  scanLimit?: number;
}

export class BaseStore implements FhirStore, Engine {
  readonly size: number;
  /** Next id for created resources: beyond every base numeric id. Shared by all overlays. */
  private nextId: number;

  constructor(
    private readonly tables: Map<string, TypeTable>,
    readonly maxCount: number,
    /** Past every base numeric id. */
    readonly firstFreeId: number,
    readonly scanLimit: number = DEFAULT_SCAN_LIMIT,
  ) {
    let n = 0;
    for (const t of tables.values()) n += t.size;
    this.size = n;
    this.nextId = firstFreeId;
  }

  allocateId(): string {
    return String(this.nextId++);
  }

  table(type: string): TypeTable | undefined {
    return this.tables.get(type);
  }

  types(): string[] {
    return [...this.tables.keys()];
  }

  countsByType(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [type, t] of this.tables) out[type] = t.size;
    return out;
  }

  newOverlay(): Overlay {
    return new OverlayImpl(this);
  }

  *scanRows(parsed: ParsedSearch): Scan<number[]> {
    const t = this.tables.get(parsed.type);
    return t ? yield* scanTable(t, parsed.criteria, this.scanLimit) : [];
  }

  findHits(parsed: ParsedSearch): Hit[] {
    return sortHits(this.tables.get(parsed.type), runSync(this.scanRows(parsed)), parsed.sort);
  }

  scanHits(parsed: ParsedSearch): Scan<Hit[]> {
    return this.scanRows(parsed);
  }

  lookup(type: string, id: string): number | undefined {
    return this.tables.get(type)?.idIndex.get(id);
  }

  read(type: string, id: string): FhirResource | undefined {
    const t = this.tables.get(type);
    const row = t?.idIndex.get(id);
    return row === undefined ? undefined : (t!.parse(row) as FhirResource);
  }

  byPatient(type: string, patientId: string): FhirResource[] {
    const t = this.tables.get(type);
    const rows = t?.patients.get(`Patient/${patientId}`);
    return rows ? Array.from(rows, (r) => t!.parse(r) as FhirResource) : [];
  }

  search(type: string, query: string): SearchHits {
    const parsed = parseSearch(type, query, this);
    const hits = this.findHits(parsed);
    const t = this.tables.get(type);
    const n = Math.min(hits.length, parsed.count ?? this.maxCount);
    const resources: FhirResource[] = [];
    for (let i = 0; i < n; i++) resources.push(t!.parse(hits[i] as number) as FhirResource);
    return { total: hits.length, resources };
  }
}

export class StoreBuilder implements FhirStoreBuilder {
  /** Per type: rows being added, or a finished table adopted whole (from an index sidecar). */
  private readonly tables = new Map<string, TableBuilder | TypeTable>();
  private nextNumeric = 1;
  private count = 0;
  private built = false;

  constructor(private readonly options: StoreOptions) {}

  get size(): number {
    return this.count;
  }

  private tableFor(type: string): TableBuilder {
    let t = this.tables.get(type);
    if (t instanceof TableBuilder) return t;
    // More rows of an adopted type: continue as if its file had been parsed (same map position).
    t = t ? TableBuilder.fromTable(t) : new TableBuilder(type);
    this.tables.set(type, t);
    return t;
  }

  /** Does the builder hold rows of `type` already? */
  hasType(type: string): boolean {
    return this.tables.has(type);
  }

  /**
   * Take a finished table of a type the builder holds no rows of (from an index sidecar), as if
   * its rows had been added: `maxNumericId` is its largest numeric id (null: none).
   */
  adoptTable(table: TypeTable, maxNumericId: number | null): void {
    if (this.built) throw new Error("store builder already built");
    if (this.tables.has(table.type)) throw new Error(`the builder already holds ${table.type} rows`);
    this.tables.set(table.type, table);
    if (maxNumericId !== null) this.nextNumeric = Math.max(this.nextNumeric, maxNumericId + 1);
    this.count += table.size;
  }

  private check(r: unknown): asserts r is R & { resourceType: string } {
    if (this.built) throw new Error("store builder already built");
    if (r === null || typeof r !== "object" || Array.isArray(r)) throw new Error("a resource must be a JSON object");
    const type = (r as R).resourceType;
    if (typeof type !== "string" || !/^[A-Z][A-Za-z]+$/.test(type)) throw new Error(`invalid resourceType ${JSON.stringify(type)}`);
    const id = (r as R).id;
    if (id !== undefined && (typeof id !== "string" || !ID_RE.test(id))) throw new Error(`invalid id ${JSON.stringify(id)} for ${type}`);
  }

  private add(r: R & { resourceType: string }, compact: string): FhirResource {
    const id = r.id as string;
    const table = this.tableFor(r.resourceType);
    if (table.idIndex.has(id)) throw new Error(`duplicate resource ${r.resourceType}/${id}`);
    if (NUMERIC_ID.test(id)) this.nextNumeric = Math.max(this.nextNumeric, Number(id) + 1);
    table.add(id, compact, r);
    this.count++;
    return r as FhirResource;
  }

  private withId(r: R & { resourceType: string }): R & { resourceType: string } {
    const { resourceType, id: _drop, ...rest } = r;
    return { resourceType, id: String(this.nextNumeric), ...rest };
  }

  addText(json: string): FhirResource {
    let r: unknown;
    try {
      r = JSON.parse(json);
    } catch (e) {
      throw new Error(`invalid JSON: ${(e as Error).message}`);
    }
    this.check(r);
    if (r.id === undefined) {
      // Rare path: keep number lexemes while inserting the id.
      return this.addResourceChecked(this.withId(parseLossless(json) as R & { resourceType: string }), undefined);
    }
    return this.add(r, json);
  }

  addResource(resource: FhirResource): FhirResource {
    this.check(resource);
    return this.addResourceChecked(resource.id === undefined ? this.withId(resource) : resource, undefined);
  }

  private addResourceChecked(r: R & { resourceType: string }, text: string | undefined): FhirResource {
    const compact = text ?? stringifyCompact(r);
    // Index what the text says (as a load of the text would), not the object: they differ for
    // values that serialize as something else (a Date, a toJSON). Returns the object given.
    this.add(JSON.parse(compact) as R & { resourceType: string }, compact);
    return r as FhirResource;
  }

  build(): FhirStore {
    if (this.built) throw new Error("store builder already built");
    this.built = true;
    const tables = new Map<string, TypeTable>();
    for (const [type, t] of this.tables) {
      const table = t instanceof TableBuilder ? t.finish() : t;
      if (this.options.prerender) table.prerender();
      tables.set(type, table);
    }
    this.tables.clear();
    return new BaseStore(tables, this.options.maxCount ?? 5000, this.nextNumeric, this.options.scanLimit);
  }
}

export function createStoreBuilder(options: StoreOptions = {}): FhirStoreBuilder {
  return new StoreBuilder(options);
}
