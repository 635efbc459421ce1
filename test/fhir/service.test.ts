import { describe, expect, it } from "vitest";
import { CONTENT_TYPE } from "../../env/fhir/index.ts";
import { fixtureService } from "./fixture.ts";

const get = (svc: ReturnType<typeof fixtureService>["service"], path: string) => svc.handleSync({ method: "GET", path });
const body = (text: string) => JSON.parse(text) as Record<string, any>;

describe("FhirService reads and searches", () => {
  const { service } = fixtureService();

  it("reads a resource pretty by default, compact with _pretty=false, 404 when missing", () => {
    const r = get(service, "Observation/103");
    expect(r.status).toBe(200);
    expect(r.headers["Content-Type"]).toBe(CONTENT_TYPE);
    expect(r.text).toContain('"value": 5.0,');
    expect(r.text.startsWith('{\n  "resourceType": "Observation",\n  "id": "103",')).toBe(true);
    const compact = get(service, "Observation/103?_pretty=false");
    expect(compact.text).toContain('"value":5.0,');
    expect(compact.text).not.toContain("\n");
    const missing = get(service, "Patient/S0000000");
    expect(missing.status).toBe(404);
    expect(body(missing.text)).toMatchObject({ resourceType: "OperationOutcome", issue: [{ severity: "error", diagnostics: "Resource Patient/S0000000 is not known" }] });
    expect(get(service, "Observation/103/_history/1").status).toBe(200);
    expect(get(service, "Observation/103/_history/2").status).toBe(404);
    expect(get(service, "Foo?x=1").status).toBe(404);
  });

  it("accepts the full base URL and a leading slash", () => {
    expect(get(service, "http://localhost:8080/fhir/Patient/S1000001").status).toBe(200);
    expect(get(service, "/Patient/S1000001").status).toBe(200);
  });

  it("renders a searchset with a sorted self link, total and entries", () => {
    const r = get(service, "Observation?patient=S1000001&code=A1C&_format=json");
    const b = body(r.text);
    expect(b).toMatchObject({ resourceType: "Bundle", type: "searchset", total: 1 });
    expect(b.link).toEqual([{ relation: "self", url: "http://localhost:8080/fhir/Observation?_format=json&code=A1C&patient=S1000001" }]);
    expect(b.entry[0]).toMatchObject({ fullUrl: "http://localhost:8080/fhir/Observation/103", search: { mode: "match" } });
    expect(b.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.meta.lastUpdated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    const escaped = body(get(service, "Observation?date=ge2023-11-12T10:15:00Z&code=http://loinc.org|K").text);
    expect(escaped.link[0].url).toBe("http://localhost:8080/fhir/Observation?code=http%3A%2F%2Floinc.org%7CK&date=ge2023-11-12T10%3A15%3A00Z");
  });

  it("answers _summary=count, _total=none and an empty result without entry", () => {
    const count = body(get(service, "Observation?code=K&_summary=count").text);
    expect(count.total).toBe(5);
    expect(count.entry).toBeUndefined();
    const none = body(get(service, "Observation?code=K&_total=none").text);
    expect(none.total).toBeUndefined();
    expect(none.entry).toHaveLength(3);
    const empty = get(service, "Observation?code=NOPE");
    expect(body(empty.text)).not.toHaveProperty("entry");
    expect(empty.text.endsWith('"url": "http://localhost:8080/fhir/Observation?code=NOPE"\n  } ]\n}')).toBe(true);
  });

  it("pages with HAPI's _getpages links until the end, with previous links", () => {
    const first = body(get(service, "Observation?code=K").text);
    expect(first.total).toBe(5);
    expect(first.entry.map((e: any) => e.resource.id)).toEqual(["101", "102", "104"]);
    const next = first.link.find((l: any) => l.relation === "next").url as string;
    expect(next).toMatch(/^http:\/\/localhost:8080\/fhir\/\?_getpages=[0-9a-f-]{36}&_getpagesoffset=3&_count=3&_pretty=true&_bundletype=searchset$/);
    const second = body(get(service, next).text);
    expect(second.entry.map((e: any) => e.resource.id)).toEqual(["105", "106"]);
    expect(second.link.map((l: any) => l.relation)).toEqual(["self", "previous"]);
    const id = /_getpages=([^&]+)/.exec(next)![1];
    const custom = body(get(service, `?_getpages=${id}&_getpagesoffset=1&_count=2`).text);
    expect(custom.entry.map((e: any) => e.resource.id)).toEqual(["102", "104"]);
    expect(get(service, "?_getpages=00000000-0000-0000-0000-000000000000&_getpagesoffset=3&_count=3").status).toBe(410);
    expect(get(service, `?_getpages=${id}&_getpagesoffset=x`).status).toBe(400);
  });

  it("returns 400 OperationOutcomes for malformed searches", () => {
    for (const q of ["Observation?foo=bar", "Observation?date=2023-02-30", "Observation?date=zz2023", "Observation?_count=99999", "Observation?code=%E0%A4%A"]) {
      const r = get(service, q);
      expect(r.status, q).toBe(400);
      expect(body(r.text).resourceType).toBe("OperationOutcome");
    }
    expect(body(get(service, "Observation?foo=bar").text).issue[0].diagnostics).toContain('Unknown search parameter "foo" for resource type "Observation"');
  });

  it("serves a CapabilityStatement at metadata", () => {
    const cs = body(get(service, "metadata").text);
    expect(cs.resourceType).toBe("CapabilityStatement");
    expect(cs.fhirVersion).toBe("4.0.1");
    const obs = cs.rest[0].resource.find((r: any) => r.type === "Observation");
    expect(obs.searchParam.map((p: any) => p.name)).toEqual(expect.arrayContaining(["patient", "code", "date", "category"]));
  });
});

describe("FhirService writes", () => {
  const vital = {
    resourceType: "Observation",
    status: "final",
    category: [{ coding: [{ system: "http://hl7.org/fhir/observation-category", code: "vital-signs" }] }],
    code: { text: "BP" },
    subject: { reference: "Patient/S1000002" },
    effectiveDateTime: "2023-11-13T10:15:00+00:00",
    valueString: "118/77 mmHg",
  };

  it("creates with 201, Location, a new numeric id and meta; the resource is then searchable", () => {
    const { service, store } = fixtureService();
    const overlay = store.newOverlay();
    const r = service.handleSync({ method: "POST", path: "Observation", body: JSON.stringify(vital).replace('"status"', '"x":1.50,"status"') }, overlay);
    expect(r.status).toBe(201);
    const created = body(r.text);
    expect(Number(created.id)).toBeGreaterThan(201);
    expect(r.headers.Location).toBe(`http://localhost:8080/fhir/Observation/${created.id}/_history/1`);
    expect(created.meta.versionId).toBe("1");
    expect(r.text).toContain('"x": 1.50');
    expect(Object.keys(created).slice(0, 3)).toEqual(["resourceType", "id", "meta"]);
    const found = body(service.handleSync({ method: "GET", path: "Observation?patient=S1000002&category=vital-signs" }, overlay).text);
    expect(found.entry.map((e: any) => e.resource.id)).toEqual([created.id]);
    // not in the base, not in another overlay
    expect(store.read("Observation", created.id)).toBeUndefined();
    expect(service.handleSync({ method: "GET", path: `Observation/${created.id}` }, store.newOverlay()).status).toBe(404);
  });

  it("updates (version bump, 200), creates by PUT (201) and deletes (200, then 410)", () => {
    const { service, store } = fixtureService();
    const overlay = store.newOverlay();
    const base = store.read("Observation", "101")!;
    const put = service.handleSync({ method: "PUT", path: "Observation/101", body: JSON.stringify({ ...base, status: "amended" }) }, overlay);
    expect(put.status).toBe(200);
    expect(body(put.text).meta.versionId).toBe("2");
    expect(overlay.read("Observation", "101")!.status).toBe("amended");
    expect(store.read("Observation", "101")!.status).toBe("final");
    const created = service.handleSync({ method: "PUT", path: "Observation/new-1", body: JSON.stringify(vital) }, overlay);
    expect(created.status).toBe(201);
    expect(service.handleSync({ method: "DELETE", path: "Observation/102" }, overlay).status).toBe(200);
    expect(service.handleSync({ method: "GET", path: "Observation/102" }, overlay).status).toBe(410);
    expect(service.handleSync({ method: "DELETE", path: "Observation/999999" }, overlay).status).toBe(404);
    expect(overlay.search("Observation", "patient=S1000001&code=K").resources.map((r) => r.id)).toEqual(["101", "105", "106"]);
    expect(overlay.search("Observation", "patient=S1000001&code=K&status=final").resources.map((r) => r.id)).toEqual(["105", "106"]);
  });

  it("rejects invalid writes with 400/422 OperationOutcomes", () => {
    const { service, store } = fixtureService();
    const overlay = store.newOverlay();
    const cases: [string, string | undefined, number][] = [
      ["Observation", "not json", 400],
      ["Observation", "[1,2]", 400],
      ["Observation", undefined, 400],
      ["Observation", JSON.stringify({ ...vital, resourceType: "Patient" }), 400],
      ["Observation", JSON.stringify({ ...vital, subject: undefined }), 422],
      ["Observation", JSON.stringify({ ...vital, status: "done" }), 422],
      ["MedicationRequest", JSON.stringify({ resourceType: "MedicationRequest", status: "active", subject: { reference: "Patient/S1" } }), 422],
      ["ServiceRequest", JSON.stringify({ resourceType: "ServiceRequest", status: "active", intent: "order", subject: { reference: "Patient/S1" }, authoredOn: "yesterday" }), 422],
    ];
    for (const [type, text, status] of cases) {
      const r = service.handleSync({ method: "POST", path: type, body: text }, overlay);
      expect(r.status, `${type} ${text}`).toBe(status);
      expect(body(r.text).resourceType).toBe("OperationOutcome");
    }
    expect(overlay.writes).toBe(0);
    const mismatch = service.handleSync({ method: "PUT", path: "Observation/101", body: JSON.stringify({ ...vital, id: "102" }) }, overlay);
    expect(mismatch.status).toBe(400);
  });
});
