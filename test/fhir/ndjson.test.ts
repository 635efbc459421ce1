import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createFhirService, createStoreBuilder, exportNdjson, loadNdjson } from "../../env/fhir/index.ts";
import { CONDITIONS, OBSERVATIONS, PATIENTS } from "./fixture.ts";

const tmp = () => mkdtempSync(join(tmpdir(), "ehrgym-fhir-"));

describe("NDJSON import and export", () => {
  it("round-trips byte-stable, keeping number lexemes and id order", async () => {
    const dir = tmp();
    // out of id order on purpose, plus a blank line and a CRLF
    const input = [...PATIENTS, OBSERVATIONS[3], OBSERVATIONS[0], "", ...OBSERVATIONS.slice(1, 3), ...OBSERVATIONS.slice(4), ...CONDITIONS];
    writeFileSync(join(dir, "in.ndjson"), input.join("\r\n") + "\n");
    const b1 = createStoreBuilder();
    expect(await loadNdjson(join(dir, "in.ndjson"), b1)).toBe(11);
    const s1 = b1.build();
    expect(s1.countsByType()).toEqual({ Patient: 3, Observation: 7, Condition: 1 });
    const files = await exportNdjson(s1, join(dir, "out1"));
    expect(files.map((f) => f.split("/").pop())).toEqual(["Condition.ndjson", "Observation.ndjson", "Patient.ndjson"]);
    const obs = readFileSync(join(dir, "out1", "Observation.ndjson"), "utf8");
    expect(obs).toBe(OBSERVATIONS.join("\n") + "\n");
    expect(obs).toContain('"value":5.0,');
    // serving rows (which renders them) must not change the export
    createFhirService(s1).handleSync({ method: "GET", path: "Observation?_count=50" });
    await exportNdjson(s1, join(dir, "out1b"));
    const b2 = createStoreBuilder();
    await loadNdjson(files, b2);
    await exportNdjson(b2.build(), join(dir, "out2"));
    for (const f of readdirSync(join(dir, "out1"))) {
      expect(readFileSync(join(dir, "out2", f), "utf8")).toBe(readFileSync(join(dir, "out1", f), "utf8"));
      expect(readFileSync(join(dir, "out1b", f), "utf8")).toBe(readFileSync(join(dir, "out1", f), "utf8"));
    }
    expect(readdirSync(join(dir, "out1")).some((f) => f.includes(".tmp"))).toBe(false);
  });

  it("imports searchset Bundles (one per line or one pretty document) and assigns missing ids", async () => {
    const dir = tmp();
    const bundle = `{"resourceType":"Bundle","type":"searchset","entry":[${PATIENTS.map((p) => `{"resource":${p}}`).join(",")}]}`;
    writeFileSync(join(dir, "b.ndjson"), bundle + "\n");
    writeFileSync(join(dir, "pretty.json"), JSON.stringify({ resourceType: "Bundle", type: "collection", entry: [{ resource: JSON.parse(CONDITIONS[0]!) }] }, null, 2));
    writeFileSync(join(dir, "noid.ndjson"), `{"resourceType":"Observation","status":"final","code":{"text":"x"},"subject":{"reference":"Patient/S1000001"},"valueQuantity":{"value":7.10}}\n`);
    const b = createStoreBuilder();
    await loadNdjson([join(dir, "b.ndjson"), join(dir, "pretty.json"), join(dir, "noid.ndjson")], b);
    const s = b.build();
    expect(s.countsByType()).toEqual({ Patient: 3, Condition: 1, Observation: 1 });
    expect(s.read("Observation", "202")).toMatchObject({ id: "202", valueQuantity: { value: 7.1 } });
    const reply = createFhirService(s).handleSync({ method: "GET", path: "Observation/202" });
    expect(reply.text).toContain('"value": 7.10');
  });

  it("names the file and line of bad input", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "bad.ndjson"), `${PATIENTS[0]}\n{"resourceType":"Patient","id":"S1000001"}\n`);
    await expect(loadNdjson(join(dir, "bad.ndjson"), createStoreBuilder())).rejects.toThrow(/bad\.ndjson:2: duplicate resource Patient\/S1000001/);
    writeFileSync(join(dir, "bad2.ndjson"), `{"resourceType":"Patient",\n`);
    await expect(loadNdjson(join(dir, "bad2.ndjson"), createStoreBuilder())).rejects.toThrow(/bad2\.ndjson:1: invalid JSON/);
  });
});
