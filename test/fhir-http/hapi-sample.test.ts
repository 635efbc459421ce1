// Over HTTP, the embedded server answers the official harness's patient search byte for byte like
// HAPI (hapi/patient_search.txt), after masking the bundle id and meta.lastUpdated.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FhirService, startFhirHttpServer, type FhirHttpServer } from "../../env/fhir/index.ts";
import { describeShared, sharedFile } from "../helpers/shared.ts";
import { loadStore } from "./helpers.ts";

const OFFICIAL_BASE = "http://localhost:8080/fhir/";

/** The GET url and the reply text of one hapi/*.txt sample. */
function sample(name: string): { url: string; reply: string } {
  const text = readFileSync(sharedFile(`hapi/${name}`), "utf8");
  const url = /^GET (\S+)/.exec(text)![1]!;
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}. Please call FINISH");
  return { url, reply: text.slice(start, end + 1) };
}

function mask(text: string): string {
  return text
    .replace(/("resourceType": "Bundle",\n  "id": )"[^"]+"/, '$1"<id>"')
    .replace(/("meta": \{\n    "lastUpdated": )"[^"]+"/, '$1"<lastUpdated>"');
}

describeShared("HAPI parity over HTTP", () => {
  let server: FhirHttpServer;

  beforeAll(async () => {
    const store = await loadStore([sharedFile("patients_real.ndjson")]);
    // Bind "localhost" so links render as in the sample; only the port differs from the official 8080.
    server = await startFhirHttpServer({ service: (baseUrl) => new FhirService(store, { baseUrl }), host: "localhost" });
  });
  afterAll(() => server?.close());

  it("hapi/patient_search.txt: same bytes as the official server", async () => {
    const { url, reply } = sample("patient_search.txt");
    // The harness appends _format=json to every GET.
    const res = await fetch(`${url.replace(OFFICIAL_BASE, server.url)}&_format=json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/fhir+json;charset=utf-8");
    const got = (await res.text()).replaceAll(server.url, OFFICIAL_BASE);
    expect(mask(got)).toBe(mask(reply));
  });
});
