import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { connectionErrorMessage, httpErrorMessage, prepareRequestsUrl, UrlRouter } from "../../env/protocol/index.ts";

// Recorded from the real requests 2.32 / urllib3 2.x by fixtures/make-requests-urls.py.
const cases = JSON.parse(readFileSync(new URL("./fixtures/requests-urls.json", import.meta.url), "utf8")) as {
  input: string;
  ok: boolean;
  url?: string;
  error?: string;
}[];

describe("requests URL preparation", () => {
  it.each(cases.map((c) => [JSON.stringify(c.input).slice(0, 80), c] as const))("%s", (_name, c) => {
    const got = prepareRequestsUrl(c.input);
    if (c.ok) {
      expect(got.ok).toBe(true);
      if (got.ok) expect(got.prepared.url).toBe(c.url);
    } else expect(got).toEqual({ ok: false, error: c.error });
  });

  it("formats HTTP errors like raise_for_status with HAPI's empty reason phrase", () => {
    expect(httpErrorMessage(400, "http://x/fhir/A")).toBe("400 Client Error:  for url: http://x/fhir/A");
    expect(httpErrorMessage(503, "http://x/fhir/A")).toBe("503 Server Error:  for url: http://x/fhir/A");
  });
});

describe("UrlRouter", () => {
  const router = new UrlRouter("http://localhost:8080/fhir/");

  it("maps URLs under the base to requests relative to it", () => {
    expect(router.route("http://localhost:8080/fhir/Observation?code=A1C&patient=S1&_format=json")).toEqual({
      ok: true,
      path: "Observation?code=A1C&patient=S1&_format=json",
      url: "http://localhost:8080/fhir/Observation?code=A1C&patient=S1&_format=json",
    });
    // Repeated slashes are collapsed by the servlet container; the reported URL keeps them.
    expect(router.route("http://localhost:8080/fhir//Patient?x=1")).toMatchObject({ ok: true, path: "Patient?x=1", url: "http://localhost:8080/fhir//Patient?x=1" });
    expect(router.route("HTTP://LocalHost:8080/fhir/Patient/S1&_format=json")).toMatchObject({ ok: true, path: "Patient/S1&_format=json" });
    expect(router.route("http://localhost:8080/fhir?x=1")).toMatchObject({ ok: true, path: "?x=1" });
  });

  it("never contacts another host: requests' connection error instead", () => {
    const r = router.route("http://example.com:9000/fhir/Patient?x=1&_format=json");
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toMatch(/^HTTPConnectionPool\(host='example.com', port=9000\): Max retries exceeded with url: \/fhir\/Patient\?x=1&_format=json \(Caused by NewConnectionError\(/);
      const p = prepareRequestsUrl("http://example.com:9000/fhir/Patient?x=1&_format=json");
      expect(p.ok && connectionErrorMessage(p.prepared)).toBe(r.error);
    }
    expect(router.route("http://localhost:8081/fhir/Patient").ok).toBe(false);
  });

  it("answers 404 for paths outside the FHIR base on the same server", () => {
    expect(router.route("http://localhost:8080/other/Patient?x=1")).toEqual({
      ok: false,
      status: 404,
      url: "http://localhost:8080/other/Patient?x=1",
      error: "404 Client Error:  for url: http://localhost:8080/other/Patient?x=1",
    });
  });

  it("reports malformed URLs with requests' message", () => {
    expect(router.route("&_format=json")).toEqual({ ok: false, error: "Invalid URL '&_format=json': No scheme supplied. Perhaps you meant https://&_format=json?" });
  });

  it("rejects an api_base without a trailing slash", () => {
    expect(() => new UrlRouter("http://localhost:8080/fhir")).toThrow(/must end with "\/"/);
  });
});
