// Bad input over HTTP: each gets the right 4xx with an OperationOutcome saying what is wrong,
// and the server keeps answering afterwards.
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FhirService, startFhirHttpServer, type FhirHttpServer } from "../../env/fhir/index.ts";
import { mrn } from "./fixture.ts";
import { loadStore, serveFixture, tempDir } from "./helpers.ts";
import { writeFixture } from "./fixture.ts";

interface Outcome {
  resourceType: string;
  issue: { severity: string; code: string; diagnostics: string }[];
}

describe("FHIR HTTP server: bad input", () => {
  const tmp = tempDir("errors");
  let server: FhirHttpServer;

  beforeAll(async () => {
    ({ server } = await serveFixture(tmp.dir, { patients: 5, observationsPerPatient: 4 }));
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  async function call(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; outcome: Outcome; contentType: string | null }> {
    const res = await fetch(server.url + path, { method, body, headers: { "Content-Type": "application/fhir+json", ...headers } });
    const text = await res.text();
    return { status: res.status, outcome: JSON.parse(text) as Outcome, contentType: res.headers.get("content-type") };
  }

  async function expectOutcome(method: string, path: string, body: string | undefined, status: number | RegExp, diagnostics: RegExp): Promise<void> {
    const r = await call(method, path, body);
    if (typeof status === "number") expect(r.status, `${method} ${path}`).toBe(status);
    else expect(String(r.status), `${method} ${path}`).toMatch(status);
    expect(r.contentType).toBe("application/fhir+json;charset=utf-8");
    expect(r.outcome.resourceType).toBe("OperationOutcome");
    expect(r.outcome.issue[0]!.severity).toBe("error");
    expect(r.outcome.issue[0]!.diagnostics, `${method} ${path}`).toMatch(diagnostics);
    // ...and the server still answers.
    const ok = await fetch(`${server.url}Patient/${mrn(0)}`);
    expect(ok.status).toBe(200);
    expect((await ok.json()).id).toBe(mrn(0));
  }

  const patient = (extra: Record<string, unknown> = {}) => JSON.stringify({ resourceType: "Patient", name: [{ family: "Doe", given: ["Jane"] }], ...extra });

  it("a body nested 5,000 deep -> 400 naming the nesting limit, and the server keeps answering", async () => {
    const deep = `{"resourceType":"Observation","status":"final","x":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    await expectOutcome("POST", "Observation", deep, 400, /nested deeper than 100 levels of objects and arrays \(the limit\)/);
    await expectOutcome("PUT", "Observation/1", deep, 400, /nested deeper than 100 levels/);
    expect((await fetch(server.url + "metadata")).status).toBe(200);
  });
  it("malformed URL (bad percent-encoding) -> 400", () => expectOutcome("GET", "Observation?code=%zz", undefined, 400, /Malformed URL.*%zz/));
  it("unknown search parameter -> 400 naming it and the valid ones", () =>
    expectOutcome("GET", `Observation?foo=bar&patient=${mrn(0)}`, undefined, 400, /foo[\s\S]*patient/));
  it("bad date -> 400 naming the value", () => expectOutcome("GET", `Observation?patient=${mrn(0)}&date=ge2023-13-45`, undefined, 400, /2023-13-45/));
  it("bad date prefix -> 400", () => expectOutcome("GET", `Observation?patient=${mrn(0)}&date=xx2023-01-01`, undefined, 400, /xx2023-01-01|prefix|date/i));
  it("_count out of range -> 400 naming _count", () => expectOutcome("GET", "Observation?_count=-5", undefined, 400, /_count/));
  it("_count not a number -> 400 naming _count", () => expectOutcome("GET", "Observation?_count=abc", undefined, 400, /_count/));
  it("unknown _getpages id -> 4xx", () =>
    expectOutcome("GET", "?_getpages=00000000-0000-0000-0000-000000000000&_getpagesoffset=20&_count=20", undefined, /^4\d\d$/, /00000000-0000-0000-0000-000000000000|page|search/i));
  it("non-JSON body -> 400", () => expectOutcome("POST", "Patient", "name=Jane+Doe", 400, /JSON/));
  it("JSON that is not an object -> 400", () => expectOutcome("POST", "Patient", "[1,2,3]", 400, /object/));
  it("empty body on POST -> 400", () => expectOutcome("POST", "Patient", "", 400, /empty/i));
  it("resourceType does not match the URL -> 400", () =>
    expectOutcome("POST", "Observation", patient(), 400, /Patient[\s\S]*Observation|Observation[\s\S]*Patient/));
  it("PUT without an id in the URL -> 400", () => expectOutcome("PUT", "Patient", patient(), 400, /PUT/));
  it("DELETE without an id in the URL -> 400", () => expectOutcome("DELETE", "Patient", undefined, 400, /DELETE/));
  it("PUT with a body id that differs from the URL -> 400", () =>
    expectOutcome("PUT", `Patient/${mrn(1)}`, patient({ id: "S0000000" }), 400, /S0000000|id/));
  it("unknown resource id -> 404", () => expectOutcome("GET", "Patient/S9999999", undefined, 404, /S9999999/));
  it("path outside the FHIR base -> 404", async () => {
    const res = await fetch(server.url.replace("/fhir/", "/elsewhere"));
    expect(res.status).toBe(404);
    expect(((await res.json()) as Outcome).issue[0]!.diagnostics).toMatch(/\/fhir\//);
  });
  it("unsupported method -> 405", async () => {
    const res = await fetch(`${server.url}Patient/${mrn(0)}`, { method: "PATCH", body: "[]" });
    expect(res.status).toBe(405);
    expect(((await res.json()) as Outcome).issue[0]!.diagnostics).toMatch(/PATCH/);
  });

  it("a request line that is not HTTP gets a 400 and the server stays up", async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = connect(server.port, "127.0.0.1", () => sock.write("THIS IS NOT HTTP\r\n\r\n"));
      let data = "";
      sock.on("data", (d) => (data += d.toString()));
      sock.on("end", () => resolve(data));
      sock.on("error", reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    expect(reply).toContain("OperationOutcome");
    expect((await fetch(`${server.url}Patient/${mrn(0)}`)).status).toBe(200);
  });
});

describe("FHIR HTTP server: body size cap", () => {
  const tmp = tempDir("cap");
  let server: FhirHttpServer;
  beforeAll(async () => {
    const store = await loadStore([writeFixture(tmp.dir, { patients: 2, observationsPerPatient: 1 })]);
    server = await startFhirHttpServer({ service: (baseUrl) => new FhirService(store, { baseUrl }), maxBodyBytes: 4096 });
  });
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it("answers an oversized body with 413 and keeps serving", async () => {
    const big = JSON.stringify({ resourceType: "Patient", text: { div: "x".repeat(10_000) } });
    const res = await fetch(`${server.url}Patient`, { method: "POST", body: big, headers: { "Content-Type": "application/fhir+json" } });
    expect(res.status).toBe(413);
    const outcome = (await res.json()) as Outcome;
    expect(outcome.resourceType).toBe("OperationOutcome");
    expect(outcome.issue[0]!.diagnostics).toMatch(/4096 bytes/);
    const small = await fetch(`${server.url}Patient`, {
      method: "POST",
      body: JSON.stringify({ resourceType: "Patient", name: [{ family: "Small" }] }),
      headers: { "Content-Type": "application/fhir+json" },
    });
    expect(small.status).toBe(201);
  });
});
