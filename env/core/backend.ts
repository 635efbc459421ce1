// Where an episode's FHIR requests go. A backend is shared by every episode; `open()` gives one
// episode its own write scope, and closing that scope is the rollback.
import type { FhirHandler, FhirReader, FhirRequest, FhirResponse, FhirStore, Overlay } from "../fhir/index.ts";
import type { Task } from "../tasks/index.ts";

/** One episode's connection: reads see the base plus the episode's own writes. */
export interface EpisodeConnection {
  request(req: FhirRequest): FhirResponse | Promise<FhirResponse>;
  /** The chart as the episode sees it (base + its writes), where the backend can read it in process. */
  chart?(): FhirReader | undefined;
  /** Undo/forget every write of the episode. Idempotent. */
  close(): void | Promise<void>;
}

export interface Backend {
  /** FHIR base URL with a trailing slash, e.g. http://localhost:8080/fhir/ */
  readonly apiBase: string;
  open(): EpisodeConnection | Promise<EpisodeConnection>;
  /** The data as it was before the episode (what graders read; never the episode's writes). */
  gradingReader(task: Task): FhirReader | Promise<FhirReader>;
}

export const DEFAULT_API_BASE = "http://localhost:8080/fhir/";

/** The in-memory store: each episode writes into its own overlay; dropping it is the O(1) rollback. */
export class EmbeddedBackend implements Backend {
  /** `service` must render links with `apiBase` (create it with the same baseUrl). */
  constructor(
    readonly store: FhirStore,
    readonly service: FhirHandler,
    readonly apiBase: string = DEFAULT_API_BASE,
  ) {}

  open(): EpisodeConnection {
    return new OverlayConnection(this.store.newOverlay(), this.service);
  }

  gradingReader(): FhirReader {
    return this.store;
  }
}

class OverlayConnection implements EpisodeConnection {
  constructor(
    private overlay: Overlay | undefined,
    private readonly service: FhirHandler,
  ) {}

  request(req: FhirRequest): FhirResponse | Promise<FhirResponse> {
    if (!this.overlay) throw new Error("episode connection is closed");
    return this.service.handle(req, this.overlay);
  }

  chart(): FhirReader | undefined {
    return this.overlay;
  }

  close(): void {
    this.overlay = undefined;
  }
}
