// The embedded server answers the official HAPI samples byte for byte (bundle id and time masked).
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { createFhirService, createStoreBuilder, loadNdjson } from "../../env/fhir/index.ts";
import { describeShared, sharedFile } from "../helpers/shared.ts";

function mask(text: string): string {
  return text.replace(/^( {2}"id": )"[0-9a-f-]{36}"/m, '$1"<id>"').replace(/^( {4}"lastUpdated": )"[^"]+"/m, '$1"<time>"');
}

/** The GET lines and the JSON body of a harness reply file. */
function sample(name: string): { gets: string[]; body: string } {
  const text = readFileSync(sharedFile(`hapi/${name}`), "utf8");
  const [head = ""] = text.split("\n\n");
  const gets = head.split("GET ").map((s) => s.trim()).filter(Boolean);
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  return { gets, body: start >= 0 ? text.slice(start, end + 1) : "" };
}

describeShared("byte-identical replies to the official HAPI samples", () => {
  const load = async () => {
    const b = createStoreBuilder();
    await loadNdjson([sharedFile("patients_real.ndjson"), sharedFile("observations_real_sample.ndjson")], b);
    return createFhirService(b.build());
  };

  for (const name of ["patient_search.txt", "empty_bundle.txt", "observation_search_multi.txt"]) {
    it(name, async () => {
      const service = await load();
      const { gets, body } = sample(name);
      const url = `${gets[gets.length - 1]}&_format=json`;
      const reply = service.handleSync({ method: "GET", path: url });
      expect(reply.status).toBe(200);
      expect(mask(reply.text)).toBe(mask(body));
    });
  }

  it("error_400.txt: the malformed request (date is not a date) gets a 400", async () => {
    const service = await load();
    const text = readFileSync(sharedFile("hapi/error_400.txt"), "utf8");
    const url = /for url: (\S+)/.exec(text)![1]!;
    const reply = service.handleSync({ method: "GET", path: url });
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.text).issue[0].diagnostics).toMatch(/^Invalid date\/time format: "le2023-11-13GET/);
  });
});
