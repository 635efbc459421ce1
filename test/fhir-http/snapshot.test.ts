// snapshot -> import -> export round trip against the project's own HTTP server, run as real CLI
// child processes, including a snapshot killed mid-way and resumed.
import { appendFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FhirService, RemoteFhir, SNAPSHOT_STATE_FILE, snapshotFhirServer, startFhirHttpServer, type FhirHttpServer } from "../../env/fhir/index.ts";
import { cli, collectOutput, loadStore, runCli, serveFixture, startCliServer, tempDir } from "./helpers.ts";
import { writeFixture } from "./fixture.ts";

function readDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) out[f] = readFileSync(join(dir, f), "utf8");
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

describe("ehrgym fhir snapshot / import / export (CLI child processes)", () => {
  const tmp = tempDir("snap-cli");
  let fixture: string;
  let server: Awaited<ReturnType<typeof startCliServer>>;
  const TYPES = "Patient,Observation,Condition";

  beforeAll(async () => {
    fixture = writeFixture(tmp.dir, { patients: 40, observationsPerPatient: 25 });
    server = await startCliServer(["--import", fixture]);
  });
  afterAll(async () => {
    await server?.stop();
    tmp.cleanup();
  });

  it("serve prints its URL and answers the harness probe", async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/fhir\/$/);
    const res = await fetch(`${server.url}metadata`);
    expect(res.status).toBe(200);
    expect((await res.json()).resourceType).toBe("CapabilityStatement");
  });

  it("a snapshot killed mid-way resumes to the same files as an uninterrupted one", async () => {
    const killed = join(tmp.dir, "snap-killed");
    const child = cli(["fhir", "snapshot", "--from", server.url, "--out", killed, "--types", TYPES, "--count", "2", "--no-progress"]);
    const exited = collectOutput(child);
    const statePath = join(killed, SNAPSHOT_STATE_FILE);
    let written = 0;
    // The 40 Patients come first: past them the snapshot is inside Observation, whose page file
    // is open (at exactly 40 it may sit between two types with no page file, a race under load).
    while (written <= 40) {
      await sleep(10);
      if (!existsSync(statePath)) continue;
      try {
        const state = JSON.parse(readFileSync(statePath, "utf8")) as { progress: Record<string, { written: number }> };
        written = Object.values(state.progress).reduce((n, t) => n + t.written, 0);
      } catch {
        /* caught mid-rename; poll again */
      }
    }
    child.kill("SIGKILL");
    const first = await exited;
    expect(first.signal).toBe("SIGKILL");
    const parts = readdirSync(killed).filter((f) => f.endsWith(".part"));
    expect(parts).toHaveLength(1);
    // A page that was being appended when the process died.
    appendFileSync(join(killed, parts[0]!), '{"resourceType":"Observation","id":"half-writ');

    const resumed = await runCli(["fhir", "snapshot", "--from", server.url, "--out", killed, "--types", TYPES, "--count", "2", "--no-progress"]);
    expect(resumed.stderr).toMatch(/complete \(resumed\)/);
    expect(resumed.code).toBe(0);

    const fresh = join(tmp.dir, "snap-fresh");
    const full = await runCli(["fhir", "snapshot", "--from", server.url, "--out", fresh, "--types", TYPES, "--count", "500"]);
    expect(full.code).toBe(0);
    expect(full.stderr).toMatch(/1,080 resources in 3 files/);

    const a = readDir(killed);
    const b = readDir(fresh);
    expect(Object.keys(a)).toEqual([SNAPSHOT_STATE_FILE, "Condition.ndjson", "Observation.ndjson", "Patient.ndjson"]);
    for (const f of ["Condition.ndjson", "Observation.ndjson", "Patient.ndjson"]) expect(a[f], f).toBe(b[f]);
    expect(a["Observation.ndjson"]!.split("\n").filter(Boolean)).toHaveLength(1000);

    // Re-running a finished snapshot does nothing.
    const again = await runCli(["fhir", "snapshot", "--from", server.url, "--out", fresh, "--types", TYPES, "--no-progress"]);
    expect(again.code).toBe(0);
    expect(readDir(fresh)).toEqual(b);
  });

  it("import of the snapshot gives the same byte-stable export as the original data", async () => {
    const snap = join(tmp.dir, "snap-fresh");
    const fromSnapshot = join(tmp.dir, "export-snap");
    const fromOriginal = join(tmp.dir, "export-orig");
    const reExport = join(tmp.dir, "export-again");
    const files = readdirSync(snap)
      .filter((f) => f.endsWith(".ndjson"))
      .map((f) => join(snap, f));
    const imp = await runCli(["fhir", "import", ...files, "--out", fromSnapshot]);
    expect(imp.stderr).toMatch(/exported 1,080 resources/);
    expect(imp.code).toBe(0);
    expect((await runCli(["fhir", "export", "--import", fixture, "--out", fromOriginal])).code).toBe(0);
    expect((await runCli(["fhir", "export", "--data", fromSnapshot, "--out", reExport])).code).toBe(0);

    const orig = readDir(fromOriginal);
    expect(Object.keys(orig).length).toBeGreaterThanOrEqual(3);
    expect(readDir(fromSnapshot)).toEqual(orig);
    expect(readDir(reExport)).toEqual(orig);
    // decimals survived HTTP + JSON round trips as written
    expect(Object.values(orig).join("")).toMatch(/"value":\d+\.0,/);
  });

  it("imports a searchset Bundle saved from the server (pretty JSON, as HAPI sends it)", async () => {
    const res = await fetch(`${server.url}Observation?code=A1C&_count=500`);
    const bundleFile = join(tmp.dir, "a1c-bundle.json");
    writeFileSync(bundleFile, await res.text());
    const out = join(tmp.dir, "export-bundle");
    const r = await runCli(["fhir", "import", bundleFile, "--out", out]);
    expect(r.code).toBe(0);
    const lines = readFileSync(join(out, "Observation.ndjson"), "utf8").split("\n").filter(Boolean);
    expect(lines).toHaveLength(40 * 7); // 25 labs per patient cycle through 4 codes: A1C at k = 0, 4, ..., 24
    const original = new Map(
      readFileSync(fixture, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => [JSON.parse(l).id as string, l]),
    );
    for (const l of lines) expect(l).toBe(original.get(JSON.parse(l).id));
  });

  it("refuses to overwrite a non-empty export folder and names the flag", async () => {
    const r = await runCli(["fhir", "export", "--import", fixture, "--out", join(tmp.dir, "export-orig")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--out: .*not empty/);
  });

  it("bad flags exit 2 with a message naming the flag and value", async () => {
    const badUrl = await runCli(["fhir", "snapshot", "--from", "not-a-url", "--out", join(tmp.dir, "x")]);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/--from:.*"not-a-url"/);
    const badPort = await runCli(["fhir", "serve", "--port", "70000", "--import", fixture]);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toMatch(/--port:.*"70000"/);
    const missing = await runCli(["fhir", "import", join(tmp.dir, "nope.ndjson"), "--out", join(tmp.dir, "y")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--import.*no such file.*nope\.ndjson/);
    const help = await runCli(["fhir", "snapshot", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--from <url>/);
  });
});

