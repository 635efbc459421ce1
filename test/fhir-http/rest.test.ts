// REST round trips against the embedded server over real HTTP, driven by a third-party FHIR client.
import { Client, RESPONSE_KEY, type FhirResource } from "fhir-kit-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FHIR_CONTENT_TYPE, FhirService, RemoteFhir, startFhirHttpServer, type FhirHttpServer } from "../../env/fhir/index.ts";
import { mrn, writeFixture } from "./fixture.ts";
import { loadStore, serveFixture, tempDir } from "./helpers.ts";

type Bundle = FhirResource & { total?: number; entry?: { fullUrl: string; resource: FhirResource & { id: string } }[]; link: { relation: string; url: string }[] };
type Resource = FhirResource & { id: string; meta?: { versionId?: string }; valueString?: string };

describe("FHIR REST over HTTP (fhir-kit-client)", () => {
  const tmp = tempDir("rest");
  let server: FhirHttpServer;
  let client: Client;

  beforeAll(async () => {
    ({ server } = await serveFixture(tmp.dir, { patients: 30, observationsPerPatient: 12 }));
    client = new Client({ baseUrl: server.url });
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it("serves the CapabilityStatement at metadata with the FHIR content type", async () => {
    const cap = await client.capabilityStatement();
    expect(cap.resourceType).toBe("CapabilityStatement");
    const res = (cap as Record<string, unknown>)[RESPONSE_KEY] as Response;
    expect(res.headers.get("content-type")).toBe(FHIR_CONTENT_TYPE);
  });

  it("searches like the official harness does (patient + code, _format=json) with links on the served address", async () => {
    const patient = mrn(3);
    const bundle = (await client.search({ resourceType: "Observation", searchParams: { code: "A1C", patient, _format: "json" } })) as Bundle;
    expect(bundle.resourceType).toBe("Bundle");
    expect(bundle.total).toBe(3);
    expect(bundle.entry).toHaveLength(3);
    for (const e of bundle.entry!) {
      expect(e.fullUrl).toBe(`${server.url}Observation/${e.resource.id}`);
      expect((e.resource.subject as { reference: string }).reference).toBe(`Patient/${patient}`);
    }
    expect(bundle.link.find((l) => l.relation === "self")?.url.startsWith(`${server.url}Observation?_format=json&`)).toBe(true);
    // ascending id order without _sort
    const ids = bundle.entry!.map((e) => Number(e.resource.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it("keeps decimal lexemes (5.0 stays 5.0) in the reply text", async () => {
    const r = await new RemoteFhir(server.url).request({ method: "GET", path: `Observation?patient=${mrn(0)}&_count=100` });
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/"value": \d+\.\d,/);
  });

  it("reads a Patient by id and 404s an unknown one", async () => {
    const p = await client.read({ resourceType: "Patient", id: mrn(5) });
    expect(p.id).toBe(mrn(5));
    await expect(client.read({ resourceType: "Patient", id: "S9999999" })).rejects.toMatchObject({ response: { status: 404 } });
  });

  it("creates, reads back, updates and deletes a resource", async () => {
    const created = (await client.create({
      resourceType: "Observation",
      body: {
        resourceType: "Observation",
        status: "final",
        code: { coding: [{ system: "http://loinc.org", code: "BP" }], text: "BP" },
        subject: { reference: `Patient/${mrn(1)}` },
        effectiveDateTime: "2023-11-13T10:15:00+00:00",
        valueString: "118/77 mmHg",
      },
    })) as Resource;
    const res = (created as Record<string, unknown>)[RESPONSE_KEY] as Response;
    expect(res.status).toBe(201);
    expect(created.id).toMatch(/^\d+$/);
    expect(res.headers.get("location")).toMatch(new RegExp(`^${server.url.replace(/[.]/g, "\\.")}Observation/${created.id}(/_history/1)?$`));

    const read = (await client.read({ resourceType: "Observation", id: created.id })) as Resource;
    expect(read.valueString).toBe("118/77 mmHg");
    const found = (await client.search({ resourceType: "Observation", searchParams: { code: "BP", patient: mrn(1) } })) as Bundle;
    expect(found.total).toBe(1);

    const updated = (await client.update({ resourceType: "Observation", id: created.id, body: { ...read, valueString: "120/80 mmHg" } })) as Resource;
    expect(updated.valueString).toBe("120/80 mmHg");
    expect(updated.meta?.versionId).toBe("2");

    await client.delete({ resourceType: "Observation", id: created.id });
    const gone = (await client.search({ resourceType: "Observation", searchParams: { code: "BP", patient: mrn(1) } })) as Bundle;
    expect(gone.total ?? 0).toBe(0);
  });

  it("pages through a search by following next links", async () => {
    const seen: string[] = [];
    let page = (await client.search({ resourceType: "Observation", searchParams: { _count: 50 } })) as Bundle;
    const total = page.total!;
    expect(total).toBe(30 * 12);
    for (;;) {
      seen.push(...(page.entry ?? []).map((e) => e.resource.id));
      const next = client.nextPage({ bundle: page });
      if (!next) break;
      expect(page.link!.find((l) => l.relation === "next")!.url).toContain("_getpages=");
      page = (await next) as Bundle;
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);

    // RemoteFhir's pager sees the same resources in the same order.
    const viaRemote: string[] = [];
    for await (const r of new RemoteFhir(server.url).searchAll("Observation", "_count=50")) viaRemote.push(r.id!);
    expect(viaRemote).toEqual(seen);
  });

  it("answers many concurrent keep-alive requests correctly", async () => {
    const remote = new RemoteFhir(server.url);
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) => remote.request({ method: "GET", path: `Patient/${mrn(i % 30)}` })),
    );
    replies.forEach((r, i) => {
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text).id).toBe(mrn(i % 30));
    });
  });
});

