// The contract of the FHIR layer. Every other folder codes against these types
// (imported through env/fhir/index.ts), never against the store internals.

/** A parsed FHIR resource. Fresh objects: callers may mutate what they get. */
export interface FhirResource {
  resourceType: string;
  id?: string;
  meta?: { versionId?: string; lastUpdated?: string; source?: string; [k: string]: unknown };
  [key: string]: unknown;
}

/** One REST interaction, relative to the server base (no leading slash):
 *  "metadata", "Patient/S1", "Observation?code=K&patient=S1", "?_getpages=<uuid>&_getpagesoffset=20&_count=20". */
export interface FhirRequest {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  body?: string;
}

export interface FhirResponse {
  status: number;
  headers: Record<string, string>;
  /** The body exactly as HAPI would send it (pretty by default). */
  text: string;
}

export interface SearchHits {
  total: number;
  resources: FhirResource[];
}

/** Read access shared by the base store and an episode overlay (which sees base + its own writes). */
export interface FhirReader {
  read(type: string, id: string): FhirResource | undefined;
  /** Every resource of `type` whose subject/patient is Patient/`patientId`, in ascending id (load) order. */
  byPatient(type: string, patientId: string): FhirResource[];
  /** Full FHIR search semantics (FHIR.md) without paging: all matches up to the server's max count.
   *  `query` is the query string without "?", e.g. "code=K&patient=S1". Throws FhirError on bad input. */
  search(type: string, query: string): SearchHits;
}

/** Per-episode writes on top of the immutable base. Dropping the object is the rollback. */
export interface Overlay extends FhirReader {
  create(resource: FhirResource): FhirResource;
  update(type: string, id: string, resource: FhirResource): { resource: FhirResource; created: boolean };
  delete(type: string, id: string): boolean;
  /** Number of writes made so far. */
  readonly writes: number;
}

/** The immutable, indexed base store. */
export interface FhirStore extends FhirReader {
  readonly size: number;
  countsByType(): Record<string, number>;
  newOverlay(): Overlay;
}

/** Loads resources in order (load order = id order for numeric ids), then freezes into a FhirStore. */
export interface FhirStoreBuilder {
  /** One resource as JSON text. Number lexemes ("5.0") are kept for rendering. Ids are kept; a
   *  resource without an id gets the next numeric id. */
  addText(json: string): FhirResource;
  addResource(resource: FhirResource): FhirResource;
  readonly size: number;
  build(): FhirStore;
}

/** A 4xx/5xx answer with a HAPI-like OperationOutcome diagnostics text. */
export class FhirError extends Error {
  constructor(
    readonly status: number,
    readonly diagnostics: string,
    /** The OperationOutcome issue code. */
    readonly code: string = "processing",
  ) {
    super(diagnostics);
    this.name = "FhirError";
  }
}