describe("snapshotFhirServer (in-process)", () => {
  const tmp = tempDir("snap-lib");
  let served: { server: FhirHttpServer };

  beforeAll(async () => {
    served = await serveFixture(tmp.dir, { patients: 10, observationsPerPatient: 8 });
  });
  afterAll(async () => {
    await served.server.close();
    tmp.cleanup();
  });

  it("takes the types from the CapabilityStatement and stops cleanly on abort, then resumes", async () => {
    const out = join(tmp.dir, "lib-snap");
    const abort = new AbortController();
    let pages = 0;
    const first = await snapshotFhirServer({
      from: served.server.url,
      out,
      count: 5,
      signal: abort.signal,
      onProgress: () => {
        if (++pages === 6) abort.abort();
      },
    });
    expect(first.interrupted).toBe(true);
    const second = await snapshotFhirServer({ from: served.server.url, out, count: 5 });
    expect(second.resumed).toBe(true);
    expect(second.interrupted).toBe(false);
    expect(second.counts).toMatchObject({ Patient: 10, Observation: 80, Condition: 10 });
    const lines = readFileSync(join(out, "Observation.ndjson"), "utf8").split("\n").filter(Boolean);
    expect(new Set(lines.map((l) => JSON.parse(l).id)).size).toBe(80);
    expect(readFileSync(join(out, "Patient.ndjson"), "utf8")).toBe(
      readFileSync(writeFixture(join(tmp.dir), { patients: 10, observationsPerPatient: 8 }), "utf8")
        .split("\n")
        .filter((l) => l.includes('"resourceType":"Patient"'))
        .map((l) => `${l}\n`)
        .join(""),
    );
  });

  it("resumes by searching again when the server has forgotten the paging session", async () => {
    const { dir } = { dir: join(tmp.dir, "forgetful") };
    const store = await loadStore([writeFixture(tmp.dir, { patients: 10, observationsPerPatient: 8 })]);
    // A page cache of one search: any other search evicts the snapshot's paging session.
    const seen: string[] = [];
    const forgetful = await startFhirHttpServer({
      service: (baseUrl) => {
        const service = new FhirService(store, { baseUrl, pageCacheSize: 1 });
        return { handle: (req) => (seen.push(req.path), service.handle(req)) };
      },
    });
    try {
      const abort = new AbortController();
      let pages = 0;
      const first = await snapshotFhirServer({
        from: forgetful.url,
        out: dir,
        types: ["Observation"],
        count: 6,
        signal: abort.signal,
        onProgress: () => {
          if (++pages === 4) abort.abort();
        },
      });
      expect(first.interrupted).toBe(true);
      const evict = await new RemoteFhir(forgetful.url).json<{ total?: number }>("Patient?_count=1");
      expect(evict.total).toBe(10);
      seen.length = 0;
      const second = await snapshotFhirServer({ from: forgetful.url, out: dir, types: ["Observation"], count: 6 });
      // the recorded next link failed, so it searched again from the start
      expect(seen[0]).toMatch(/^\?_getpages=/);
      expect(seen[1]).toBe("Observation?_count=6");
      expect(second.interrupted).toBe(false);
      expect(second.counts.Observation).toBe(80);
      const ids = readFileSync(join(dir, "Observation.ndjson"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => Number(JSON.parse(l).id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(80);
    } finally {
      await forgetful.close();
    }
  });

  it("refuses to resume into a folder that holds another server's snapshot", async () => {
    await expect(snapshotFhirServer({ from: "http://127.0.0.1:1/fhir/", out: join(tmp.dir, "lib-snap") })).rejects.toThrow(/holds a snapshot of/);
  });
});
