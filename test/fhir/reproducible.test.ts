// `reproducible`: the same requests in an episode give the same bytes, whatever ran before or beside
// them; by default Bundle ids are random and times are the clock's, as HAPI's.
import { describe, expect, it } from "vitest";
import { createFhirService, type FhirService, type Overlay } from "../../env/fhir/index.ts";
import { buildFixtureStore } from "./fixture.ts";

const OBSERVATION = JSON.stringify({ resourceType: "Observation", status: "final", code: { coding: [{ system: "http://loinc.org", code: "BP" }] }, subject: { reference: "Patient/S1000001" } });

/** One episode's requests: a paged search, its next page, a create and a search that finds it. */
function episode(service: FhirService, overlay: Overlay): string[] {
  const texts: string[] = [];
  const first = service.handleSync({ method: "GET", path: "Observation?patient=S1000001" }, overlay);
  texts.push(first.text);
  const next = (JSON.parse(first.text).link as { relation: string; url: string }[]).find((l) => l.relation === "next")!.url;
  texts.push(service.handleSync({ method: "GET", path: next }, overlay).text);
  const created = service.handleSync({ method: "POST", path: "Observation", body: OBSERVATION }, overlay);
  expect(created.status).toBe(201);
  texts.push(created.text, created.headers.Location!);
  texts.push(service.handleSync({ method: "GET", path: "Observation?code=BP&patient=S1000001" }, overlay).text);
  return texts;
}

describe("reproducible FHIR replies", () => {
  it("give one episode's requests the same bytes in another process, after and beside other episodes", () => {
    const store = buildFixtureStore();
    const a = createFhirService(store, { defaultCount: 3, reproducible: true });
    const alone = episode(a, store.newOverlay());

    // Another service (another process) where other episodes ran first and one stays open beside it.
    const other = buildFixtureStore();
    const b = createFhirService(other, { defaultCount: 3, reproducible: true });
    episode(b, other.newOverlay());
    const beside = other.newOverlay();
    b.handleSync({ method: "GET", path: "Observation?patient=S1000001" }, beside);
    const mine = other.newOverlay();
    expect(episode(b, mine)).toEqual(alone);

    // Paging ids repeat across episodes, and each episode still gets its own page.
    const bundle = JSON.parse(alone[0]!);
    expect(bundle.meta.lastUpdated).toBe("2023-11-13T10:15:00.000+00:00");
    expect(bundle.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const next = (bundle.link as { relation: string; url: string }[]).find((l) => l.relation === "next")!.url;
    const page = b.handleSync({ method: "GET", path: next }, beside);
    expect(page.status).toBe(200);
    expect(JSON.parse(page.text).entry.map((e: any) => e.resource.id)).toEqual(JSON.parse(alone[1]!).entry.map((e: any) => e.resource.id));
    expect(b.handleSync({ method: "GET", path: next }, store.newOverlay()).status).toBe(410);

    const created = JSON.parse(alone[2]!);
    expect(created.meta).toMatchObject({ versionId: "1", lastUpdated: "2023-11-13T10:15:00.000+00:00" });
    expect(created.meta.source).toMatch(/^#[A-Za-z0-9]{16}$/);
    expect(JSON.parse(alone[4]!).entry[0].resource.id).toBe(created.id);
  });

  it("can carry another fixed time", () => {
    const store = buildFixtureStore();
    const s = createFhirService(store, { reproducible: { time: "2024-01-02T03:04:05.000+00:00" } });
    const r = s.handleSync({ method: "GET", path: "Patient?family=Smith" }, store.newOverlay());
    expect(JSON.parse(r.text).meta.lastUpdated).toBe("2024-01-02T03:04:05.000+00:00");
  });

  it("are live by default: a fresh Bundle id per reply, created ids shared by the whole server", () => {
    const store = buildFixtureStore();
    const s = createFhirService(store, { defaultCount: 3 });
    const one = episode(s, store.newOverlay());
    const two = episode(s, store.newOverlay());
    expect(JSON.parse(two[0]!).id).not.toBe(JSON.parse(one[0]!).id);
    expect(JSON.parse(two[2]!).id).not.toBe(JSON.parse(one[2]!).id);
  });
});
