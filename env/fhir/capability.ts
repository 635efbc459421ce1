// GET metadata: a CapabilityStatement naming every served type, its interactions and search params.
import { prettyJson } from "./pretty.ts";
import { CORE_TYPES, searchParams } from "./search-params.ts";
import { nowInstant } from "./engine.ts";

export function capabilityStatement(types: string[], baseUrl: string): string {
  const all = [...new Set([...CORE_TYPES, ...types])].sort();
  const cs = {
    resourceType: "CapabilityStatement",
    status: "active",
    date: nowInstant(),
    publisher: "ehrgym",
    kind: "instance",
    software: { name: "ehrgym embedded FHIR server", version: "0.1.0" },
    implementation: { description: "ehrgym in-memory FHIR R4 server", url: baseUrl },
    fhirVersion: "4.0.1",
    format: ["application/fhir+json", "json"],
    rest: [
      {
        mode: "server",
        resource: all.map((type) => ({
          type,
          interaction: ["read", "vread", "create", "update", "delete", "search-type"].map((code) => ({ code })),
          searchParam: [...searchParams(type).values()].map((p) => ({ name: p.name, type: p.type })),
        })),
      },
    ],
  };
  return prettyJson(JSON.stringify(cs));
}