describe("RemoteFhir against a server that names another host in its links", () => {
  const tmp = tempDir("rebase");
  let server: FhirHttpServer;

  beforeAll(async () => {
    // Like the official image behind a Docker port mapping: links say localhost:8080, we reach it elsewhere.
    const store = await loadStore([writeFixture(tmp.dir, { patients: 6, observationsPerPatient: 10 })]);
    server = await startFhirHttpServer({ service: new FhirService(store, { baseUrl: "http://localhost:8080/fhir/" }) });
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it("follows next links by rebasing them onto the address it was given", async () => {
    const remote = new RemoteFhir(server.url);
    let pages = 0;
    const ids: string[] = [];
    for await (const page of remote.pages("Observation?_count=7")) {
      pages++;
      for (const e of page.entry ?? []) ids.push(e.resource!.id!);
    }
    expect(pages).toBe(Math.ceil(60 / 7));
    expect(new Set(ids).size).toBe(60);
    expect(remote.relativize("http://localhost:8080/fhir/?_getpages=abc&_getpagesoffset=7")).toBe("?_getpages=abc&_getpagesoffset=7");
    // HAPI's own form: the base without its trailing slash
    expect(remote.relativize("http://localhost:8080/fhir?_getpages=abc&_count=500")).toBe("?_getpages=abc&_count=500");
    expect(remote.relativize(`${server.url}Patient/S1`)).toBe("Patient/S1");
  });

  it("returns HTTP error replies as responses and throws only from the JSON helpers", async () => {
    const remote = new RemoteFhir(server.url);
    const r = await remote.request({ method: "GET", path: "Patient/S0000404" });
    expect(r.status).toBe(404);
    expect(r.headers["Content-Type"]).toBe(FHIR_CONTENT_TYPE);
    await expect(remote.json("Patient/S0000404")).rejects.toMatchObject({ name: "RemoteFhirError", status: 404 });
    await expect(new RemoteFhir("http://127.0.0.1:1/fhir/", { retries: 0 }).request({ method: "GET", path: "metadata" })).rejects.toMatchObject({
      name: "RemoteFhirError",
      status: 0,
    });
  });
});
